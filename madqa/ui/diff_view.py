"""The Compare tab's trajectory diff: two uploaded prediction files, question by question.

The same ``madqa.evaluation.diff.diff_runs`` as ``madqa diff``: who was right, both runs'
queries side by side, where they diverged, and the summary by hop type and error kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from madqa.evaluation.diff import OUTCOMES, diff_runs
from madqa.evaluation.questions import QuestionFileError, load_questions
from madqa.evaluation.report import PredictionFileError, load_predictions
from madqa.ui.context import AppContext, shown_error
from madqa.ui.sessions import shorten_name

DIFF_COLUMNS = ["id", "hop", "who was right", "A answer", "B answer", "A queries", "B queries", "diverged at query",
                "first page only A saw", "first page only B saw"]


def _page(p: dict[str, Any] | None) -> str:
    return "–" if p is None else f"{p['file']} p.{p['page']} (search {p['search']})"


def _answer(value: Any, right: bool, error: str | None) -> str:
    text = " | ".join(str(v) for v in value) if isinstance(value, list) else str(value or "")
    return f"{'✓' if right else '✗'} {text or '(refusal)'}" + (f" [{error}]" if error else "")


def diff_frames(result: dict[str, Any], names: tuple[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary table, per-question table) of a ``diff_runs`` result; every cell is plain text."""
    a, b = names
    label = {"A only": f"{a} only", "B only": f"{b} only", "both": "both", "neither": "neither"}
    s = result["summary"]
    summary = [["all", *(s[o] for o in OUTCOMES)]]
    summary += [[hop, *(counts[o] for o in OUTCOMES)] for hop, counts in s["by_hop_type"].items()]
    for o, errors in s["loser_errors"].items():
        loser = b if o == "A only" else a
        kinds = ", ".join(f"{c.replace('_', ' ')}: {n}" for c, n in errors.items() if n) or "none"
        summary.append([f"{loser}'s errors where {label[o]} right", kinds, *([""] * (len(OUTCOMES) - 1))])
    summary_frame = pd.DataFrame(summary, columns=["", *(label[o] for o in OUTCOMES)])
    rows = [[q["id"], q["hop_type"], label[q["outcome"]],
             _answer(q["a_answer"], q["a_right"], q["a_error"]), _answer(q["b_answer"], q["b_right"], q["b_error"]),
             "\n".join(f"{i}. {x}" for i, x in enumerate(q["a_queries"], 1)),
             "\n".join(f"{i}. {x}" for i, x in enumerate(q["b_queries"], 1)),
             q["first_different_query"] or "same", _page(q["a_first_unique_page"]), _page(q["b_first_unique_page"])]
            for q in result["questions"]]
    return summary_frame, pd.DataFrame(rows, columns=DIFF_COLUMNS)


def build_diff_view(ctx: AppContext) -> None:
    with gr.Accordion("Trajectory diff of two prediction files (madqa diff)", open=False, elem_id="diff-panel"):
        with gr.Row():
            file_a = gr.File(label="Predictions A (JSONL)", file_types=[".jsonl"], elem_id="diff-a", height=90)
            file_b = gr.File(label="Predictions B (JSONL)", file_types=[".jsonl"], elem_id="diff-b", height=90)
            gold_file = gr.File(label=f"Question set (empty: the {len(ctx.questions)} demo questions)",
                                file_types=[".jsonl", ".parquet"], elem_id="diff-gold", height=90)
        go = gr.Button("Compare the files", elem_id="diff-run")
        status = gr.Markdown(elem_id="diff-status")
        summary = gr.DataFrame(pd.DataFrame(columns=[""]), label="Summary", interactive=False, elem_id="diff-summary")
        table = gr.DataFrame(pd.DataFrame(columns=DIFF_COLUMNS), label="Per question", interactive=False, wrap=True,
                             max_height=520, elem_id="diff-table")

    def run(a: str | None, b: str | None, gold_path: str | None) -> tuple[Any, ...]:
        if not a or not b:
            raise shown_error("Upload two prediction files (A and B).")
        if gold_path:
            try:
                gold, _ = load_questions(gold_path)
            except QuestionFileError as exc:
                raise shown_error(f"{shorten_name(Path(gold_path).name)}: {exc}") from None
        else:
            gold = list(ctx.questions)
        if not gold:
            raise shown_error("No usable questions to score against.")
        sides = []
        for path in (a, b):
            try:
                rows, _ = load_predictions(path)
            except PredictionFileError as exc:
                raise shown_error(f"{shorten_name(Path(path).name)}: {exc}") from None
            sides.append(rows)
        result = diff_runs(sides[0], sides[1], gold)
        if not result["questions"]:
            raise shown_error("No question is answered in both files (matched by question text, then id).")
        names = ("A", "B")
        s = result["summary"]
        text = (f"{s['n']} questions answered in both: A only right {s['A only']}, B only right {s['B only']}, "
                f"both {s['both']}, neither {s['neither']}; same queries on {s['same_queries']}.")
        return (text, *diff_frames(result, names))

    go.click(run, [file_a, file_b, gold_file], [status, summary, table], api_name="diff", concurrency_limit=4)
