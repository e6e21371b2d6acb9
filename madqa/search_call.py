"""One search of the agent: the query strategy, the retriever (within a scope), the reranker, the new pages.

Both search tools run it (``search_documents`` over the question's scope, ``search_in`` within one
document of it); it records the search in the question's ``SearchState`` and returns the ``SearchStep``,
the text-only tool result, and the pages to show.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from madqa.context import ShownPage
from madqa.context import query_terms as _query_terms
from madqa.errors import MadqaError, SearchError
from madqa.protocols import QueryStrategy, Reranker, Retriever, reranker_candidates
from madqa.scope import combine, parse_scope, search_scoped
from madqa.types import Hit, PageRef, SearchStep, Usage

if TYPE_CHECKING:
    from madqa.contract import Corpus, SearchState

SEEDED_NOTE = "oracle: these are the gold evidence pages, given instead of a search"


class PluginBug(Exception):
    """A plugin raised something other than madqa's own errors: the question ends as an error row."""

    def __init__(self, where: str, error: BaseException) -> None:
        super().__init__(where)
        self.where, self.error = where, error


@dataclass
class SearchPipeline:
    """The config's search parts for one corpus."""

    corpus: Corpus
    retriever: Retriever
    reranker: Reranker
    strategy: QueryStrategy
    top_k: int

    def run(self, iteration: int, written: Any, state: SearchState,
            display: Callable[[PageRef, tuple[str, ...]], ShownPage], files: Collection[str] | None = None,
            tool: str = "search_documents") -> tuple[SearchStep, str, list[ShownPage]]:
        """Search for ``written`` (as the model wrote it) within the question's scope and ``files``; raises
        PluginBug when a plugin raised something other than a madqa error."""
        started = time.perf_counter()
        if not isinstance(written, str) or not written.strip():
            step = SearchStep(iteration, str(written or ""), "", (), (), error="no query given", tool=tool)
            return step, f"Error: {tool} needs a non-empty 'query' string.", []
        executed, strategy_note, retriever_note, error = written, None, None, None
        hits: tuple[Hit, ...] = ()
        spent: Any = None
        if state.seeded is not None and not state.queries:
            hits, retriever_note = state.seeded, SEEDED_NOTE
        else:
            where = "query strategy"
            try:
                # the query's file:NAME terms are the scope, not words to match (ScopeError: an observation)
                scoped = parse_scope(written, self.corpus.documents)
                named = scoped.files if files is None else tuple(f for f in (scoped.files or files) if f in files)
                if files is not None and not named:
                    raise SearchError(f"the query's file: terms name no file of {', '.join(sorted(files))}")
                within = combine(state.scope, named)
                if not scoped.query:
                    raise SearchError("the query has only file: terms; add the words to search for in the file")
                # (query, note), or (query, note, spent) when the strategy called a model of its own:
                # ``spent`` has ``usage`` and ``cost_usd`` (a ModelDecision does), counted in the run's totals
                executed, strategy_note, *extra = self.strategy.rewrite(scoped.query or written, state)
                spent = extra[0] if extra else None
                # a reranker may ask to see more candidates than are shown (its ``candidates`` attribute)
                depth = max(self.top_k, reranker_candidates(self.reranker))
                where = "retriever"
                result = search_scoped(self.retriever, executed, depth, within)
                retriever_note = result.note
                where = "reranker"
                hits = tuple(self.reranker.rerank(state.question, executed, list(result.hits)))[: self.top_k]
            except MadqaError as exc:  # a plugin's own failure (a bad query, a timeout) is an observation
                error = _describe(exc)
            except Exception as exc:  # a bug: the question ends as an error row, with the traceback
                raise PluginBug(where, exc) from exc
        again = _normal(executed) in {_normal(q) for q in state.queries}  # the same search: show its pages again
        new = tuple(dict.fromkeys(h.ref for h in hits if again or h.ref not in state.seen))
        terms = _query_terms(executed)
        displayed: list[ShownPage] = []
        for ref in new:
            try:
                displayed.append(display(ref, terms))
            except (MadqaError, OSError) as exc:  # a page that cannot be drawn is an observation; a bug raises
                error = (error + "; " if error else "") + f"{ref.label()} could not be shown: {_describe(exc)}"
        shown = [p.ref for p in displayed if p.ref not in state.seen]
        for page in displayed:
            state.terms.setdefault(page.ref, terms)
        state.seen.update(shown)
        state.written.append(written)
        state.queries.append(executed)
        state.hits.append(hits)
        state.new_page_counts.append(len(shown))
        step = SearchStep(iteration, written, executed, hits, tuple(shown), strategy_note, retriever_note, error,
                          time.perf_counter() - started, usage=getattr(spent, "usage", None) or Usage(),
                          cost_usd=getattr(spent, "cost_usd", None), tool=tool)
        return step, tool_text(step, [p.ref for p in displayed]), displayed


def _normal(query: str) -> str:
    return " ".join(query.lower().split())


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, MadqaError) else f"{type(exc).__name__}: {exc}"


def tool_text(step: SearchStep, displayed: list[PageRef]) -> str:
    """The text-only tool result of a search; the pages follow in a user message."""
    lines = []
    if step.error:
        lines.append(f"Error: {step.error}")
    if step.executed_query != step.query:
        lines.append(f"The query was run as: {step.executed_query}")
    if step.retriever_note:
        lines.append(f"Note: {step.retriever_note}")
    already = [h.ref.label() for h in step.hits if h.ref not in displayed]
    again = [ref for ref in displayed if ref not in step.new_pages]
    if displayed:
        lines.append(f"Found {len(step.hits)} pages; {len(step.new_pages)} new"
                     + (f", {len(again)} shown again" if again else "") + ", shown below:")
    else:
        lines.append(f"Found {len(step.hits)} pages; none new.")
    lines += [f"- {ref.label()}" for ref in displayed]
    if already:
        lines.append("Already shown earlier (not repeated; see their excerpts, or call show_pages): "
                     + "; ".join(already))
    return "\n".join(lines)
