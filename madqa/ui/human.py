"""The "You search" tab: a person plays the agent's game (the paper's human + BM25 condition).

The visitor gets only the agent's tool: a search box with the same query language and
retriever, the same top-k pages as images, and an answer box with citations to pages they were
shown. Each question becomes a prediction row in the agent's format (``model: "human"``, a
trajectory of the same typed steps), scored with the same report as the agents (accuracy,
first-query success, steps, drift) beside the default config's agent on the same questions,
per browser session, and downloadable for ``madqa eval``. Every text shown is escaped.
"""

from __future__ import annotations

import atexit
import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from madqa.answer import validate_citations
from madqa.errors import MadqaError
from madqa.evaluation.report import evaluate, per_question
from madqa.evaluation.runner import run_batch
from madqa.scope import search_as_written
from madqa.settings import PipelineConfig, image_budget_px
from madqa.trace import Trace
from madqa.types import AnswerStep, Hit, PageRef, SearchStep
from madqa.ui.collection_picker import build_picker, follow_questions
from madqa.ui.context import AppContext, internal_error, shown_error
from madqa.ui.evaluate import EvalFolders
from madqa.ui.messages import chip_label, hide_paths, md_escape, plural, thumbnail_caption
from madqa.ui.pages import page_file

HUMAN = "human"
MAX_QUERY_CHARS = 500
SCORE_COLUMNS = ["id", "question", "your answer", "right", "ANLS*", "searches", "first query found a gold page",
                 "query drift (lexical)"]
SUMMARY_ROWS = (("questions", "n"), ("accuracy", "accuracy"), ("first-query success", "first_query_success"),
                ("mean searches", "steps.mean"), ("query drift (lexical)", "query_drift"),
                ("evidence recall", "evidence_recall"), ("page F1", "page_f1"))


@dataclass
class Game:
    """One question being answered by a person: the trace so far and the pages shown."""

    question: dict[str, Any]
    trace: Trace
    seen: list[PageRef] = field(default_factory=list)
    searches: int = 0


def start_game(question: Mapping[str, Any], config: PipelineConfig) -> Game:
    return Game(dict(question), Trace(str(question["question"]), config, question.get("id")))


def human_search(game: Game, corpus: Any, retriever: Any, query: str, top_k: int) -> SearchStep:
    """Run the agent's search tool for a person and record it as the agent's SearchStep would be: ``file:NAME``
    terms search only those documents (``madqa.scope``), the query executed is the rest."""
    started = time.perf_counter()
    hits: tuple[Hit, ...] = ()
    note, error = None, None
    executed = query
    try:
        result = search_as_written(retriever, query, top_k, corpus.documents if corpus is not None else {})
        hits, note, executed = tuple(result.hits)[:top_k], result.note, result.query or query
    except MadqaError as exc:  # a bad query is an observation, as for the agent; a retriever's bug raises
        error = str(exc)
    game.searches += 1
    new = tuple(dict.fromkeys(h.ref for h in hits if h.ref not in game.seen))
    game.seen += list(new)
    step = SearchStep(game.searches, query, executed, hits, new, None, note, error, time.perf_counter() - started)
    game.trace.steps.append(step)
    return step


def human_answer(game: Game, corpus: Any, answer_text: str, cited: Sequence[str]) -> dict[str, Any]:
    """Finish the question: the answer (one value per line) and cited page labels -> a prediction row."""
    values = [line.strip() for line in str(answer_text or "").splitlines() if line.strip()]
    labels = {ref.label(): ref for ref in game.seen}
    raw = [{"file": labels[c].file, "page": labels[c].page} for c in cited or [] if c in labels]
    citations, flags = validate_citations(raw, corpus, set(game.seen))
    game.trace.steps.append(AnswerStep(game.searches + 1, tuple(values), tuple(citations), tuple(raw),
                                       tuple(flags), not values))
    game.trace.finished = time.perf_counter()
    row = game.trace.row()
    row.update(model=HUMAN, config=HUMAN, backend=HUMAN)
    return row


def score_frame(rows: Sequence[Mapping[str, Any]], gold: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    table = []
    for r in per_question(list(rows), list(gold)):
        row = rows[r["index"]]
        table.append([r["id"], r["question"], " | ".join(row.get("answer") or []) or "(no answer)",
                      "yes" if r["correct"] else "no", round(r["anls"], 3), r["n_searches"],
                      {True: "yes", False: "no", None: "–"}[r["first_query_hit"]],
                      "–" if r["drift"] is None else round(r["drift"], 3)])
    return pd.DataFrame(table, columns=SCORE_COLUMNS)


def _figure(overall: Mapping[str, Any], dotted: str) -> str:
    value: Any = overall
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return "–" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def summary_frame(rows: Sequence[Mapping[str, Any]], agent_rows: Sequence[Mapping[str, Any]],
                  gold: Sequence[Mapping[str, Any]], agent_name: str) -> pd.DataFrame:
    """The session's figures beside the agent's on the same questions (the same ``evaluate``)."""
    asked = [g for g in gold if any(r.get("id") == g.get("id") for r in rows)]
    you = evaluate(list(rows), asked)["overall"] if asked else {}
    agent = evaluate(list(agent_rows), asked)["overall"] if asked and agent_rows else {}
    return pd.DataFrame([[label, _figure(you, key), _figure(agent, key)] for label, key in SUMMARY_ROWS],
                        columns=["", "you", f"agent ({agent_name})"])


@dataclass(frozen=True)
class SearchShown:
    """A person's search as the tab shows it: the pages as pictures, a status line, the pages they may cite."""

    pictures: list[tuple[str, str]]  # (image path, caption); a page shown before says so
    status: str  # Markdown: "Search N: K pages, M new", then the retriever's note or the query's error
    citable: list[tuple[str, str]]  # (chip label, page label) of every page shown so far


@dataclass(frozen=True)
class Scored:
    """A person's answer scored: the verdict line, and the session's rows (theirs and the agent's) after it."""

    text: str  # Markdown: their answer, right or wrong (ANLS*), the gold answers, searches, flags
    rows: list[dict[str, Any]]
    agent_rows: list[dict[str, Any]]


def search_for_person(ctx: AppContext, config: PipelineConfig, game: Game, text: str, session: Any) -> SearchShown:
    """Run the person's query with the agent's retriever on the session's corpus; gr.Error when it cannot run."""
    corpus = ctx.corpus_or_error(session)
    run = ctx.bounded(config, ctx.sessions.key_of(session), corpus)
    try:
        retriever = ctx.registry.create("retriever", run.retriever, corpus, run.part_options("retriever"))
    except MadqaError as exc:
        raise shown_error(str(exc)) from None
    try:
        step = human_search(game, corpus, retriever, text[:MAX_QUERY_CHARS], config.top_k)
    except Exception as exc:  # a bug in the retriever: shown as one (logged with its traceback), never as no pages
        raise shown_error(internal_error(exc, "human search")) from None
    images = []
    for hit in step.hits:
        try:
            path = page_file(corpus, hit.ref, ctx.settings, image_budget_px(ctx.settings, config))
        except (MadqaError, OSError):  # no image for this page (a full disk, say); the search still counts
            continue
        images.append((str(path), thumbnail_caption(hit.ref) + ("" if hit.ref in step.new_pages else " (shown before)")))
    notes = [f"Search {step.iteration}: {len(step.hits)} pages, {len(step.new_pages)} new"]
    notes += [md_escape(hide_paths(n)) for n in (step.retriever_note, step.error) if n]
    # shown as the chips elsewhere read them (x · p.6); the value stays the page's label
    return SearchShown(images, "  \n".join(notes), [(chip_label(ref), ref.label()) for ref in game.seen])


def score_answer(ctx: AppContext, config: PipelineConfig, game: Game, data: dict[str, Any], text: str,
                 cited: list[str], session: Any) -> Scored:
    """The person's answer as a row (replacing an earlier one of the same question), scored against the gold
    answers, beside the agent's row on the same question (run when it costs nothing)."""
    corpus = ctx.corpus_or_error(session)
    row = human_answer(game, corpus, text, cited)
    rows = [r for r in data["rows"] if r.get("id") != row.get("id")] + [row]
    agent = agent_rows(ctx, config, corpus, data["agent_rows"], game.question)
    records = per_question([row], ctx.session_questions(session))
    verdict = ("no gold answer to score against" if not records else
               f"**{'right' if records[0]['correct'] else 'wrong'}** (ANLS* {records[0]['anls']:.2f})")
    gold = game.question.get("answer_variants") or []
    shown = " or ".join(md_escape(" | ".join(v)) for v in gold[:3])
    text_out = (f"Your answer: {md_escape(' | '.join(row['answer']) or '(none)')} — {verdict}. "
                f"Gold: {shown or '–'}. {plural(len(row['search_history']), 'search')}."
                + "".join(f"  \n⚠ {md_escape(f)}" for f in row["flags"]))
    return Scored(text_out, rows, agent)


@dataclass
class HumanTab:
    """The tab's components that its events read and write."""

    state: gr.State  # {"game": Game | None, "rows": [...], "agent_rows": [...]}
    pick: gr.Dropdown
    start: gr.Button
    question_md: gr.Markdown
    query: gr.Textbox
    search_btn: gr.Button
    search_md: gr.Markdown
    gallery: gr.Gallery
    answer: gr.Textbox
    cites: gr.CheckboxGroup
    submit: gr.Button
    result_md: gr.Markdown
    summary: gr.DataFrame
    scores: gr.DataFrame
    download: gr.File


def game_of(data: Any) -> Game:
    game = data.get("game") if isinstance(data, dict) else None
    if game is None:
        raise shown_error("Press Start to get a question first.")
    return game


def build_human_tab(ctx: AppContext) -> None:
    config = ctx.configs.get(ctx.default_config) or next(iter(ctx.configs.values()))
    tab = human_layout(ctx, config)

    def on_start(qid: str | None, data: Any, session: Any) -> dict[Any, Any]:
        question = ctx.question(qid, session)
        if question is None:
            raise shown_error("Pick a question first.")
        data = data if isinstance(data, dict) else {"rows": [], "agent_rows": []}
        data["game"] = start_game(question, config)
        text = f"**Question {md_escape(question['id'])}:** {md_escape(question['question'])}"
        return {tab.state: data, tab.question_md: text, tab.search_md: "", tab.gallery: [],
                tab.cites: gr.CheckboxGroup(choices=[], value=[]), tab.answer: "", tab.result_md: ""}

    def on_search(text: str, data: Any, session: Any) -> dict[Any, Any]:
        game = game_of(data)
        text = (text or "").strip()
        if not text:
            raise shown_error("Type a search query.")
        found = search_for_person(ctx, config, game, text, session)
        return {tab.state: data, tab.search_md: found.status, tab.gallery: found.pictures,
                tab.cites: gr.CheckboxGroup(choices=found.citable)}

    def on_submit(text: str, cited: list[str] | None, data: Any, session: Any) -> dict[Any, Any]:
        scored = score_answer(ctx, config, game_of(data), data, text, cited or [], session)
        data.update(game=None, rows=scored.rows, agent_rows=scored.agent_rows)
        questions = ctx.session_questions(session)
        return {tab.state: data, tab.result_md: scored.text, tab.scores: score_frame(data["rows"], questions),
                tab.summary: summary_frame(data["rows"], data["agent_rows"], questions, config.name),
                tab.download: str(write_download(data["rows"]))}

    tab.start.click(on_start, [tab.pick, tab.state, ctx.session], [tab.state, tab.question_md, tab.search_md,
                                                                  tab.gallery, tab.cites, tab.answer, tab.result_md],
                    api_visibility="private")
    gr.on([tab.query.submit, tab.search_btn.click], on_search, [tab.query, tab.state, ctx.session],
          [tab.state, tab.search_md, tab.gallery, tab.cites], api_visibility="private", concurrency_limit=8)
    tab.submit.click(on_submit, [tab.answer, tab.cites, tab.state, ctx.session],
                     [tab.state, tab.result_md, tab.scores, tab.summary, tab.download],
                     api_visibility="private", concurrency_limit=4)


def human_layout(ctx: AppContext, config: PipelineConfig) -> HumanTab:
    """What the game is, the question picker, the search box and its pages, the answer with its citations, the
    session's scores beside the agent's."""
    gr.Markdown("Answer a question **the way the agent does**: you may only search (the same search tool, "
                f"query language and top {config.top_k} pages as images as the `{md_escape(config.name)}` agent), "
                "then answer and cite the pages you were shown. Your searches are recorded in the agent's "
                "prediction format (`model: \"human\"`) and scored beside the agent. This is the MADQA paper's "
                "human + BM25 condition.")
    state = gr.State(None)  # {"game": Game | None, "rows": [...], "agent_rows": [...]}
    with gr.Row():
        picker = build_picker(ctx, "human-collection", scale=2, min_width=220)
        pick = gr.Dropdown(ctx.question_choices, value=ctx.question_choices[0][1] if ctx.question_choices else None,
                           label="Question (from the collection's question set, which has gold answers)", scale=5,
                           elem_id="human-pick")
        follow_questions(ctx, picker, pick)
        start = gr.Button("Start", variant="primary", scale=1, elem_id="human-start")
    question_md = gr.Markdown(elem_id="human-question")
    with gr.Row():
        query = gr.Textbox(label="Search (words are ANDed; \"phrases\", OR, NOT, wildcards * ?; file:NAME for one document)", scale=5,
                           max_length=MAX_QUERY_CHARS, elem_id="human-query")
        search_btn = gr.Button("Search", scale=1, elem_id="human-search")
    search_md = gr.Markdown(elem_id="human-search-status")
    gallery = gr.Gallery(label="Pages found (click to enlarge)", columns=min(config.top_k, 5), height=520,
                         object_fit="contain", elem_id="human-pages")
    with gr.Row():
        answer = gr.Textbox(label="Your answer (one value per line, the document's words)", lines=2, scale=3,
                            elem_id="human-answer")
        cites = gr.CheckboxGroup([], label="Cite the pages the answer comes from", scale=3, elem_id="human-cites")
    submit = gr.Button("Submit answer", variant="primary", elem_id="human-submit")
    result_md = gr.Markdown(elem_id="human-result")
    summary = gr.DataFrame(pd.DataFrame(columns=["", "you", "agent"]), label="This session: you and the agent",
                           interactive=False, elem_id="human-summary")
    scores = gr.DataFrame(pd.DataFrame(columns=SCORE_COLUMNS), label="Your questions", interactive=False, wrap=True,
                          column_widths=["9%", "37%", "14%", "6%", "7%", "8%", "10%", "9%"], elem_id="human-scores")
    download = gr.File(label="Your trajectories (prediction JSONL, model \"human\")", interactive=False, height=90,
                       elem_id="human-download")
    return HumanTab(state, pick, start, question_md, query, search_btn, search_md, gallery, answer, cites, submit,
                    result_md, summary, scores, download)


# Gradio copies a returned file into its cache before sending it: the latest few folders are enough (Submit
# runs at most 4 at once), and each Submit made one more folder that was never deleted
HUMAN_FOLDERS = EvalFolders(keep=8)
atexit.register(HUMAN_FOLDERS.clear)


def write_download(rows: Sequence[Mapping[str, Any]]) -> Path:
    """A session's rows as prediction JSONL in a new ``madqa-human-*`` folder (older ones are deleted)."""
    path = Path(tempfile.mkdtemp(prefix="madqa-human-")) / "human.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    HUMAN_FOLDERS.returned(path.parent)
    return path


def agent_rows(ctx: AppContext, config: PipelineConfig, corpus: Any, rows: list[dict[str, Any]],
               question: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The agent's rows for the session's questions, running it once on a new one when that costs
    nothing (the offline backend); a paid model is never run on a visitor's behalf."""
    if config.backend != "offline" or any(r.get("id") == question.get("id") for r in rows):
        return rows
    try:
        return rows + run_batch([dict(question)], corpus, config, ctx.registry, ctx.settings)
    except MadqaError:
        return rows
