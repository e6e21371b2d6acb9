"""Evaluate's "Score prediction rows": rows made elsewhere scored like a run of the tab, with the same
report. The rows a person steered in Ask this session (``madqa.ui.steer``) are one click away; any
prediction file (``madqa run``, a steered session's download) can be given too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr
import pandas as pd

from madqa.evaluation.questions import QuestionFileError, load_questions
from madqa.evaluation.report import PredictionFileError, evaluate, load_predictions
from madqa.ui.context import AppContext, shown_error
from madqa.ui.messages import plural
from madqa.ui.steer import steered_rows


def build_score_rows(ctx: AppContext, question_file: gr.File, metrics_frame: Callable[..., pd.DataFrame]) -> None:
    """The section, under Evaluate's run: the session's steered rows or a prediction file, against the question
    set of the tab (its file, else the demo questions), shown as ``metrics_frame`` (Evaluate's table)."""
    with gr.Accordion("Score prediction rows (your steered questions, or a prediction file)", open=False,
                      elem_id="eval-score-rows"):
        rows_file = gr.File(label="Prediction file (JSONL; empty: the questions you steered in Ask)",
                            file_types=[".jsonl"], elem_id="eval-rows-file")
        score_btn = gr.Button("Score the rows", elem_id="eval-score-button")
        scored = gr.Markdown(elem_id="eval-scored")
        table = gr.DataFrame(pd.DataFrame(columns=["metric"]), interactive=False, wrap=True, max_height=420,
                             elem_id="eval-scored-metrics")

    def score(path: str | None, questions_path: str | None, session: Any) -> tuple[str, Any]:
        if path:
            try:
                rows, problems = load_predictions(path)
            except PredictionFileError as exc:
                raise shown_error(f"The prediction file cannot be read: {exc}") from None
            name = "the file"
        else:
            rows, problems, name = steered_rows(session), [], "steered"
        if not rows:
            raise shown_error("No rows to score: steer a question in Ask first, or give a prediction file.")
        try:
            gold = load_questions(questions_path)[0] if questions_path else ctx.questions
        except QuestionFileError as exc:
            raise shown_error(f"The question set cannot be read: {exc}") from None
        result = evaluate(rows, gold)
        overall = result["overall"]
        said = (f"{plural(overall['n'], 'row')} scored against {plural(len(gold), 'question')}; "
                f"accuracy {overall['accuracy'] if overall['accuracy'] is not None else '–'}"
                + (f"; {plural(len(problems), 'line')} skipped" if problems else "")
                + (f"; {plural(overall['n_unmatched'], 'row')} not in the question set" if overall["n_unmatched"] else ""))
        return said, metrics_frame({name: result})

    score_btn.click(score, [rows_file, question_file, ctx.session], [scored, table], api_name="score_rows")
