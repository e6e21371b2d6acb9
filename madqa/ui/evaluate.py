"""The Evaluate tab: a question set through one or more configs, scored with the MADQA metrics.

Runs go through the batch runner (``run_batch``) with a progress bar; the report is
``madqa.evaluation.report.evaluate`` (the official numbers plus ours), shown as a table and
three plots (accuracy against steps taken, the Kuiper cumulative-deviation curve, the error
decomposition). Predictions (JSONL) and the report (JSON) are offered for download; neither
holds an API key.
"""

from __future__ import annotations

import atexit
import json
import queue
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from madqa.errors import MadqaError
from madqa.evaluation.glossary import term
from madqa.evaluation.oracle import oracle_gap
from madqa.evaluation.questions import QuestionFileError, load_questions
from madqa.evaluation.report import (
    ERROR_CATEGORIES,
    TABLE_ROWS,
    evaluate,
    kuiper_curve_from_records,
    lookup,
    per_question,
)
from madqa.evaluation.runner import run_batch
from madqa.jsonl import dumps
from madqa.ui.collection_picker import build_picker
from madqa.ui.config_builder import build_config_builder, rebuilt, write_config_files
from madqa.ui.context import AppContext, internal_error, shown_error
from madqa.ui.messages import md_escape, plural, redact, shorten
from madqa.ui.model_access import config_choices, key_problem, picker_info
from madqa.ui.policy import visitor_row
from madqa.ui.score_rows import build_score_rows
from madqa.ui.sessions import shorten_name

MAX_EVAL_QUESTIONS = 1000
MAX_WORKERS = 8
QUESTION_COLUMNS = ["config", "id", "question", "answer", "ANLS*", "right", "steps", "error type"]


def cell(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    return "–" if value is None else value


def metrics_frame(results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per metric of ``TABLE_ROWS``, one column per config (the overall numbers)."""
    names = list(results)
    rows = []
    for label, path in TABLE_ROWS:
        name, why = plain_metric(label)
        rows.append([name, *(str(cell(lookup(results[n]["overall"], path))) for n in names), why])
    return pd.DataFrame(rows, columns=["metric", *names, "what it means"])  # the numbers first: never cut off


def plain_metric(label: str) -> tuple[str, str]:
    """A metric's name in plain words (no snake_case on screen) and its meaning with its scale,
    both from the one glossary the CLI report uses too."""
    entry = term(label)
    return entry.label, entry.explained()


# the headline scores, few enough that their glossary labels fit beside each other (the metrics table has the rest)
SCORE_KEYS = ("accuracy", "anls", "page_f1", "evidence_recall", "n_run_errors")


def scores_frame(results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The configs side by side: one row per config, one column per headline score (labels from the glossary)."""
    rows = [[name, *(str(cell(lookup(results[name]["overall"], key))) for key in SCORE_KEYS)] for name in results]
    return pd.DataFrame(rows, columns=["config", *(term(key).label for key in SCORE_KEYS)])


HEADLINES = (("Accuracy", "accuracy"), ("Page F1", "page_f1"), ("Evidence recall", "evidence_recall"))


def headline_cards(results: Mapping[str, Mapping[str, Any]]) -> str:
    """Three cards per config above the table, each with a one-line explanation (tooltip and text)."""
    import html

    parts = []
    for name in results:
        cards = "".join(
            f'<div class="eval-card" title="{html.escape(term(key).explained())}"><div class="eval-card-value">'
            f'{html.escape(str(cell(lookup(results[name]["overall"], key))))}</div>'
            f'<div class="eval-card-name">{html.escape(title)}</div>'
            f'<div class="eval-card-why">{html.escape(term(key).explained())}</div></div>' for title, key in HEADLINES)
        parts.append(f'<div class="eval-cards"><b>{html.escape(name)}</b>{cards}</div>')
    return "".join(parts)


def plots(records_by_config: Mapping[str, Sequence[Mapping[str, Any]]]) -> tuple[Any, ...]:
    """Data of the three plots (accuracy by steps taken, Kuiper curve, error decomposition) and
    notes on what a plot leaves out: the Kuiper curve is undefined when every answer is right
    (or every one wrong), so such a config gets a note instead of a flat line."""
    accuracy, kuiper, errors, notes = [], [], [], []
    for name, records in records_by_config.items():
        by_steps: dict[float, list[bool]] = {}
        for r in records:
            by_steps.setdefault(float(r["effort"]), []).append(bool(r["correct"]))
        for steps in sorted(by_steps):
            outcomes = by_steps[steps]
            accuracy.append({"config": name, "steps": steps, "accuracy": sum(outcomes) / len(outcomes),
                             "questions": len(outcomes)})
        outcomes = {bool(r["correct"]) for r in records}
        if len(outcomes) == 1:
            notes.append(f"{name}: no Kuiper curve, every answer was {'right' if True in outcomes else 'wrong'}")
        else:
            kuiper += [{"config": name, "k": p["k"], "deviation": p["deviation"], "steps": p["effort"]}
                       for p in kuiper_curve_from_records(records)]
        if not any(r["error_category"] for r in records):
            notes.append(f"{name}: no wrong answer to decompose")
        counts = Counter(r["error_category"] for r in records if r["error_category"])
        errors += [{"config": name, "category": c.replace("_", " "), "count": counts.get(c, 0)}  # plain words
                   for c in ERROR_CATEGORIES]
    return (pd.DataFrame(accuracy, columns=["config", "steps", "accuracy", "questions"]),
            pd.DataFrame(kuiper, columns=["config", "k", "deviation", "steps"]),
            pd.DataFrame(errors, columns=["config", "category", "count"]), notes)


def nothing_to_plot(kuiper: pd.DataFrame, errors: pd.DataFrame, notes: Sequence[str]) -> dict[str, str]:
    """A line per plot that would be drawn empty ({"kuiper"|"errors": "nothing to plot: ..."}), so it is not drawn."""
    out = {}
    if kuiper.empty:
        why = "; ".join(n for n in notes if "Kuiper" in n) or "no questions were scored"
        out["kuiper"] = f"Kuiper curve — nothing to plot: {why} (it needs both right and wrong answers)."
    if errors.empty or not errors["count"].any():
        out["errors"] = "Why answers were wrong — nothing to plot: no answer was wrong."
    return out


def step_ticks(steps: pd.Series) -> tuple[list[str], list[str]]:
    """Step counts as axis categories in numeric order, so the axis reads 1, 2, 8 (never 0.5 or 7.5)."""
    label = [f"{v:g}" for v in steps]
    return label, [f"{v:g}" for v in sorted(set(steps))]


def question_frame(rows_by_config: Mapping[str, Sequence[Mapping[str, Any]]],
                   records_by_config: Mapping[str, Sequence[Mapping[str, Any]]]) -> pd.DataFrame:
    table = []
    for name, records in records_by_config.items():
        rows = rows_by_config[name]
        for r in records:
            row = rows[r["index"]]
            failed = r["error_category"] == "failed"  # the run failed: no score, never "0.0, no"
            table.append([name, r["id"], r["question"], " | ".join(row.get("answer") or []),
                          None if failed else round(r["anls"], 3),
                          "failed" if failed else "yes" if r["correct"] else "no", r["effort"],
                          r["error_category"] or ""])
    frame = pd.DataFrame(table, columns=QUESTION_COLUMNS)
    return frame.sort_values(["id", "config"], kind="stable").reset_index(drop=True)


GAP_ROWS = (("questions in both runs", "n"), ("accuracy", "accuracy"), ("accuracy with the gold pages", "oracle_accuracy"),
            ("gap", "gap"), ("lost to retrieval (right with the gold pages only)", "lost_to_retrieval"),
            ("lost to reading (wrong even with them)", "lost_to_reading"), ("right both ways", "right_both"),
            ("right only without the oracle", "right_without_oracle_only"),
            ("share of errors: retrieval", "share_of_errors_retrieval"),
            ("share of errors: reading", "share_of_errors_reading"))


def gap_frame(gaps: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The oracle gap per config (``madqa.evaluation.oracle.oracle_gap``), one column each."""
    if not gaps:
        return pd.DataFrame(columns=["oracle gap"])
    rows = [[label, *(str(cell(gaps[n]["overall"][key])) for n in gaps)] for label, key in GAP_ROWS]
    return pd.DataFrame(rows, columns=["oracle gap", *gaps])


def scrub(rows: list[dict[str, Any]], secrets: Sequence[str]) -> list[dict[str, Any]]:
    """Rows with any secret that leaked into an error text replaced (rows go to a download)."""
    if not any(s and len(s) >= 6 for s in secrets):
        return rows
    return [json.loads(redact(json.dumps(r, ensure_ascii=False), secrets)) for r in rows]


class EvalFolders:
    """The ``madqa-eval-*`` download folders: Gradio copies a returned file into its own cache, so only the
    ``KEEP`` latest are kept (two evaluations run at once) and none once the server stops."""

    KEEP = 4

    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._lock = threading.Lock()
        self._folders: list[Path] = []

    def returned(self, folder: Path) -> None:
        """``folder``'s files are being returned; delete all but the ``KEEP`` latest folders."""
        with self._lock:
            self._folders.append(folder)
            old, self._folders = self._folders[:-self.keep], self._folders[-self.keep:]
        for path in old:
            shutil.rmtree(path, ignore_errors=True)

    def clear(self) -> None:
        with self._lock:
            old, self._folders = self._folders, []
        for path in old:
            shutil.rmtree(path, ignore_errors=True)


EVAL_FOLDERS = EvalFolders()
atexit.register(EVAL_FOLDERS.clear)


def build_evaluate_tab(ctx: AppContext) -> None:
    with gr.Accordion("Model access (this browser session only)", open=False, elem_id="eval-access"):
        api_key = gr.Textbox("", label="API key", type="password", elem_id="eval-api-key",
                             placeholder="uses the server's environment when empty")
        api_base = gr.Textbox("", label="api_base (OpenAI-compatible server)", elem_id="eval-api-base")
    with gr.Accordion("Build configs from the parts (retriever, reranker, query strategy, model, top_k…)", open=True,
                      elem_id="eval-builder"):
        builder = build_config_builder(ctx, "eval", api_key, api_base, EVAL_FOLDERS.returned)
    with gr.Row(equal_height=False):
        with gr.Column(scale=2):
            build_picker(ctx, "eval-collection")
            question_file = gr.File(label="Question set (JSONL or Parquet in MADQA format; empty: the collection's "
                                          "own question set)",
                                    file_types=[".jsonl", ".ndjson", ".parquet", ".pq"], elem_id="eval-file")
            names = gr.CheckboxGroup(config_choices(ctx.configs), value=[ctx.default_config] if ctx.default_config in
                                     ctx.configs else [], label="Configs to run", elem_id="eval-configs",
                                     info=picker_info(ctx.configs, "presets; the built configs above run too") or None)
            with gr.Row():
                limit = gr.Number(0, precision=0, minimum=0, label="Questions (0 = all)", elem_id="eval-limit")
                workers = gr.Slider(1, MAX_WORKERS, value=2, step=1, label="Questions at once")
            oracle = gr.Checkbox(False, label="Also run with the oracle (each question's gold pages as its first "
                                 "search result): the oracle gap, lost to retrieval vs lost to reading",
                                 elem_id="eval-oracle")
            run_btn = gr.Button("Run evaluation", variant="primary", elem_id="eval-run")
            status = gr.Markdown(elem_id="eval-status")
            predictions_file = gr.File(label="Predictions (JSONL)", interactive=False, height=90)
            report_file = gr.File(label="Report (JSON)", interactive=False, height=90)
            build_score_rows(ctx, question_file, metrics_frame)  # steered rows, prediction files (ui.score_rows)
        with gr.Column(scale=3):
            scores = gr.DataFrame(pd.DataFrame(columns=["config"]), label="Scores side by side (one row per config)",
                                  interactive=False, wrap=True, elem_id="eval-scores",
                                  column_widths=["33%", "13%", "15%", "13%", "13%", "13%"])  # ANLS*: its label is the longest
            cards = gr.HTML(elem_id="eval-cards")
            metrics = gr.DataFrame(pd.DataFrame(columns=["metric"]), label="Metrics (official MADQA numbers, then ours)", interactive=False,
                                   elem_id="eval-metrics", max_height=420, wrap=True)
            accuracy_plot = gr.ScatterPlot(x="steps", y="accuracy", color="config", y_lim=[0, 1.05], height=260,
                                           title="Accuracy by steps taken",  # short: a title wider than a phone squeezes the plot
                                           tooltip=["config", "steps", "accuracy", "questions"])
            kuiper_plot = gr.LinePlot(x="k", y="deviation", color="config", height=260,
                                      title="Kuiper cumulative deviation")  # by effort; short, as above
            error_plot = gr.BarPlot(x="category", y="count", color="config", title="Why answers were wrong",
                                    height=260, y_axis_format="d")
            nothing = gr.Markdown(visible=False, elem_id="eval-nothing-to-plot")  # instead of an empty frame
    gap_table = gr.DataFrame(pd.DataFrame(columns=["oracle gap"]), label="Oracle gap (with the oracle checkbox)",
                             interactive=False, elem_id="eval-gap", visible=False)  # drawn only when there is one
    per_question_table = gr.DataFrame(pd.DataFrame(columns=QUESTION_COLUMNS), label="Per question",
                                      column_widths=["12%", "8%", "38%", "14%", "7%", "6%", "6%", "9%"], interactive=False, wrap=True, max_height=420)

    def run(question_file: str | None, configs: list[str] | None, built_configs: Any, limit: float | None,
            workers: float, api_key: str, api_base: str, oracle: bool, session: Any, request: gr.Request,
            progress: gr.Progress = gr.Progress()) -> tuple[Any, ...]:  # noqa: B008 - how Gradio injects a progress bar
        built = rebuilt(ctx, built_configs)  # the browser's table is not trusted: every row is checked again
        with ctx.job_slot(session, request) as keys:
            return evaluate_for(question_file, configs, built, limit, workers, api_key, api_base, bool(oracle), session,
                                keys, progress)

    def evaluate_for(question_file: str | None, configs: list[str] | None, built: list[Any], limit: float | None,
                     workers: float, api_key: str, api_base: str, oracle: bool, session: Any, keys: list[str],
                     progress: Any) -> tuple[Any, ...]:
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
        picked = [ctx.configs[n] for n in configs or [] if n in ctx.configs]
        picked += [c for c in built if c.name not in {p.name for p in picked}]  # a built preset runs once
        if not picked:
            raise shown_error("Pick at least one config, or build one above.")
        n = min(int(limit or 0) or len(questions), len(questions), MAX_EVAL_QUESTIONS)
        questions = questions[:n]
        try:
            options_by_config = {}
            for config in picked:
                if config.name in ctx.configs:
                    ctx.policy.check_config(config, config)  # built ones were checked against their preset
                options_by_config[config.name] = ctx.policy.backend_options(config, api_key, api_base)
            keyless = {c.name: p for c in picked if (p := key_problem(c, options_by_config[c.name]))}
            picked = [c for c in picked if c.name not in keyless]  # a keyless run is not scored 0.0: it is not run
            if not picked:
                raise shown_error("Not run: " + " ".join(keyless.values()))
            on_server_key = [c for c in picked if ctx.policy.spends_server_key(c, options_by_config[c.name])]
            if ctx.limits is not None and on_server_key:  # nothing left today: not started only to stop at once
                ctx.limits.refuse_if_spent(keys)
        except MadqaError as exc:
            raise shown_error(f"Settings: {exc}") from None
        secrets = [(api_key or "").strip()]
        progress(0, desc="waiting for the corpus")
        corpus = ctx.corpus_or_error(session)
        corpus_key = ctx.sessions.key_of(session)
        where = {"demo": "the demo corpus", "mine": "your uploads"}.get(corpus_key, f"the collection {corpus_key}")
        documents = {str(getattr(d, "name", d)) for d in getattr(corpus, "documents", []) or []}
        wanted = {str(e.get("document")) for q in questions for e in (q.get("evidence") or []) if isinstance(e, dict)}
        missing_docs = sorted(wanted - documents) if documents and wanted else []
        runs = [(config, False) for config in picked] + ([(config, True) for config in picked] if oracle else [])
        total, done = len(questions) * len(runs), 0
        rows_by_config: dict[str, list[dict[str, Any]]] = {}
        oracle_rows: dict[str, list[dict[str, Any]]] = {}
        broken: dict[str, str] = {}  # configs whose run could not start (a part cannot be built): name -> why
        started = time.perf_counter()
        for config, seeded in runs:
            finished: queue.Queue[Any] = queue.Queue()
            outcome: dict[str, Any] = {}

            options = options_by_config[config.name]
            runnable = ctx.bounded(config, corpus_key, corpus)  # a session's large upload: BM25 for dense
            # the visitor's day on the server's keys, shared by every question: spent, each is forced to answer
            budgets = ctx.budgets(keys, config, options)

            def work(config: Any = runnable, finished: queue.Queue[Any] = finished,
                     outcome: dict[str, Any] = outcome, options: dict[str, Any] = options,
                     seeded: bool = seeded, budgets: list[Any] = budgets) -> None:
                try:
                    outcome["rows"] = run_batch(questions, corpus, config, ctx.registry, ctx.settings,
                                                workers=max(1, min(int(workers or 1), MAX_WORKERS)),
                                                on_row=lambda row, q: finished.put(q), backend_options=options,
                                                oracle=seeded, budget=budgets)
                except Exception as exc:  # MadqaError (a component cannot be built) or a bug: report it
                    outcome["error"] = exc
                finally:
                    finished.put(None)

            thread = threading.Thread(target=work, name="madqa-evaluate", daemon=True)
            thread.start()
            while (item := finished.get()) is not None:
                done += 1
                progress((done, total), desc=f"{config.name}{' (oracle)' if seeded else ''}: {item.get('id')}",
                         unit="questions")
            thread.join()
            if "error" in outcome:  # this config could not run at all: said so, never scored; the others stand
                failure = outcome["error"]
                what = str(failure) if isinstance(failure, MadqaError) else internal_error(failure, "evaluate")
                broken[config.name + (" (oracle)" if seeded else "")] = redact(what, secrets)
                continue
            rows = [visitor_row(row, options) for row in outcome["rows"]]
            (oracle_rows if seeded else rows_by_config)[config.name] = scrub(rows, secrets)
        if not rows_by_config and not oracle_rows:
            raise shown_error(" ".join(f"{name}: {what}" for name, what in broken.items()))
        picked = [c for c in picked if c.name in rows_by_config or c.name in oracle_rows]
        gaps = {name: oracle_gap(rows_by_config[name], rows, questions) for name, rows in oracle_rows.items()
                if name in rows_by_config}
        rows_by_config.update({f"{name} (oracle)": rows for name, rows in oracle_rows.items()})
        results = {name: evaluate(rows, questions) for name, rows in rows_by_config.items()}
        records = {name: per_question(rows, questions) for name, rows in rows_by_config.items()}
        folder = Path(tempfile.mkdtemp(prefix="madqa-eval-"))
        predictions = folder / "predictions.jsonl"
        predictions.write_text("".join(dumps(r) + "\n"
                                       for rows in rows_by_config.values() for r in rows), encoding="utf-8")
        report = folder / "report.json"
        report.write_text(json.dumps({
            "question_set": label, "questions": len(questions), "corpus": corpus.name,
            "configs": {c.name: c.to_dict() for c in picked}, "results": results, "oracle_gap": gaps,
        }, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
        gold = sum(1 for q in questions if q.get("answer_variants"))
        text = (f"Ran {plural(len(questions), 'question')} of **{md_escape(label)}** through "
                f"{plural(len(picked), 'config')} on "
                f"**{where}** in {time.perf_counter() - started:.1f}s.")
        for name, problem in broken.items():
            text += f"  \n⚠ **{md_escape(name)}: not run, it could not start.** {md_escape(problem)}"
        for name, problem in keyless.items():
            text += f"  \n⚠ **{md_escape(name)}: not run, needs a key.** {md_escape(problem)}"
        if missing_docs:
            text += (f"  \n⚠ {plural(len(missing_docs), 'evidence file')} of these questions are not in {where} (e.g. "
                     f"{md_escape(missing_docs[0])}): their answers cannot be found here, so low scores say "
                     "nothing about the configs.")
        if gold < len(questions):
            text += f"  \n⚠ Only {gold} of {len(questions)} questions have gold answers; the others score 0."
        if problems:
            text += f"  \n{plural(len(problems), 'row')} of the file left out, e.g. {md_escape(shorten(problems[0], 300))}"
        accuracy, kuiper, errors, notes = plots(records)
        if notes:
            text += "  \n" + "; ".join(md_escape(n) for n in notes) + "."
        steps, order = step_ticks(accuracy["steps"])
        accuracy_update = gr.ScatterPlot(accuracy.assign(steps=steps), sort=order)
        empty = nothing_to_plot(kuiper, errors, notes)
        EVAL_FOLDERS.returned(folder)
        files = write_config_files(picked, EVAL_FOLDERS.returned)
        return (text, headline_cards(results), metrics_frame(results), accuracy_update,
                gr.LinePlot(kuiper, visible="kuiper" not in empty), gr.BarPlot(errors, visible="errors" not in empty),
                question_frame(rows_by_config, records), str(predictions), str(report),
                gr.DataFrame(gap_frame(gaps), visible=bool(gaps)),
                gr.Markdown("  \n".join(md_escape(line) for line in empty.values()), visible=bool(empty)), files,
                scores_frame(results))  # the last two added after the others: the API's result order stays

    run_btn.click(run, [question_file, names, builder.table, limit, workers, api_key, api_base, oracle, ctx.session],
                  [status, cards, metrics, accuracy_plot, kuiper_plot, error_plot, per_question_table, predictions_file,
                   report_file, gap_table, nothing, builder.files, scores], api_name="evaluate", concurrency_limit=2,
                  show_progress_on=[metrics])  # one progress bar, not one over every output
