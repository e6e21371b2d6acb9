"""A finished question's steps, serialised as a prediction row in the official MADQA format.

Official fields: question, id, answer, citations, search_history, iterations, model.
Ours beside them: config, backend, answer_always_present (the closed world of the benchmark, or not), refusal,
closest_passages (a refusal's nearest pages and lines, never scored), trajectory, usage, cost_usd, latency_s, error, flags, quote_check,
answer_check (each answer item found on its cited page, on another page seen, in another scale, or nowhere),
and a ``quote`` inside each citation that has one (the official harness reads only file and page).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from madqa.jsonl import clean_text
from madqa.settings import PipelineConfig
from madqa.types import AnswerStep, ErrorStep, ModelStep, SearchStep, Step, Usage


@dataclass
class Trace:
    """Collects the steps of one question as they stream by; ``row()`` once it has answered."""

    question: str
    config: PipelineConfig
    id: str | None = None
    steps: list[Step] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    finished: float | None = None

    def __post_init__(self) -> None:
        self.question = clean_text(str(self.question))  # as the agent reads it (madqa.jsonl)

    def follow(self, steps: Iterable[Step]) -> Iterator[Step]:
        """Pass ``steps`` through, recording each one (the CLI and UI read the same stream)."""
        for step in steps:
            self.steps.append(step)
            yield step
        self.finished = time.perf_counter()

    def consume(self, steps: Iterable[Step]) -> Trace:
        for _ in self.follow(steps):
            pass
        return self

    @property
    def answer(self) -> AnswerStep | None:
        return next((s for s in reversed(self.steps) if isinstance(s, AnswerStep)), None)

    @property
    def searches(self) -> list[SearchStep]:
        return [s for s in self.steps if isinstance(s, SearchStep)]

    @property
    def usage(self) -> Usage:
        total = Usage()
        for s in self.steps:
            if isinstance(s, (ModelStep, SearchStep)):
                total = total + s.usage
        return total

    @property
    def cost_usd(self) -> float | None:
        """The agent model's cost plus that of any model a plugin called (None when one is unknown)."""
        costs = [s.cost_usd for s in self.steps if isinstance(s, ModelStep)]
        costs += [s.cost_usd for s in self.steps
                  if isinstance(s, SearchStep) and (s.usage.total_tokens or s.cost_usd is not None)]
        known = [c for c in costs if c is not None]
        return None if not costs or len(known) < len(costs) else round(sum(known), 8)

    @property
    def iterations(self) -> int:
        return max((s.iteration for s in self.steps), default=0)

    def row(self) -> dict[str, Any]:
        """The prediction row (a superset of the official MADQA format)."""
        answer = self.answer
        errors = [s for s in self.steps if isinstance(s, ErrorStep)]
        fatal = next((e for e in errors if e.where == "backend"), None)
        failure = answer.failure if answer else None
        return {
            "id": self.id,
            "question": self.question,
            "answer": list(answer.answer) if answer else [],
            "citations": citation_rows(answer) if answer else [],
            "search_history": [
                {"iteration": s.iteration, "query": s.executed_query or s.query, "num_results": len(s.hits)}
                for s in self.searches
            ],
            "iterations": self.iterations,
            "model": self.config.model,
            "config": self.config.name,
            "backend": self.config.backend,
            "answer_always_present": self.config.answer_always_present,
            "refusal": bool(answer.refusal) if answer else False,
            "closest_passages": [p.to_dict() for p in answer.closest_passages] if answer else [],
            "flags": list(answer.flags) if answer else [],
            "quote_check": quote_check(answer),
            "answer_check": answer_check(answer),
            "trajectory": [s.to_dict() for s in self.steps],
            "usage": self.usage.to_dict(),
            "cost_usd": self.cost_usd,
            "latency_s": round((self.finished or time.perf_counter()) - self.started, 4),
            "error": failure or (f"{fatal.where}: {fatal.message}" if fatal else None),
        }


def citation_rows(answer: AnswerStep) -> list[dict[str, Any]]:
    """The official ``{file, page}`` citations, each with its supporting ``quote`` when one was given."""
    rows = []
    for n, c in enumerate(answer.citations):
        row: dict[str, Any] = {"file": c.file, "page": c.page}
        quote = answer.quote_of(n)
        if quote is not None:
            row["quote"] = quote
        rows.append(row)
    return rows


def answer_check(answer: AnswerStep | None) -> dict[str, Any]:
    """Whether the answer is written on the pages (``madqa.verification``): ``verified`` (every item on a page
    seen; None: no answer, or not checked) and each item's verdict and page."""
    checks = answer.checks if answer else ()
    return {"verified": answer.verified if answer else None, "items": [c.to_dict() for c in checks]}


def quote_check(answer: AnswerStep | None) -> dict[str, int]:
    """How many citations carry a quote and how many of those were found on the cited page."""
    found = list(answer.quotes_found) if answer else []
    cited = len(answer.citations) if answer else 0
    return {"citations": cited, "quotes": sum(1 for f in found if f is not None),
            "verified": sum(1 for f in found if f)}
