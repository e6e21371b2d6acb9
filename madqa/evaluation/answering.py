"""One question answered into its prediction row, locally or on a cluster worker (``run_jobs``).

Its own module so that the runner and the cluster jobs both import it at module level: the row is made
the same way wherever the question runs, and neither imports the other.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from madqa.agent import Agent
from madqa.budget import Budget
from madqa.conversation import ChatTurn
from madqa.errors import ScopeError
from madqa.evaluation.conversations import conversation_fields
from madqa.settings import PipelineConfig
from madqa.trace import Trace
from madqa.types import Hit


def question_problem(item: Any) -> str | None:
    """Why ``item`` cannot be asked (it came from the Python API unchecked), or None when it can."""
    if not isinstance(item, dict):
        return f"a question must be a dict with 'question', got {type(item).__name__}"
    text = item.get("question")
    if not isinstance(text, str) or not text.strip():
        return "the question has no 'question' text"
    return None


def oracle_hits(question: dict[str, Any]) -> tuple[Hit, ...]:
    """The gold evidence pages of a question as hits (gold order, duplicates dropped)."""
    pages: list[tuple[str, int]] = []
    for ev in question.get("evidence") or []:
        file, page = (ev.get("document"), ev.get("page")) if isinstance(ev, dict) else (None, None)
        if isinstance(file, str) and isinstance(page, int) and (file, page) not in pages:
            pages.append((file, page))
    return tuple(Hit(file, page, 1.0, "gold evidence page") for file, page in pages)


def answer_question(question: Any, config: PipelineConfig, agent: Callable[[], Agent],
                    oracle: bool = False, budget: Sequence[Budget] = (),
                    conversation: Sequence[ChatTurn] = ()) -> dict[str, Any]:
    """The prediction row of one question; a bad question or a bug becomes an error row, never a raise.

    ``oracle``: its first search returns its gold evidence pages (``oracle_hits``); ``budget``: the
    run's budgets, charged beside the question's own; ``conversation``: the turns before it when it is
    a turn of a multi-turn set (the row then carries ``conversation_id`` and ``turn``). A question's
    ``scope`` (file names) limits its searches to those files; the row then carries it."""
    row = _answer(question, config, agent, oracle, budget, conversation)
    scope = question.get("scope") if isinstance(question, dict) else None
    return {**row, **conversation_fields(question), **({"scope": list(scope)} if scope else {})}


def _answer(question: Any, config: PipelineConfig, agent: Callable[[], Agent], oracle: bool,
            budget: Sequence[Budget], conversation: Sequence[ChatTurn]) -> dict[str, Any]:
    problem = question_problem(question)
    if problem is not None:  # an error row says so; the other questions still run
        known = question if isinstance(question, dict) else {}
        row = Trace(str(known.get("question") or ""), config, known.get("id")).row()
        row["error"] = f"input: {problem}"
        return row
    trace = Trace(str(question["question"]), config, question.get("id"))
    seeded = oracle_hits(question) if oracle else None
    if oracle and not seeded:
        row = trace.row()
        row.update(oracle=True, error="input: the question has no gold evidence pages for the oracle")
        return row
    try:
        trace.consume(agent().run(trace.question, first_hits=seeded, budget=budget, conversation=conversation,
                                  scope=question.get("scope") or ()))
        return {**trace.row(), "oracle": True} if oracle else trace.row()
    except ScopeError as exc:  # a scope naming a file the corpus does not hold: the question's own fault
        row = trace.row()
        row["error"] = f"input: scope: {exc}"
        return row
    except Exception as exc:  # a bug on one question must not sink a long run; resume retries it
        row = trace.row()
        row["error"] = f"internal: {type(exc).__name__}: {exc}"
        print(f"madqa: question {question.get('id')!r} failed: {row['error']}", file=sys.stderr)
        return row
