"""What one run of the Evaluate tab does, apart from Gradio: a question set through configs, a typed result.

``run_evaluation`` loads the questions, checks every config and its model access, runs each through the batch
runner (``run_batch``, in a thread, with progress per question), scores the rows (``madqa.evaluation.report``) and
writes the downloads; an ``Evaluation`` holds it all. The Evaluate tab's handler only puts it onto its components.
"""

from __future__ import annotations

import json
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from madqa.errors import MadqaError
from madqa.evaluation.oracle import oracle_gap
from madqa.evaluation.questions import QuestionFileError, load_questions
from madqa.evaluation.report import evaluate, per_question
from madqa.evaluation.runner import run_batch
from madqa.jsonl import dumps
from madqa.settings import PipelineConfig
from madqa.ui.config_builder import write_config_files
from madqa.ui.context import AppContext, internal_error, shown_error
from madqa.ui.eval_plots import PlotData, failed_runs, is_score, nothing_to_plot, plots
from madqa.ui.messages import md_escape, plural, redact, shorten
from madqa.ui.model_access import key_problem
from madqa.ui.policy import shown_config, visitor_row
from madqa.ui.sessions import shorten_name

MAX_EVAL_QUESTIONS = 1000
MAX_WORKERS = 8
Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class EvalRequest:
    """What the Evaluate tab hands over: the question file (None: the collection's own), the configs and access."""

    question_file: str | None
    configs: Sequence[str]  # names of presets ticked
    built: Sequence[PipelineConfig]  # configs built in the table, already checked (``config_builder.rebuilt``)
    session: Any
    keys: list[str] | None = None  # the visitor's budget keys (``AppContext.job_slot``)
    limit: int = 0  # questions (0: all, at most MAX_EVAL_QUESTIONS)
    workers: int = 1  # questions at once (1..MAX_WORKERS)
    api_key: str = ""
    api_base: str = ""
    oracle: bool = False  # also run each config with the gold pages as its first search result


@dataclass(frozen=True)
class QuestionSet:
    label: str  # the set as the status names it: a file name, "demo questions", "the X question set"
    questions: list[dict[str, Any]]
    problems: list[str]  # rows of the file left out, and why


@dataclass(frozen=True)
class Access:
    """The configs that may run and their backend options; the ones left out for want of a key, and why."""

    picked: list[PipelineConfig]
    options: dict[str, dict[str, Any]]
    keyless: dict[str, str]


@dataclass(frozen=True)
class Evaluation:
    """A finished evaluation: the status line, the scores and rows per config, the files written."""

    text: str  # Markdown: what ran, on what, and every warning (not run, missing evidence, no gold answers)
    results: dict[str, dict[str, Any]]  # config (or "<config> (oracle)") -> ``evaluate`` report
    records: dict[str, list[dict[str, Any]]]  # config -> ``per_question`` records
    rows: dict[str, Rows]  # config -> the prediction rows, as downloaded
    gaps: dict[str, dict[str, Any]]  # config -> ``oracle_gap`` (with the oracle only)
    predictions: Path  # the rows as JSONL
    report: Path  # the report as JSON
    config_files: list[str]  # the configs that ran, a TOML file each
    plots: PlotData  # the three plots' data
    empty: dict[str, str]  # plots not drawn ("kuiper", "errors") -> why there is nothing to plot


def question_set(ctx: AppContext, question_file: str | None, session: Any) -> QuestionSet:
    """The uploaded question file, or the collection's own set; gr.Error when there is none or nothing usable."""
    if question_file:
        label = shorten_name(Path(question_file).name)
        try:
            questions, problems = load_questions(question_file, unique_ids=True)
        except QuestionFileError as exc:
            raise shown_error(f"{label}: {exc}") from None
    else:
        key = ctx.sessions.key_of(session)
        label = "demo questions" if key == "demo" else f"the {key} question set"
        questions, problems = list(ctx.session_questions(session)), []
        if not questions:
            raise shown_error(f"The collection {key!r} has no question set of its own: upload one.")
    if not questions:
        raise shown_error(f"{label}: no usable questions" + (f" ({problems[0]})" if problems else ""))
    return QuestionSet(label, questions, problems)


def checked_access(ctx: AppContext, request: EvalRequest) -> Access:
    """The presets ticked and the configs built (a built one named as a preset runs once), each checked by the web
    policy; one with no key is left out (not scored 0.0: not run). gr.Error when nothing may run, or the visitor's
    day on the server's keys is spent (not started only to stop at once)."""
    picked = [ctx.configs[n] for n in request.configs or [] if n in ctx.configs]
    picked += [c for c in request.built if c.name not in {p.name for p in picked}]
    if not picked:
        raise shown_error("Pick at least one config, or build one above.")
    try:
        options = {}
        for config in picked:
            if config.name in ctx.configs:
                ctx.policy.check_config(config, config)  # built ones were checked against their preset
            options[config.name] = ctx.policy.backend_options(config, request.api_key, request.api_base)
        keyless = {c.name: p for c in picked if (p := key_problem(c, options[c.name]))}
        picked = [c for c in picked if c.name not in keyless]
        if not picked:
            raise shown_error("Not run: " + " ".join(keyless.values()))
        on_server_key = [c for c in picked if ctx.policy.spends_server_key(c, options[c.name])]
        if ctx.limits is not None and on_server_key:
            ctx.limits.refuse_if_spent(request.keys or [])
    except MadqaError as exc:
        raise shown_error(f"Settings: {exc}") from None
    return Access(picked, options, keyless)


def missing_documents(corpus: Any, questions: Sequence[dict[str, Any]]) -> list[str]:
    """The evidence files the questions name that the corpus lacks (none when either side names none)."""
    documents = {str(getattr(d, "name", d)) for d in getattr(corpus, "documents", []) or []}
    wanted = {str(e.get("document")) for q in questions for e in (q.get("evidence") or []) if isinstance(e, dict)}
    return sorted(wanted - documents) if documents and wanted else []


def run_config(ctx: AppContext, questions: list[dict[str, Any]], corpus: Any, config: PipelineConfig,
               options: dict[str, Any], workers: int, on_row: Callable[[dict[str, Any]], None], oracle: bool = False,
               budgets: Sequence[Any] = ()) -> Rows:
    """``run_batch`` in its own thread, ``on_row`` called here (in the caller's thread) as each question finishes.
    Raises what the run raised: MadqaError when a part cannot be built, anything else is a bug."""
    finished: queue.Queue[Any] = queue.Queue()
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["rows"] = run_batch(questions, corpus, config, ctx.registry, ctx.settings, workers=workers,
                                        on_row=lambda row, q: finished.put(q), backend_options=options,
                                        oracle=oracle, budget=list(budgets))
        except Exception as exc:  # MadqaError (a component cannot be built) or a bug: raised in the caller's thread
            outcome["error"] = exc
        finally:
            finished.put(None)

    thread = threading.Thread(target=work, name="madqa-evaluate", daemon=True)
    thread.start()
    while (item := finished.get()) is not None:
        on_row(item)
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return list(outcome["rows"])


def scrub(rows: Rows, secrets: Sequence[str]) -> Rows:
    """Rows with any secret that leaked into an error text replaced (rows go to a download)."""
    if not any(s and len(s) >= 6 for s in secrets):
        return rows
    return [json.loads(redact(json.dumps(r, ensure_ascii=False), secrets)) for r in rows]


@dataclass(frozen=True)
class Runs:
    """Every config's rows (its oracle run's apart), and the runs that could not start: name -> why."""

    rows: dict[str, Rows]
    oracle: dict[str, Rows]
    broken: dict[str, str]


def run_all(ctx: AppContext, request: EvalRequest, access: Access, questions: list[dict[str, Any]], corpus: Any,
            progress: Callable[..., Any]) -> Runs:
    """Each config over the questions (then each with the oracle, when asked); a config that cannot start is said
    so, never scored, and the others stand. gr.Error when none ran."""
    corpus_key = ctx.sessions.key_of(request.session)
    secrets = [(request.api_key or "").strip()]
    runs = [(c, False) for c in access.picked] + ([(c, True) for c in access.picked] if request.oracle else [])
    total, done = len(questions) * len(runs), [0]
    result = Runs({}, {}, {})
    for config, seeded in runs:
        options = access.options[config.name]
        label = f"{config.name}{' (oracle)' if seeded else ''}"

        def on_row(question: dict[str, Any], label: str = label) -> None:
            done[0] += 1
            progress((done[0], total), desc=f"{label}: {question.get('id')}", unit="questions")

        runnable = ctx.bounded(config, corpus_key, corpus)  # a session's large upload: BM25 for dense
        # the visitor's day on the server's keys, shared by every question: spent, each is forced to answer
        budgets = ctx.budgets(request.keys, config, options)
        try:
            rows = run_config(ctx, questions, corpus, runnable, options,
                              max(1, min(int(request.workers or 1), MAX_WORKERS)), on_row, seeded, budgets)
        except Exception as failure:  # this config could not run at all: said so, never scored; the others stand
            what = str(failure) if isinstance(failure, MadqaError) else internal_error(failure, "evaluate")
            result.broken[label] = redact(what, secrets)
            continue
        (result.oracle if seeded else result.rows)[config.name] = scrub([visitor_row(r, options) for r in rows],
                                                                      secrets)
    if not result.rows and not result.oracle:
        raise shown_error(" ".join(f"{name}: {what}" for name, what in result.broken.items()))
    return result


def run_evaluation(ctx: AppContext, request: EvalRequest, progress: Callable[..., Any],
                   kept: Callable[[Path], None]) -> Evaluation:
    """The whole run: questions, access, every config's rows, their scores, the downloads (their folders handed to
    ``kept``, which deletes old ones). gr.Error for what stops it before any config ran."""
    asked = question_set(ctx, request.question_file, request.session)
    access = checked_access(ctx, request)
    n = min(int(request.limit or 0) or len(asked.questions), len(asked.questions), MAX_EVAL_QUESTIONS)
    questions = asked.questions[:n]
    progress(0, desc="waiting for the corpus")
    corpus = ctx.corpus_or_error(request.session)
    started = time.perf_counter()
    runs = run_all(ctx, request, access, questions, corpus, progress)
    picked = [c for c in access.picked if c.name in runs.rows or c.name in runs.oracle]
    gaps = {name: oracle_gap(runs.rows[name], rows, questions) for name, rows in runs.oracle.items()
            if name in runs.rows}
    rows_by_config = {**runs.rows, **{f"{name} (oracle)": rows for name, rows in runs.oracle.items()}}
    results = {name: evaluate(rows, questions) for name, rows in rows_by_config.items()}
    records = {name: per_question(rows, questions) for name, rows in rows_by_config.items()}
    folder = Path(tempfile.mkdtemp(prefix="madqa-eval-"))
    predictions = folder / "predictions.jsonl"
    predictions.write_text("".join(dumps(r) + "\n" for rows in rows_by_config.values() for r in rows),
                           encoding="utf-8")
    report = folder / "report.json"
    report.write_text(json.dumps({
        "question_set": asked.label, "questions": len(questions), "corpus": corpus.name,
        "configs": {c.name: shown_config(c) for c in picked}, "results": {n: reported(r) for n, r in results.items()}, "oracle_gap": gaps,
    }, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    where = {"demo": "the demo corpus", "mine": "your uploads"}.get(ctx.sessions.key_of(request.session),
                                                                    f"the collection {ctx.sessions.key_of(request.session)}")
    text = (f"Ran {plural(len(questions), 'question')} of **{md_escape(asked.label)}** through "
            f"{plural(len(picked), 'config')} on **{where}** in {time.perf_counter() - started:.1f}s.")
    text += warnings(runs.broken, access.keyless, missing_documents(corpus, questions), where, questions,
                     asked.problems)
    drawn = plots(records)
    if drawn.notes:
        text += "  \n" + "; ".join(md_escape(n) for n in drawn.notes) + "."
    kept(folder)
    return Evaluation(text, results, records, rows_by_config, gaps, predictions, report,
                      write_config_files(picked, kept), drawn, nothing_to_plot(drawn.kuiper, drawn.errors, drawn.notes))


def reported(result: dict[str, Any]) -> dict[str, Any]:
    """A config's result as the downloaded report holds it: when runs failed, "failed (N of M)" in place of every
    overall score and under ``failed`` (never a score counting failures as wrong answers)."""
    failed = failed_runs(result)
    if not failed:
        return result
    overall = {k: failed if is_score(k) else v for k, v in result["overall"].items()}
    return {**result, "failed": failed, "overall": overall}


def warnings(broken: dict[str, str], keyless: dict[str, str], missing_docs: list[str], where: str,
             questions: Sequence[dict[str, Any]], problems: Sequence[str]) -> str:
    """The status's warnings, a line each: configs not run (could not start, no key), evidence files the collection
    lacks, questions without gold answers, rows of the file left out."""
    text = ""
    for name, problem in broken.items():
        text += f"  \n⚠ **{md_escape(name)}: not run, it could not start.** {md_escape(problem)}"
    for name, problem in keyless.items():
        text += f"  \n⚠ **{md_escape(name)}: not run, needs a key.** {md_escape(problem)}"
    if missing_docs:
        text += (f"  \n⚠ {plural(len(missing_docs), 'evidence file')} of these questions are not in {where} (e.g. "
                 f"{md_escape(missing_docs[0])}): their answers cannot be found here, so low scores say "
                 "nothing about the configs.")
    gold = sum(1 for q in questions if q.get("answer_variants"))
    if gold < len(questions):
        text += f"  \n⚠ Only {gold} of {len(questions)} questions have gold answers; the others score 0."
    if problems:
        text += f"  \n{plural(len(problems), 'row')} of the file left out, e.g. {md_escape(shorten(problems[0], 300))}"
    return text
