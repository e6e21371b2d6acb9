"""Batch runs: a question set through one config, rows flushed as they finish, resumable.

The output file only ever grows by whole lines; ``resume`` first rewrites it (atomically)
without error rows and any torn last line, then runs what is missing, so a killed run resumes
with every question answered exactly once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from madqa.agent import Agent
from madqa.budget import Budget
from madqa.conversation import ChatTurn
from madqa.errors import ClusterError
from madqa.evaluation.answering import answer_question
from madqa.evaluation.conversations import Unit, conversation_units, turns_after
from madqa.evaluation.metrics import anls_star, is_correct
from madqa.evaluation.questions import read_jsonl
from madqa.evaluation.run_jobs import run_on_cluster
from madqa.jsonl import dumps
from madqa.settings import PipelineConfig, Settings

OnRow = Callable[[dict[str, Any], dict[str, Any]], None]  # (row, question)


def question_key(item: dict[str, Any]) -> str:
    """How a row is matched to its question for resuming: the id, else the question text."""
    if not isinstance(item, dict):
        return "q:" + str(item).strip()
    return str(item.get("id") or "") or "q:" + str(item.get("question", "")).strip()


def read_done(path: Path) -> tuple[list[dict[str, Any]], int, int]:
    """Rows already answered without error; returns (rows, error rows dropped, torn lines dropped)."""
    kept: dict[str, dict[str, Any]] = {}
    errors = torn = 0
    if not path.exists():
        return [], 0, 0
    # line by line from bytes: a line cut short by a kill (even inside a UTF-8 character) is one problem
    rows, problems = read_jsonl(path, budgeted=False)  # its own rows: never refused
    torn = len(problems)
    for _, row in rows:
        if row.get("error"):
            errors += 1
        else:
            kept[question_key(row)] = row  # a later duplicate replaces an earlier one
    return list(kept.values()), errors, torn


def _rewrite(path: Path, rows: list[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def run_batch(
    questions: Sequence[dict[str, Any]],
    corpus: Any,
    config: PipelineConfig,
    registry: Any,
    settings: Settings,
    *,
    out_path: str | Path | None = None,
    workers: int = 1,
    resume: bool = False,
    limit: int | None = None,
    on_row: OnRow | None = None,
    backend_options: dict[str, Any] | None = None,
    executor: Any = None,
    oracle: bool = False,
    budget: Budget | Sequence[Budget] | None = None,
) -> list[dict[str, Any]]:
    """Answer every question (skipping answered ones when resuming); returns all rows of the run.

    Rows are appended to ``out_path`` as each question finishes, by this process alone, also when
    an ``executor`` (``madqa.cluster``) answers the questions on its workers. An unexpected
    exception on one question becomes an error row (retried by ``resume``) instead of ending the run.
    ``oracle``: the first search of each question returns its gold evidence pages (the paper's
    oracle condition); such rows carry ``"oracle": true``. Not with an ``executor`` yet.
    ``budget``: what the whole run may spend on models (``madqa.budget``; a web visitor's day on the
    server's keys), shared by every question; once spent, each question is forced to answer (or,
    with nothing left, ends with no call made). Not with an ``executor``: workers cannot share it.
    Questions sharing a ``conversation_id`` run in ``turn`` order as one conversation
    (``evaluation.conversations``), each turn its own row; a resumed run rebuilds it from the kept rows.
    Not with an ``executor`` yet. A config whose parts cannot be built raises its MadqaError before
    ``out_path`` is written or rewritten.
    """
    shared = [budget] if isinstance(budget, Budget) else list(budget or ())
    questions = list(questions)[:limit] if limit else list(questions)
    _check_run(questions, workers, executor, oracle, shared)
    # a part that cannot be built (an unknown backend or model, a bad option) is the run's error, raised
    # before the output file is touched: as one error row per question it filled the file with failures
    # and left nothing run (a cluster's workers build their own agents)
    first = Agent(corpus, config, registry, settings, backend_options) if executor is None else None
    path = Path(out_path) if out_path else None
    done = _start_output(path, questions, resume)
    run = _BatchRun(questions, done, first, lambda: Agent(corpus, config, registry, settings, backend_options),
                    config, oracle, shared, path, on_row)
    if executor is not None:
        for question, row in run_on_cluster(executor, run.todo, corpus, config, settings, backend_options):
            run.record(row, question)
    elif workers == 1:
        for unit in run.units:
            run.answer_unit(unit)
    else:
        answer_in_threads(run.units, run.answer_unit, workers)
    return run.rows


def _check_run(questions: list[dict[str, Any]], workers: int, executor: Any, oracle: bool,
               shared: list[Budget]) -> None:
    """Refuse a run that cannot be done as asked (ValueError, ClusterError), before any work."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    if oracle and executor is not None:
        raise ClusterError("the oracle condition (--oracle) does not run on a cluster yet: run it without --cluster")
    if executor is not None and any(b.limited for b in shared):
        raise ClusterError("a run budget cannot be shared by a cluster's workers: run it without --cluster")
    if executor is not None and any(isinstance(q, dict) and q.get("conversation_id") is not None
                                    for q in questions):
        raise ClusterError("a multi-turn question set (conversation_id) does not run on a cluster yet: "
                           "run it without --cluster")


def _start_output(path: Path | None, questions: list[dict[str, Any]], resume: bool) -> list[dict[str, Any]]:
    """The rows a resumed run keeps (answered without error, of these questions); the output file rewritten
    to hold just them (empty when not resuming)."""
    done: list[dict[str, Any]] = []
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if resume:
            done, _, _ = read_done(path)
            wanted = {question_key(q) for q in questions}
            done = [r for r in done if question_key(r) in wanted]
            _rewrite(path, done)
        else:
            _rewrite(path, [])
    return done


class _BatchRun:
    """One run's questions still to answer, its rows (kept and new) and each thread's agent; rows are
    appended to the output file under one lock, by this process alone."""

    def __init__(self, questions: list[dict[str, Any]], done: list[dict[str, Any]], first: Agent | None,
                 new_agent: Callable[[], Agent], config: PipelineConfig, oracle: bool, shared: list[Budget],
                 path: Path | None, on_row: OnRow | None) -> None:
        self.finished = {question_key(r): r for r in done}
        self.todo = [q for q in questions if question_key(q) not in self.finished]
        self.units = [u for u in conversation_units(questions) if any(question_key(q) not in self.finished for q in u)]
        self.rows = list(done)
        self._local = threading.local()
        self._local.agent = first  # this thread's (a run of one worker answers here)
        self._new_agent = new_agent
        self._config, self._oracle, self._shared = config, oracle, shared
        self._path, self._on_row = path, on_row
        self._write_lock = threading.Lock()

    def agent(self) -> Agent:
        """This thread's agent, built on its first question."""
        if getattr(self._local, "agent", None) is None:
            self._local.agent = self._new_agent()
        agent: Agent = self._local.agent
        return agent

    def answer_unit(self, unit: Unit) -> None:
        """Each question of ``unit`` answered and recorded in order, the turns before it as its conversation."""
        turns: tuple[ChatTurn, ...] = ()
        for question in unit:
            row = self.finished.get(question_key(question))
            if row is None:
                row = answer_question(question, self._config, self.agent, self._oracle, self._shared,
                                      turns if len(unit) > 1 else ())
                self.record(row, question)
            if len(unit) > 1:
                turns = turns_after(turns, question, row)

    def record(self, row: dict[str, Any], question: dict[str, Any]) -> None:
        """Append ``row`` to the output file and the run's rows, and tell ``on_row``."""
        with self._write_lock:
            if self._path is not None:
                with open(self._path, "a", encoding="utf-8") as f:
                    f.write(dumps(row) + "\n")
            self.rows.append(row)
            if self._on_row:
                self._on_row(row, question)


def answer_in_threads(units: Sequence[Unit], answer_unit: Callable[[Unit], None], workers: int) -> None:
    """``answer_unit`` over ``units`` on ``workers`` threads; a bug in one raises here once the others stop.

    The threads are daemons and an interruption (Ctrl-C) stops them taking new questions and returns at once:
    a thread pool waited for every model call under way, up to its timeout and retries (82 s measured with
    three workers on a server that hung), and kept writing rows after the interruption. A call cut short
    writes no row, so ``resume`` asks it again; a row half-written is dropped by ``resume``."""
    pending = list(units)
    lock = threading.Lock()
    stop = threading.Event()
    bugs: list[BaseException] = []

    def work() -> None:
        while not stop.is_set():
            with lock:
                if not pending:
                    return
                unit = pending.pop(0)
            try:
                answer_unit(unit)  # answer_question turns a failure into an error row; a bug here raises
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                bugs.append(exc)
                stop.set()

    threads = [threading.Thread(target=work, name=f"madqa-run-{n}", daemon=True)
               for n in range(min(workers, len(pending)))]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.25)
    finally:
        stop.set()  # also on KeyboardInterrupt: no question starts after it
    if bugs:
        raise bugs[0]


def score_row(row: dict[str, Any], question: dict[str, Any], unanswerable: bool = False) -> bool | None:
    """Whether a row is right (ANLS* >= 0.5) when the question has gold answers, else None; with
    ``unanswerable``, False for a question without gold answers, as ``madqa eval`` and the official
    harness count it (ANLS* 0)."""
    variants = question.get("answer_variants") if isinstance(question, dict) else None
    if not variants:
        return False if unanswerable else None
    return is_correct(anls_star(row.get("answer"), variants))
