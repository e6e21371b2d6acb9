"""The Compare tab: one question through two configs at the same time, side by side.

Each config runs in its own thread; their steps are interleaved through a queue as they happen,
so both traces stream together. When both have answered, a summary table puts answer,
citations, steps, query drift, tokens, cost and time side by side, and scores both with ANLS*
when the question came from the demo set (which has gold answers). Below, the trajectory diff of
two prediction files (``diff_view.py``). The two runs are ``ui.compare_run.compare_question``; this module
lays the tab out and puts its updates onto the two chats and the table.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradio as gr
import pandas as pd

from madqa.ui.ask import build_page_viewer, check_question_length, viewer_handlers
from madqa.ui.built_configs import unavailable_parts
from madqa.ui.collection_picker import build_picker, follow_questions
from madqa.ui.compare_run import SIDES, CompareQuestion, compare_question, gold_for
from madqa.ui.config_builder import write_config_files
from madqa.ui.config_panel import FIELD_NAMES, build_config_panel, resolve_config
from madqa.ui.context import (
    AGENT_CONCURRENCY,
    AGENT_CONCURRENCY_ID,
    AppContext,
    api_parameters,
    shown_error,
)
from madqa.ui.diff_view import build_diff_view
from madqa.ui.evaluate import EVAL_FOLDERS  # the download folders: a few kept, none after the server stops
from madqa.ui.messages import (
    md_escape,
)
from madqa.ui.modal import open_viewer_js

SHOW_VIEWER_JS = open_viewer_js("compare-page-viewer")  # a modal on a phone, beside the chats on a wide screen
PANEL_SIZE = len(FIELD_NAMES)


def empty_summary() -> pd.DataFrame:
    return pd.DataFrame({"": [], "A": [], "B": []})


DRIFT_NOTE = ("_Query drift: how far a run's later searches wandered from its first one (0 = it kept "
              "searching the same words, 1 = no word in common)._")
COLOURS = {"right": "background-color: #dcfce7", "wrong": "background-color: #fee2e2",
           "failed": "background-color: #e5e7eb", "not run": "background-color: #e5e7eb",
           "differs": "background-color: #fef9c3"}


def styled_summary(frame: pd.DataFrame) -> Any:
    """The summary with right/wrong coloured and the cells where A and B differ highlighted."""
    def colour(row: pd.Series) -> list[str]:
        a, b = row.iloc[1], row.iloc[2]
        out = [""] * len(row)
        for i, value in ((1, a), (2, b)):
            if value in ("right", "wrong", "failed", "not run"):
                out[i] = COLOURS[value]
            elif a != b and row.iloc[0] not in ("time (s)", "backend/model"):
                out[i] = COLOURS["differs"]
        return out

    return frame.style.apply(colour, axis=1)


def build_compare_tab(ctx: AppContext) -> None:
    with gr.Row():
        question = gr.Textbox(label="Question", placeholder="One question, answered by both configs at once",
                              scale=5, elem_id="compare-question", max_length=2000)
        run_btn = gr.Button("Run both", variant="primary", scale=1, min_width=100, elem_id="compare-run")
        stop_btn = gr.Button("Stop", variant="stop", scale=0, min_width=70, interactive=False, elem_id="compare-stop")
    with gr.Row():
        picker = build_picker(ctx, "compare-collection", scale=1, min_width=240)
        example = gr.Dropdown(ctx.question_choices, value=None, label="Pick a question of this collection (scored "
                              "against its gold answer)", visible=bool(ctx.question_choices), elem_id="compare-example",
                              scale=3)
    follow_questions(ctx, picker, example)
    with gr.Row(equal_height=False):  # the page viewer beside the two chats
        with gr.Column(min_width=300):
            panel_a = build_config_panel(ctx.configs, ctx.registry, ctx.default_config, "Config A",
                                         backends=ctx.backends, elem_id="compare-config-a",
                                         settings=ctx.settings)
            chat_a = gr.Chatbot(label="A", height=520, elem_id="compare-chat-a")
        with gr.Column(min_width=300):
            panel_b = build_config_panel(ctx.configs, ctx.registry, ctx.default_config, "Config B",
                                         initial={"top_k": 3}, backends=ctx.backends, elem_id="compare-config-b",
                                         settings=ctx.settings)
            chat_b = gr.Chatbot(label="B", height=520, elem_id="compare-chat-b")
        with gr.Column(min_width=300):
            viewer = build_page_viewer("Cited page", "compare-page", height=520,
                                       hint="_Click a cited page under either answer to see it here._")
    missing = unavailable_parts(ctx.registry)
    if missing:  # shown, never offered in the panels' menus
        gr.Markdown("Not installed here, so not offered: " + "; ".join(md_escape(m) for m in missing),
                    elem_id="compare-unavailable")
    summary = gr.DataFrame(empty_summary(), label="Summary (yellow: A and B differ; green/red: right/wrong; grey: failed or not run, no score)",
                           interactive=False, wrap=True, elem_id="compare-summary", column_widths=["18%", "41%", "41%"])
    gr.Markdown(DRIFT_NOTE, elem_id="compare-drift-note")
    config_files = gr.File(label="The two configs as files (TOML: madqa run --config FILE)", file_count="multiple",
                           interactive=False, height=120, elem_id="compare-config-files")
    build_diff_view(ctx)

    @api_parameters(["question", "question_id", *(f"{side.lower()}_{n}" for side in SIDES for n in FIELD_NAMES),
                     "session", "request"])
    def compare(question_text: str, question_id: str | None, *args: Any) -> Iterator[tuple[Any, ...]]:
        *values, session, request = args
        text = (question_text or "").strip()
        if not text:
            raise shown_error("Type a question, or pick a demo question.")
        check_question_length(text)
        configs = {side: resolve_config(ctx.configs, values[i * PANEL_SIZE:(i + 1) * PANEL_SIZE], ctx.policy,
                                        settings=ctx.settings)
                   for i, side in enumerate(SIDES)}
        with ctx.job_slot(session, request) as keys:
            asked = CompareQuestion(text, configs, session, keys, gold_for(ctx, question_id, text, session))
            for update in compare_question(ctx, asked):
                summary = empty_summary() if update.summary is None else styled_summary(update.summary)
                yield update.chats["A"], update.chats["B"], summary

    inputs = [question, example, *panel_a.inputs, *panel_b.inputs, ctx.session]
    busy = gr.on([question.submit, run_btn.click], lambda: gr.Button(interactive=True), None, stop_btn,
                 queue=False, api_visibility="private")
    event = busy.then(compare, inputs, [chat_a, chat_b, summary], api_name="compare",
                      concurrency_limit=AGENT_CONCURRENCY, concurrency_id=AGENT_CONCURRENCY_ID,
                      show_progress="minimal", trigger_mode="once")
    event.then(lambda: gr.Button(interactive=False), None, stop_btn, queue=False, api_visibility="private")

    def config_files_of(*values: Any) -> list[str]:
        """Both sides' configs as TOML files, each rebuilt from its panel and checked by the policy again."""
        configs = [resolve_config(ctx.configs, values[i * PANEL_SIZE:(i + 1) * PANEL_SIZE], ctx.policy,
                                  settings=ctx.settings)[0] for i in range(len(SIDES))]
        unique = list({c.name: c for c in configs}.values())  # two sides alike: one file
        return write_config_files(unique, EVAL_FOLDERS.returned)

    event.success(config_files_of, [*panel_a.inputs, *panel_b.inputs], [config_files], api_visibility="private",
                  concurrency_limit=4, show_progress="hidden")
    stop_btn.click(lambda: gr.Button(interactive=False), None, stop_btn, cancels=[event], queue=False,
                   api_visibility="private")  # Stop only while a run goes on

    example.change(ctx.pick_question, [example, ctx.session], [question], queue=False, api_visibility="private")
    question.input(lambda: None, None, [example], queue=False, api_visibility="private")  # edited: no gold applies
    on_option, _ = viewer_handlers(ctx)
    for chat in (chat_a, chat_b):
        chat.option_select(on_option, [ctx.session], [viewer.image, viewer.caption], api_visibility="private",
                           concurrency_limit=8) \
            .then(None, None, None, js=SHOW_VIEWER_JS, api_visibility="private")
