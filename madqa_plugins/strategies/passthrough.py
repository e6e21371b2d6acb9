"""Query strategy ``passthrough`` and reranker ``none``: change nothing."""

from __future__ import annotations

from typing import Any

import madqa


class Passthrough:
    """The query exactly as the model wrote it."""

    def rewrite(self, query: str, state: Any) -> tuple[str, str | None]:
        return query, None


class NoReranker:
    """The retriever's order, untouched."""

    def rerank(self, question: str, query: str, hits: list[madqa.Hit]) -> list[madqa.Hit]:
        return hits


@madqa.hookimpl(trylast=True)
def register_query_strategies(register: madqa.Register) -> None:
    register("passthrough", lambda host, options: Passthrough(), "the query as the model wrote it", takes_host=True)


@madqa.hookimpl(trylast=True)
def register_rerankers(register: madqa.Register) -> None:
    register("none", lambda host, options: NoReranker(), "keep the retriever's order", takes_host=True)
