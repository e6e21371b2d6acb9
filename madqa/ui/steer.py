"""Steer: a person beside the agent (the MADQA paper's human-and-agent condition, which no tool offers).

In Ask, under "Steer", the agent runs one model turn at a time: its next tool call is shown before it
runs, and the person approves it, edits it (its arguments, or another tool's call written in its place),
or answers instead. It is a face over the same step generator as Ask (``Agent.run_steered``: a
``ProposedCalls`` is yielded, a ``SteerReply`` sent back); the trajectory records each person's act as a
``SteerStep``. A steered question is a prediction row like any other: scored at once when the question
is one of the loaded question set's, kept for the session (Evaluate's "Score prediction rows" scores them,
``madqa.ui.score_rows``), and downloadable for ``madqa eval``.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr

from madqa.agent import Agent
from madqa.errors import MadqaError
from madqa.evaluation.report import per_question
from madqa.settings import PipelineConfig
from madqa.trace import Trace
from madqa.types import ProposedCalls, SteerReply, Step, ToolCall
from madqa.ui.config_panel import FIELD_NAMES, ConfigPanel, resolve_config
from madqa.ui.context import AppContext, api_parameters, shown_error
from madqa.ui.lazy import send_after_first_paint
from madqa.ui.messages import Message, StepChat, call_text, md_code, md_escape, plural, trace_message, user_message
from madqa.ui.policy import visitor_steps

MAX_ROWS = 200  # steered rows kept per session
MAX_SESSIONS = 500  # sessions whose steered rows are kept for Evaluate (the oldest go first)
_STEERED: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()  # session token -> its steered rows
_steered_lock = threading.Lock()


def keep_row(session: Any, row: dict[str, Any]) -> None:
    """Keep a steered row for the session, so Evaluate can score it (``steered_rows``)."""
    token = session.get("token") if isinstance(session, dict) else None
    if not token:
        return
    with _steered_lock:
        rows = _STEERED.pop(token, [])
        _STEERED[token] = [*rows, row][-MAX_ROWS:]
        while len(_STEERED) > MAX_SESSIONS:
            _STEERED.popitem(last=False)


def steered_rows(session: Any) -> list[dict[str, Any]]:
    """The rows this browser session steered in Ask (oldest first)."""
    token = session.get("token") if isinstance(session, dict) else None
    with _steered_lock:
        return list(_STEERED.get(token, [])) if token else []
INTRO = ("**Steer the agent.** Ask with Steer runs the agent one turn at a time: before each tool call runs you see "
         "it, and you approve it, edit it (change its arguments, or write another tool's call), or answer yourself. "
         "Every change you make is recorded in the row; the row is scored like any agent's.")


@dataclass
class SteerRun:
    """One steered question: the live step generator, its trace, and the calls proposed now."""

    steps: Generator[Any, SteerReply | None, None]
    trace: Trace
    chat: StepChat
    gold: dict[str, Any] | None
    options: dict[str, Any] = field(default_factory=dict)  # the run's model access (what a visitor sees is cleaned)
    proposed: ProposedCalls | None = None
    done: bool = False
    started: float = field(default_factory=time.perf_counter)

    def advance(self, reply: SteerReply | None = None) -> None:
        """Run until the model proposes its next calls or the question ends."""
        value: SteerReply | None = reply
        self.proposed = None
        while True:
            try:
                item = self.steps.send(value)
            except StopIteration:
                self.done, self.trace.finished = True, time.perf_counter()
                return
            value = None
            if isinstance(item, ProposedCalls):
                self.proposed = item
                return
            step: Step = next(iter(visitor_steps([item], self.options)))  # as Ask shows it: no server paths
            self.trace.steps.append(step)
            self.chat.add(step)


def parse_calls(text: str) -> tuple[ToolCall, ...]:
    """The person's calls: ``{"name": ..., "arguments": {...}}`` or a list of them (gr.Error if unreadable)."""
    try:
        value = json.loads(text or "")
    except ValueError as exc:
        raise shown_error(f"The call is not valid JSON: {exc}") from None
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not (isinstance(item, dict) and isinstance(item.get("name"), str)
                and isinstance(item.get("arguments", {}), dict)):
            raise shown_error('Write each call as {"name": "open_page", "arguments": {"file": "...", "page": 3}}.')
        calls.append(ToolCall(item["name"], dict(item.get("arguments") or {})))
    if not calls:
        raise shown_error("Write at least one call, or press Approve.")
    return tuple(calls)


def parse_answer(answer: str, citations: str) -> dict[str, Any]:
    """The person's answer: values separated by ``|``; citations as ``file, page; file, page``."""
    values = [a.strip() for a in (answer or "").split("|") if a.strip()]
    cited = []
    for part in (citations or "").split(";"):
        if not part.strip():
            continue
        file, sep, page = part.rpartition(",")
        if not sep or not page.strip().isdigit() or not file.strip():
            raise shown_error(f"Write citations as 'file.pdf, 3; other.pdf, 12' (not {part.strip()!r}).")
        cited.append({"file": file.strip(), "page": int(page.strip())})
    return {"answer": values, "citations": cited}


def proposal_text(run: SteerRun | None) -> str:
    if run is None:
        return ""
    if run.done:
        return "**Done.** The row is below; ask another question with Steer."
    if run.proposed is None:
        return ""
    calls = ", ".join(md_code(call_text(c)) for c in run.proposed.calls)
    return f"**The model's next call (step {run.proposed.iteration}):** {calls}"


def calls_json(run: SteerRun | None) -> str:
    if run is None or run.proposed is None:
        return ""
    return json.dumps([{"name": c.name, "arguments": c.arguments} for c in run.proposed.calls], ensure_ascii=False)


def score_text(row: dict[str, Any], gold: dict[str, Any] | None) -> str:
    """The row's score against the question set's gold answer, when the question is one of it."""
    answer = " | ".join(md_escape(a) for a in row["answer"]) or "(no answer)"
    if row.get("error"):
        return f"**Failed:** {md_escape(row['error'])}"
    if gold is None:
        return f"**Answer:** {answer} (not a question of the loaded set: download the row to score it)"
    record = per_question([row], [gold])[0]
    verdict = "right" if record["correct"] else "wrong"
    changes = sum(1 for s in row["trajectory"] if s["type"] == "steer" and s["action"] != "approve")
    return (f"**Answer:** {answer} · **{verdict}** (ANLS* {record['anls']:.2f}, page F1 {record['page_f1']:.2f}) · "
            f"{plural(changes, 'change')} by you")


@dataclass(frozen=True)
class SteerView:
    """What the Steer section shows after a start or a reply: the transcript, the proposed calls, the score."""

    messages: list[Message]
    proposal: str  # Markdown: the calls waiting for the person ('' when none)
    calls: str  # those calls as editable JSON
    rows: list[dict[str, Any]]  # the session's steered rows, this question's once it is answered
    result: str  # the answered question's score line ('' before)
    file: str | None  # the rows as JSONL, when this update added one (None: the download stays as it is)
    waiting: bool  # calls wait for the person: Approve, Run my edit and Answer work


def steer_view(run: SteerRun | None, kept: list[dict[str, Any]], session: Any = None) -> SteerView:
    """The section for ``run`` as it stands; an answered run's row is kept for the session (and its download)."""
    messages: list[Any] = []
    if run is not None:
        summary = trace_message(run.chat.trace_id, run.chat.steps, time.perf_counter() - run.started, run.done)
        messages = [user_message(run.trace.question), summary, *run.chat.thoughts, *run.chat.after]
    result, file = "", None
    if run is not None and run.done and run.trace.answer is not None:
        row = run.trace.row()
        kept = [*kept, row][-MAX_ROWS:]
        keep_row(session, row)
        result = score_text(row, run.gold)
        file = write_rows(kept)
    return SteerView(messages, proposal_text(run), calls_json(run), kept, result, file,
                     run is not None and run.proposed is not None)


def start_steered(ctx: AppContext, text: str, config: PipelineConfig, options: dict[str, Any], session: Any,
                  keys: list[str]) -> SteerRun:
    """A steered run of ``text`` on the session's corpus, advanced to its first proposed calls (a demo question
    keeps its id, so it is scored); gr.Error when the corpus or a component cannot be used."""
    corpus_key = session.get("corpus", "demo") if isinstance(session, dict) else "demo"
    try:
        corpus = ctx.sessions.corpus(session, corpus_key)
        config = ctx.bounded(config, corpus_key, corpus)
        agent = Agent(corpus, config, ctx.registry, ctx.settings, options)
        trace = Trace(text, config)
        gold = next((q for q in ctx.questions if q["question"].strip() == text), None) \
            if corpus_key == "demo" else None
        if gold is not None:
            trace.id = gold["id"]
        steps = agent.run_steered(text, budget=ctx.budgets(keys, config, options))
        run = SteerRun(steps, trace, StepChat("steer-trace", corpus_key, config.backend, config.model,
                                              [options.get("api_key", "")]), gold, options)
        run.advance()
    except MadqaError as exc:
        raise shown_error(str(exc)) from None
    return run


@dataclass
class SteerPanel:
    """The section's components that its events read and write."""

    start: gr.Button
    chat: gr.Chatbot
    proposal: gr.Markdown
    calls: gr.Textbox
    approve: gr.Button
    edit: gr.Button
    answer: gr.Textbox
    cites: gr.Textbox
    answer_btn: gr.Button
    score: gr.Markdown
    download: gr.File
    live: gr.State = field(init=False)  # the SteerRun, while it runs
    rows: gr.State = field(init=False)  # the session's steered rows


def steer_layout() -> SteerPanel:
    """The Steer section under Ask's chat: its own transcript, the proposed call, and the person's controls."""
    # sent just after the first paint: its chat and file are none of the question box's business (ui.lazy)
    with gr.Column(elem_id="steer-section") as section, \
            gr.Accordion("Steer: see each tool call before it runs", open=False, elem_id="steer"):
        gr.Markdown(INTRO)
        start = gr.Button("Ask with Steer", elem_id="steer-start")
        chat = gr.Chatbot(label="Steered run", height=420, elem_id="steer-chat")
        proposal = gr.Markdown(elem_id="steer-proposal")
        calls = gr.Textbox(label="The next call as JSON: edit its arguments, or write another tool's call",
                           lines=3, elem_id="steer-calls")
        with gr.Row():
            approve = gr.Button("Approve", variant="primary", elem_id="steer-approve")
            edit = gr.Button("Run my edit", elem_id="steer-edit")
        with gr.Row():
            answer = gr.Textbox(label="Or answer yourself (several values: separate them with |)",
                                elem_id="steer-answer")
            cites = gr.Textbox(label="Cited pages (file.pdf, 3; other.pdf, 12)", elem_id="steer-citations")
            answer_btn = gr.Button("Answer", elem_id="steer-answer-button")
        score = gr.Markdown(elem_id="steer-score")
        download = gr.File(label="Steered rows of this session (JSONL for madqa eval; Evaluate scores them too)",
                           interactive=False, height=90, elem_id="steer-rows")
    send_after_first_paint(section)
    panel = SteerPanel(start, chat, proposal, calls, approve, edit, answer, cites, answer_btn, score, download)
    panel.live, panel.rows = gr.State(None), gr.State([])
    return panel


def build_steer_panel(ctx: AppContext, question: gr.Textbox, panel: ConfigPanel) -> None:
    """The Steer section under Ask's chat, and its events: start, approve, run an edit, answer."""
    parts = steer_layout()

    def shown(run: SteerRun | None, kept: list[dict[str, Any]], session: Any = None) -> dict[Any, Any]:
        view = steer_view(run, kept, session)
        return {parts.live: run, parts.rows: view.rows, parts.chat: view.messages, parts.proposal: view.proposal,
                parts.calls: view.calls, parts.score: view.result,
                parts.download: gr.skip() if view.file is None else view.file,
                **{button: gr.Button(interactive=view.waiting) for button in (parts.approve, parts.edit,
                                                                                parts.answer_btn)}}

    @api_parameters(["question", *FIELD_NAMES, "session", "rows", "request"])
    def begin(text: str, *args: Any) -> dict[Any, Any]:
        *values, session, kept, request = args
        text = (text or "").strip()
        if not text:
            raise shown_error("Type a question first (in the question box above).")
        config, options = resolve_config(ctx.configs, values, ctx.policy, settings=ctx.settings)
        with ctx.job_slot(session, request) as keys:
            run = start_steered(ctx, text, config, options, session, keys)
        return shown(run, kept or [], session)

    def reply_with(make: Any, names: list[str]) -> Any:
        @api_parameters(["run", "rows", *names, "session", "request"])
        def handler(run: SteerRun | None, kept: list[dict[str, Any]], *args: Any) -> dict[Any, Any]:
            *given, session, request = args
            if run is None or run.proposed is None:
                raise shown_error("Nothing is waiting for you: ask a question with Steer first.")
            reply = make(*given)
            with ctx.job_slot(session, request):
                try:
                    run.advance(reply)
                except MadqaError as exc:
                    raise shown_error(str(exc)) from None
            return shown(run, kept or [], session)
        return handler

    outputs = [parts.live, parts.rows, parts.chat, parts.proposal, parts.calls, parts.score, parts.download,
               parts.approve, parts.edit, parts.answer_btn]
    parts.start.click(begin, [question, *panel.inputs, ctx.session, parts.rows], outputs, api_name="steer_start")
    parts.approve.click(reply_with(lambda: None, []), [parts.live, parts.rows, ctx.session], outputs,
                        api_name="steer_approve")
    parts.edit.click(reply_with(lambda text: SteerReply(calls=parse_calls(text)), ["calls"]),
                     [parts.live, parts.rows, parts.calls, ctx.session], outputs, api_name="steer_edit")
    parts.answer_btn.click(reply_with(lambda a, c: SteerReply(answer=parse_answer(a, c)), ["answer", "citations"]),
                           [parts.live, parts.rows, parts.answer, parts.cites, ctx.session], outputs,
                           api_name="steer_answer")


# each steered row wrote one more madqa-steer-* folder, never deleted: Gradio copies a returned file into its
# cache before sending it, so the latest few are enough (a session steers at most 2 questions at once)
STEER_FOLDERS_KEPT = 8
_steer_folders: list[Path] = []
_steer_folders_lock = threading.Lock()


def _keep_latest(folder: Path) -> None:
    """``folder`` is being returned; delete all but the ``STEER_FOLDERS_KEPT`` latest (like ``EvalFolders``,
    which madqa.ui.evaluate holds: it imports this module)."""
    with _steer_folders_lock:
        _steer_folders.append(folder)
        old = _steer_folders[:-STEER_FOLDERS_KEPT]
        del _steer_folders[:-STEER_FOLDERS_KEPT]
    for path in old:
        shutil.rmtree(path, ignore_errors=True)


@atexit.register
def _remove_steer_folders() -> None:
    for path in list(_steer_folders):
        shutil.rmtree(path, ignore_errors=True)


def write_rows(rows: list[dict[str, Any]]) -> str:
    """The session's steered rows as a JSONL file to download (older folders are deleted)."""
    folder = Path(tempfile.mkdtemp(prefix="madqa-steer-"))
    path = folder / "steered.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    _keep_latest(folder)
    return str(path)

