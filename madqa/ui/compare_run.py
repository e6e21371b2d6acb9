"""What one question of the Compare tab does, apart from Gradio: two configs at once, their updates typed.

Each side runs in its own thread; their steps come through one queue as they happen, so both panes stream together
(``compare_question`` yields a ``CompareUpdate`` per batch of steps). Once both have finished, the last update holds
the summary table. The Compare tab's handler only puts an update onto its two chats and the table.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from madqa.errors import MadqaError
from madqa.settings import PipelineConfig
from madqa.trace import Trace
from madqa.ui.ask_run import run_steps
from madqa.ui.compare_summary import summary_rows
from madqa.ui.config_panel import describe
from madqa.ui.context import AppContext, internal_error
from madqa.ui.messages import Message, StepChat, md_escape, pending_message, trace_message, user_message
from madqa.ui.model_access import key_problem
from madqa.ui.model_bar import answerer

SIDES = ("A", "B")


@dataclass(frozen=True)
class CompareQuestion:
    """One question for both sides: its text, the gold question it was picked as (if any) and each side's config."""

    text: str
    configs: dict[str, tuple[PipelineConfig, dict[str, Any]]]  # side -> (config, backend options)
    session: Any
    keys: list[str] | None = None  # the visitor's budget keys (``AppContext.job_slot``)
    gold: dict[str, Any] | None = None  # the question-set entry, with its gold answers


@dataclass(frozen=True)
class CompareUpdate:
    """What the Compare tab shows after a batch of steps: each side's chat, and the summary once both are done."""

    chats: dict[str, list[Message]]  # side -> every message of its pane
    # the side-by-side rows (``compare_summary.summary_rows``), at the end only; columns "", "A: <config>", "B: ..."
    summary: pd.DataFrame | None = None


def gold_for(ctx: AppContext, question_id: str | None, text: str, session: Any) -> dict[str, Any] | None:
    """The question-set entry ``question_id`` when the question is still its text; None once it was edited after
    picking it (no gold answer applies then)."""
    gold = ctx.question(question_id, session)
    return None if gold is not None and gold["question"].strip() != text else gold


@dataclass
class Side:
    """One side while it runs: its trace, its chat, the spinner under it, and whether it still runs."""

    name: str
    trace: Trace
    chat: StepChat
    problem: str  # why its model cannot be reached ('' when it can): it is not run
    pending: Message | None
    running: bool = True
    messages: list[Message] = field(default_factory=list)

    def take(self, item: Any) -> None:
        """One item of the queue: a step, a status line, a failure, or None (the run is over)."""
        if item is None:
            self.pending = None
            self.running = False
        elif isinstance(item, BaseException):
            self.chat.problem(str(item) if isinstance(item, MadqaError) else internal_error(item, "compare"))
        elif isinstance(item, str):
            self.pending = pending_message("Waiting for the demo corpus", item)
        else:
            self.pending = self.chat.add(item)

    def pane(self, started: float) -> list[Message]:
        """The side's chat as it stands: the question, the trace line with its thoughts, the answer after."""
        steps = self.trace.steps
        if not steps and not self.pending:
            return self.messages + self.chat.after
        summary = trace_message(self.chat.trace_id, steps, time.perf_counter() - started, not self.running)
        now = [self.pending | {"metadata": {**self.pending["metadata"], "parent_id": self.chat.trace_id}}] \
            if self.pending else []
        return [*self.messages, summary, *self.chat.thoughts, *now, *self.chat.after]

    def row(self) -> dict[str, Any]:
        """The side's prediction row, with why it has no steps ("did not run", "not run: needs an API key")."""
        row = self.trace.row()
        if row["error"] is None and not self.trace.steps:
            row["error"] = "did not run"
        if self.problem:
            row["error"] = "not run: needs an API key"
        return row


def start_side(ctx: AppContext, name: str, question: CompareQuestion, corpus_key: str) -> Side:
    config, options = question.configs[name]
    chat = StepChat(f"trace-{name}", corpus_key, config.backend, config.model, [options.get("api_key", "")],
                    hint=False, label=answerer(ctx.registry, config.backend, config.model))
    problem = key_problem(config, options) or ""
    if problem:  # said up front in its pane, not as "did not find an answer"
        chat.unreachable(problem)
    gold_id = question.gold["id"] if question.gold else None
    return Side(name, Trace(question.text, config, gold_id), chat, problem,
                pending_message("Starting", md_escape(describe(config))), messages=[user_message(question.text)])


def compare_question(ctx: AppContext, question: CompareQuestion) -> Iterator[CompareUpdate]:
    """The Compare tab's updates while both sides answer ``question``: one at the start, one per batch of steps
    that arrived together, and a last one with the summary (scored when ``gold`` has gold answers)."""
    corpus_key = ctx.sessions.key_of(question.session)
    sides = {name: start_side(ctx, name, question, corpus_key) for name in SIDES}
    started = time.perf_counter()
    inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
    stop = threading.Event()

    def work(side: Side) -> None:
        if side.problem:
            inbox.put((side.name, None))
            return
        config, options = question.configs[side.name]
        try:
            for item in run_steps(ctx, question.session, corpus_key, config, options, question.text, side.trace,
                                  question.keys):
                if stop.is_set():
                    return
                inbox.put((side.name, item))
        except Exception as exc:  # a MadqaError is expected; anything else is shown, not swallowed
            inbox.put((side.name, exc))
        finally:
            inbox.put((side.name, None))

    def update() -> CompareUpdate:
        return CompareUpdate({name: side.pane(started) for name, side in sides.items()})

    threads = [threading.Thread(target=work, args=(side,), name=f"madqa-compare-{side.name}", daemon=True)
               for side in sides.values()]
    yield update()
    for thread in threads:
        thread.start()
    try:
        while any(side.running for side in sides.values()):
            name, item = inbox.get()
            sides[name].take(item)
            while True:  # coalesce whatever else has arrived into one update
                try:
                    name, item = inbox.get_nowait()
                except queue.Empty:
                    break
                sides[name].take(item)
            yield update()
        table = summary_rows([side.row() for side in sides.values()], question.gold)
        headers = ["", *(f"{name}: {question.configs[name][0].name}" for name in SIDES)]
        yield CompareUpdate(update().chats, pd.DataFrame(table, columns=headers))
    finally:
        stop.set()
