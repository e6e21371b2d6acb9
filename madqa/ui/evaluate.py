"""The Evaluate tab: a question set through one or more configs, scored with the MADQA metrics.

Runs go through the batch runner (``run_batch``) with a progress bar; the report is
``madqa.evaluation.report.evaluate`` (the official numbers plus ours), shown as a table and
three plots (accuracy against steps taken, the Kuiper cumulative-deviation curve, the error
decomposition). Predictions (JSONL) and the report (JSON) are offered for download; neither
holds an API key. The run itself is ``ui.evaluate_run.run_evaluation``; this module lays the tab out and
puts its result onto the components.
"""

from __future__ import annotations

import atexit
import shutil
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from madqa.evaluation.glossary import term
from madqa.evaluation.report import (
    TABLE_ROWS,
    lookup,
)
from madqa.ui.collection_picker import build_picker
from madqa.ui.config_builder import ConfigBuilder, build_config_builder, rebuilt
from madqa.ui.context import AppContext
from madqa.ui.eval_plots import failed_runs, is_score, step_ticks
from madqa.ui.evaluate_run import MAX_WORKERS, EvalRequest, Evaluation, run_evaluation
from madqa.ui.messages import md_escape
from madqa.ui.model_access import config_choices, picker_info
from madqa.ui.score_rows import build_score_rows

QUESTION_COLUMNS = ["config", "id", "question", "answer", "ANLS*", "right", "steps", "error type"]


def cell(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    return "–" if value is None else value


def shown_score(result: Mapping[str, Any], path: str) -> str:
    """One overall number of a config as shown: "failed (N of M)" in place of every score when any of its runs
    failed (a failure is never scored as a wrong answer), counts, tokens, cost and time as they are."""
    failed = failed_runs(result)
    return failed if failed and is_score(path) else str(cell(lookup(result["overall"], path)))


def metrics_frame(results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per metric of ``TABLE_ROWS``, one column per config (the overall numbers)."""
    names = list(results)
    rows = []
    for label, path in TABLE_ROWS:
        name, why = plain_metric(label)
        rows.append([name, *(shown_score(results[n], path) for n in names), why])
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
    rows = [[name, *(shown_score(results[name], key) for key in SCORE_KEYS)] for name in results]
    return pd.DataFrame(rows, columns=["config", *(term(key).label for key in SCORE_KEYS)])


HEADLINES = (("Accuracy", "accuracy"), ("Page F1", "page_f1"), ("Evidence recall", "evidence_recall"))


def headline_cards(results: Mapping[str, Mapping[str, Any]]) -> str:
    """Three cards per config above the table, each with a one-line explanation (tooltip and text)."""
    import html

    parts = []
    for name in results:
        cards = "".join(
            f'<div class="eval-card" title="{html.escape(term(key).explained())}"><div class="eval-card-value">'
            f'{html.escape(shown_score(results[name], key))}</div>'
            f'<div class="eval-card-name">{html.escape(title)}</div>'
            f'<div class="eval-card-why">{html.escape(term(key).explained())}</div></div>' for title, key in HEADLINES)
        parts.append(f'<div class="eval-cards"><b>{html.escape(name)}</b>{cards}</div>')
    return "".join(parts)


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


@dataclass
class EvaluateTab:
    """The Evaluate tab's components that its run reads and writes."""

    question_file: gr.File
    names: gr.CheckboxGroup
    limit: gr.Number
    workers: gr.Slider
    oracle: gr.Checkbox
    run_btn: gr.Button
    status: gr.Markdown
    predictions_file: gr.File
    report_file: gr.File
    scores: gr.DataFrame
    cards: gr.HTML
    metrics: gr.DataFrame
    accuracy_plot: gr.ScatterPlot
    kuiper_plot: gr.LinePlot
    error_plot: gr.BarPlot
    nothing: gr.Markdown
    gap_table: gr.DataFrame
    per_question_table: gr.DataFrame


def build_evaluate_tab(ctx: AppContext) -> None:
    with gr.Accordion("Model access (this browser session only)", open=False, elem_id="eval-access"):
        api_key = gr.Textbox("", label="API key", type="password", elem_id="eval-api-key",
                             placeholder="uses the server's environment when empty")
        api_base = gr.Textbox("", label="api_base (OpenAI-compatible server)", elem_id="eval-api-base")
    with gr.Accordion("Build configs from the parts (retriever, reranker, query strategy, model, top_k…)", open=True,
                      elem_id="eval-builder"):
        builder = build_config_builder(ctx, "eval", api_key, api_base, EVAL_FOLDERS.returned)
    tab = evaluate_layout(ctx)

    def run(question_file: str | None, configs: list[str] | None, built_configs: Any, limit: float | None,
            workers: float, api_key: str, api_base: str, oracle: bool, session: Any, request: gr.Request,
            progress: gr.Progress = gr.Progress()) -> dict[Any, Any]:  # noqa: B008 - how Gradio injects a progress bar
        built = rebuilt(ctx, built_configs)  # the browser's table is not trusted: every row is checked again
        with ctx.job_slot(session, request) as keys:
            asked = EvalRequest(question_file, configs or [], built, session, keys, int(limit or 0), int(workers or 1),
                                api_key, api_base, bool(oracle))
            return shown_evaluation(tab, builder, run_evaluation(ctx, asked, progress, EVAL_FOLDERS.returned))

    # the outputs in the API's result order (the last two were added after the others)
    outputs = [tab.status, tab.cards, tab.metrics, tab.accuracy_plot, tab.kuiper_plot, tab.error_plot,
               tab.per_question_table, tab.predictions_file, tab.report_file, tab.gap_table, tab.nothing, builder.files,
               tab.scores]
    tab.run_btn.click(run, [tab.question_file, tab.names, builder.table, tab.limit, tab.workers, api_key, api_base,
                            tab.oracle, ctx.session], outputs, api_name="evaluate", concurrency_limit=2,
                      show_progress_on=[tab.metrics])  # one progress bar, not one over every output


def shown_evaluation(tab: EvaluateTab, builder: ConfigBuilder, done: Evaluation) -> dict[Any, Any]:
    """A finished evaluation (``evaluate_run.Evaluation``) onto the tab: the status, the tables, the plots (one
    with nothing to show is replaced by a line saying why), the downloads."""
    drawn, empty = done.plots, done.empty
    steps, order = step_ticks(drawn.accuracy["steps"])
    return {tab.status: done.text, tab.cards: headline_cards(done.results), tab.metrics: metrics_frame(done.results),
            tab.accuracy_plot: gr.ScatterPlot(drawn.accuracy.assign(steps=steps), sort=order),
            tab.kuiper_plot: gr.LinePlot(drawn.kuiper, visible="kuiper" not in empty),
            tab.error_plot: gr.BarPlot(drawn.errors, visible="errors" not in empty),
            tab.per_question_table: question_frame(done.rows, done.records),
            tab.predictions_file: str(done.predictions), tab.report_file: str(done.report),
            tab.gap_table: gr.DataFrame(gap_frame(done.gaps), visible=bool(done.gaps)),
            tab.nothing: gr.Markdown("  \n".join(md_escape(line) for line in empty.values()), visible=bool(empty)),
            builder.files: done.config_files, tab.scores: scores_frame(done.results)}


def evaluate_layout(ctx: AppContext) -> EvaluateTab:
    """The run's inputs on the left (collection, question set, configs, limits, oracle), its results on the right
    (scores, cards, metrics, plots), the oracle gap and the per-question table below."""
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
    return EvaluateTab(question_file, names, limit, workers, oracle, run_btn, status, predictions_file, report_file,
                       scores, cards, metrics, accuracy_plot, kuiper_plot, error_plot, nothing, gap_table,
                       per_question_table)
