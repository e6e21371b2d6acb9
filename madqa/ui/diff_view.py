"""The Compare tab's trajectory diff: two uploaded prediction files, question by question.

The same ``madqa.evaluation.diff.diff_runs`` as ``madqa diff``: who was right, both runs'
queries side by side, where they diverged, and the summary by hop type and error kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from madqa.evaluation.diff import OUTCOMES, diff_runs, run_names
from madqa.evaluation.diff import run_name as named_run
from madqa.evaluation.glossary import term
from madqa.evaluation.questions import QuestionFileError, load_questions
from madqa.evaluation.report import PredictionFileError, load_predictions
from madqa.ui.context import AppContext, shown_error
from madqa.ui.messages import md_escape, plural
from madqa.ui.sessions import shorten_name

HOP_WORDS = {"single": "one page", "cross_page": "several pages", "cross_doc": "several documents"}
QUERY_CHARS = 70  # a longer query is folded (its start, then …): the table fits its frame
QUERIES_SHOWN = 4  # then "… and N more searches"


def diff_columns(a: str, b: str) -> list[str]:
    """The per-question table's headers, the columns that say why first, then the answers and searches."""
    return ["question", "who was right", "searches differ from", f"first page only {a} saw",
            f"first page only {b} saw", f"{a}: answer", f"{b}: answer", f"{a}: searches", f"{b}: searches",
            "evidence on", "id"]


DIFF_COLUMNS = diff_columns("A", "B")
DIFF_WIDTHS = ["17%", "8%", "6%", "9%", "9%", "9%", "9%", "12%", "12%", "5%", "4%"]


def run_name(path: str, rows: list[dict[str, Any]]) -> str:
    """A run named by its file and its config (``baseline.jsonl · offline``), not A or B."""
    return named_run(shorten_name(Path(path).name), rows)


def _page(p: dict[str, Any] | None) -> str:
    return "–" if p is None else f"{p['file']} p.{p['page']} (search {p['search']})"


def _answer(value: Any, right: bool, error: str | None) -> str:
    text = " | ".join(str(v) for v in value) if isinstance(value, list) else str(value or "")
    why = f" ({term(f'errors.{error}').label.removeprefix('wrong answers: ')})" if error else ""
    return f"{'✓ right' if right else '✗ wrong'}{why}: {text or '(refusal)'}"


def _queries(queries: list[str]) -> str:
    """Numbered searches (and other tool calls, ``→ open_page ...``), each folded to ``QUERY_CHARS``, at most
    ``QUERIES_SHOWN`` then a count of the rest."""
    def fold(q: str) -> str:
        return q if len(q) <= QUERY_CHARS else q[:QUERY_CHARS - 1].rstrip() + "…"
    lines = [f"{i}. {fold(q)}" for i, q in enumerate(queries[:QUERIES_SHOWN], 1)]
    if len(queries) > QUERIES_SHOWN:
        lines.append(f"… and {plural(len(queries) - QUERIES_SHOWN, 'more search', 'more searches')}")
    return "\n".join(lines) or "(no search)"


def diff_frames(result: dict[str, Any], names: tuple[str, str],
                disagreements_only: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary table, per-question table) of a ``diff_runs`` result, in words; every cell is plain text.
    ``disagreements_only`` keeps the questions only one run got right."""
    a, b = names
    label = {"A only": f"only {a} right", "B only": f"only {b} right", "both": "both right", "neither": "neither right"}
    s = result["summary"]
    summary = [["all questions", *(s[o] for o in OUTCOMES)]]
    summary += [[f"evidence on {HOP_WORDS.get(hop, hop)}", *(counts[o] for o in OUTCOMES)]
                for hop, counts in s["by_hop_type"].items()]
    for o, errors in s["loser_errors"].items():
        loser = b if o == "A only" else a
        kinds = ", ".join(f"{term(f'errors.{c}').label.removeprefix('wrong answers: ')}: {n}"
                          for c, n in errors.items() if n) or "none"
        summary.append([f"why {loser} was wrong where {label[o]}", kinds, *([""] * (len(OUTCOMES) - 1))])
    summary_frame = pd.DataFrame(summary, columns=["", *(label[o] for o in OUTCOMES)])
    rows = [[str(q["question"] or ""), label[q["outcome"]],
             f"search {q['first_different_query']}" if q["first_different_query"] else "same searches",
             _page(q["a_first_unique_page"]), _page(q["b_first_unique_page"]),
             _answer(q["a_answer"], q["a_right"], q["a_error"]), _answer(q["b_answer"], q["b_right"], q["b_error"]),
             _queries(q.get("a_calls") or q["a_queries"]), _queries(q.get("b_calls") or q["b_queries"]), HOP_WORDS.get(q["hop_type"], q["hop_type"]), q["id"]]
            for q in result["questions"] if not disagreements_only or q["outcome"] in ("A only", "B only")]
    return summary_frame, pd.DataFrame(rows, columns=diff_columns(a, b))


def build_diff_view(ctx: AppContext) -> None:
    with gr.Accordion("Trajectory diff of two prediction files (madqa diff)", open=False, elem_id="diff-panel"):
        with gr.Row():
            file_a = gr.File(label="Predictions A (JSONL)", file_types=[".jsonl"], elem_id="diff-a", height=90)
            file_b = gr.File(label="Predictions B (JSONL)", file_types=[".jsonl"], elem_id="diff-b", height=90)
            gold_file = gr.File(label=f"Question set (empty: the {len(ctx.questions)} demo questions)",
                                file_types=[".jsonl", ".parquet"], elem_id="diff-gold", height=90)
        with gr.Row():
            go = gr.Button("Compare the files", elem_id="diff-run")
            disagree = gr.Checkbox(False, label="Only the questions where one run is right and the other wrong",
                                   elem_id="diff-disagree")
        status = gr.Markdown(elem_id="diff-status")
        summary = gr.DataFrame(pd.DataFrame(columns=[""]), label="Summary", interactive=False, elem_id="diff-summary")
        table = gr.DataFrame(pd.DataFrame(columns=DIFF_COLUMNS), label="Per question", interactive=False, wrap=True,
                             max_height=520, elem_id="diff-table", column_widths=DIFF_WIDTHS)

    def run(a: str | None, b: str | None, gold_path: str | None, disagreements_only: bool = False) -> tuple[Any, ...]:
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
        names = run_names((run_name(a, sides[0]), run_name(b, sides[1])))
        s = result["summary"]
        text = (f"{plural(s['n'], 'question')} answered in both: only **{md_escape(names[0])}** right {s['A only']}, "
                f"only **{md_escape(names[1])}** right {s['B only']}, both {s['both']}, neither {s['neither']}; "
                f"the same searches on {s['same_queries']}.")
        return (text, *diff_frames(result, names, bool(disagreements_only)))

    inputs = [file_a, file_b, gold_file, disagree]
    go.click(run, inputs, [status, summary, table], api_name="diff", concurrency_limit=4)
    disagree.input(run, inputs, [status, summary, table], api_visibility="private", concurrency_limit=4)
