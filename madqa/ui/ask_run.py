"""What one question of the Ask tab does, apart from Gradio: its updates, each a typed ``AskUpdate``.

``answer_question`` runs the agent on the session's collection and yields what the tab shows after every step (the
chat, the pages found and cited, their references); the Ask tab's handler only puts an update onto its components.
Tested without a running app (``tests/test_ask_run.py``).
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from madqa.agent import Agent
from madqa.conversation import ChatTurn, add_turn
from madqa.errors import MadqaError
from madqa.settings import PipelineConfig
from madqa.trace import Trace
from madqa.types import AnswerStep, PageRef, SearchStep, Step, ToolStep
from madqa.ui.collection_picker import collection_status, partial_note
from madqa.ui.config_panel import describe
from madqa.ui.context import AppContext
from madqa.ui.given_marks import give_answer_marks
from madqa.ui.messages import (
    Message,
    StepChat,
    md_escape,
    pending_message,
    plural,
    thumbnail_caption,
    trace_message,
    user_message,
)
from madqa.ui.model_access import key_problem
from madqa.ui.model_bar import answerer
from madqa.ui.pages import THUMB_BUDGET_PX, page_file
from madqa.ui.policy import visitor_steps
from madqa.ui.scope_picker import scope_line
from madqa.ui.sessions import MINE

Picture = tuple[str, str]  # a gallery item: (image path, caption)


@dataclass(frozen=True)
class AskQuestion:
    """A question as the Ask tab hands it over: its text, the chat so far and how it is to be answered."""

    text: str
    config: PipelineConfig
    options: dict[str, Any]
    session: Any
    keys: list[str] | None = None  # the visitor's budget keys (``AppContext.job_slot``)
    history: Sequence[Message] = ()  # the chat's messages before this question
    turns: tuple[ChatTurn, ...] = ()  # the conversation this question follows up (empty: a question on its own)
    scope: tuple[str, ...] = ()  # the documents searched (empty: all)


@dataclass(frozen=True)
class AskUpdate:
    """What the Ask tab shows after one step of a question."""

    chat: list[Message]  # every message of the chat, the earlier questions' first
    seen: list[Picture]  # "Pages found": each page a search newly showed the model
    cited: list[Picture]  # "Cited pages": each page the answer cites that could be drawn
    seen_refs: list[list[Any]]  # per seen picture: [collection, file, page]
    cited_refs: list[list[Any]]  # per cited picture: [collection, file, page, [quotes, answer words]]
    first: bool = False  # the question's first update: the question box and the page viewer are cleared
    turns: tuple[ChatTurn, ...] | None = None  # the conversation with this question in it (the last update only)


def run_steps(ctx: AppContext, session: Any, corpus_key: str, config: PipelineConfig,
              options: dict[str, Any], question: str, trace: Trace,
              keys: list[str] | None = None, conversation: tuple[ChatTurn, ...] = (),
              scope: tuple[str, ...] = ()) -> Iterator[Step | str]:
    """The agent's steps for ``question``; plain strings are status lines while the corpus loads.

    With ``keys`` (the visitor's, from ``AppContext.job_slot``) a run on the server's keys is charged to their
    budgets there (a spent one forces the answer, flagged "stopped early"). Raises MadqaError when the corpus or
    a component cannot be used, or the question's time runs out. ``conversation``: the turns before a follow-up;
    ``scope``: the documents searched (empty: all; ScopeError for one the corpus lacks).
    """
    if corpus_key != MINE:  # a shared collection: what is searchable so far, once its first round is in
        collection = ctx.sessions.shared_collection(corpus_key)
        while not collection.wait_searchable(0.5):
            yield collection_status(collection)
    corpus = ctx.sessions.corpus(session, corpus_key)
    config = ctx.bounded(config, corpus_key, corpus)
    agent = Agent(corpus, config, ctx.registry, ctx.settings, options)
    steps = trace.follow(visitor_steps(agent.run(question, budget=ctx.budgets(keys, config, options), conversation=conversation,
                                                scope=scope), options))
    yield from ctx.timed(steps, keys)


def thumbnails(ctx: AppContext, session: Any, corpus_key: str,
               step: SearchStep | ToolStep) -> list[tuple[str, str, PageRef]]:
    """(image path, caption, page) of every page a search (or a navigation tool) newly showed the model."""
    corpus = ctx.sessions.corpus(session, corpus_key)
    out = []
    for ref in step.new_pages:
        try:
            out.append((str(page_file(corpus, ref, ctx.settings, THUMB_BUDGET_PX)), thumbnail_caption(ref, step), ref))
        except (MadqaError, OSError):
            continue  # the model saw it; the browser just gets no thumbnail (a full disk, say)
    return out


def cited_pages(ctx: AppContext, session: Any, corpus_key: str, step: AnswerStep) -> list[tuple[Picture, list[Any]]]:
    """(picture, reference with its marks) of every page ``step`` cites that could be drawn; one that could not (a
    full disk, say) is left out."""
    out = []
    for n, ref in enumerate(step.citations):
        try:
            path = page_file(ctx.sessions.corpus(session, corpus_key), ref, ctx.settings, THUMB_BUDGET_PX)
        except (MadqaError, OSError):
            continue
        quote = step.quote_of(n)
        out.append(((str(path), thumbnail_caption(ref)),
                    [corpus_key, ref.file, ref.page, [[quote] if quote else [], list(step.answer)]]))
    return out


def other_collection(ctx: AppContext, turns: tuple[ChatTurn, ...], corpus_key: str) -> str:
    """When the chat's last turn searched another collection than ``corpus_key`` (the visitor switched in the picker
    mid-conversation), the note that this question is asked on its own; else ''. Its earlier turns' pages are not in
    this collection: a follow-up took them as its context (a model was offered pages it could not open) or was
    rewritten from a question about other documents, and nothing said so."""
    before = turns[-1].collection if turns else ""
    if not before or before == corpus_key:
        return ""
    return (f"asked on its own, not as a follow-up: the earlier turns of this chat searched {collection_name(ctx, before)}, "
            f"this question {collection_name(ctx, corpus_key)}")


def collection_name(ctx: AppContext, key: str) -> str:
    """A collection as the status line names it: 'the demo corpus', 'your uploads' or its own name."""
    if key == MINE:
        return "your uploads"
    collection = ctx.sessions.shared.get(key)
    return "the demo corpus" if collection is not None and collection.name == "demo" else key


def starting_note(turns: tuple[ChatTurn, ...], moved: str, scope: tuple[str, ...], partial: str) -> str:
    """What the "Starting" line adds to the config: a follow-up of how many turns, asked on its own (``moved``),
    the documents searched, how much of a collection still indexing is searchable."""
    note = f" · a follow-up: {plural(len(turns), 'earlier turn')} go with it" if turns else ""
    for part in (moved, f"searching only {', '.join(scope)}" if scope else "", partial):
        note += f" · {part}" if part else ""
    return note


@dataclass
class AskView:
    """The tab's state while one question runs: its chat and the pages shown so far."""

    chat: StepChat
    text: str
    history: list[Message]
    started: float = field(default_factory=time.perf_counter)
    seen: list[Picture] = field(default_factory=list)
    seen_refs: list[list[Any]] = field(default_factory=list)
    cited: list[Picture] = field(default_factory=list)
    cited_refs: list[list[Any]] = field(default_factory=list)

    def update(self, pending: Message | None = None, done: bool = False, first: bool = False,
               turns: tuple[ChatTurn, ...] | None = None) -> AskUpdate:
        """The tab as it stands, with ``pending`` (the spinner until the next step) under the trace line."""
        trace_id = self.chat.trace_id
        if pending is not None:
            pending["metadata"]["parent_id"] = trace_id
        summary = trace_message(trace_id, self.chat.steps, time.perf_counter() - self.started, done)
        shown = [*self.history, user_message(self.text), summary, *self.chat.thoughts, *([pending] if pending else []),
                 *self.chat.after]
        return AskUpdate(shown, list(self.seen), list(self.cited), list(self.seen_refs), list(self.cited_refs),
                         first=first, turns=turns)


def answer_question(ctx: AppContext, question: AskQuestion) -> Iterator[AskUpdate]:
    """The Ask tab's updates while ``question`` is answered: first the "Starting" line (or why the model cannot be
    reached), then one per step, last one with the conversation that now holds it.

    A question asked after the visitor switched collections mid-chat is asked on its own and says so, in its
    "Starting" line and in its answer's flags; an answer from a collection still indexing says how much was searched.
    """
    corpus_key = ctx.sessions.key_of(question.session)
    config = question.config
    view = AskView(StepChat(f"trace-{len(question.history)}", corpus_key, config.backend, config.model,
                            [question.options.get("api_key", "")], label=answerer(ctx.registry, config.backend,
                                                                                  config.model),
                            scope_note=scope_line(question.scope)), question.text, list(question.history))
    problem = key_problem(config, question.options)
    if problem:
        view.chat.unreachable(problem)
        yield view.update(done=True, first=True)
        return
    moved = other_collection(ctx, question.turns, corpus_key)
    turns = () if moved else question.turns  # the earlier turns searched another collection: not this one's pages
    collection = ctx.sessions.shared.get(corpus_key)
    partial = partial_note(collection) if collection is not None else ""
    note = starting_note(turns, moved, question.scope, partial)
    yield view.update(pending_message("Starting", md_escape(describe(config) + note)), first=True)
    final = yield from stream_steps(ctx, replace(question, turns=turns), view, moved, partial)
    kept = add_turn(turns, question.text, final)
    yield view.update(done=True, turns=(*kept[:-1], replace(kept[-1], collection=corpus_key)))


def stream_steps(ctx: AppContext, question: AskQuestion, view: AskView, moved: str,
                 partial: str) -> Generator[AskUpdate, None, AnswerStep | None]:
    """An update per step of the agent's run, then its answer (None when it failed or there was none)."""
    corpus_key = view.chat.corpus_key
    collection = ctx.sessions.shared.get(corpus_key)
    trace = Trace(question.text, question.config)
    final: AnswerStep | None = None
    searched = False
    try:
        for item in run_steps(ctx, question.session, corpus_key, question.config, question.options, question.text,
                              trace, question.keys, question.turns, question.scope):
            if isinstance(item, str):
                yield view.update(pending_message("Waiting for the collection's first files to be indexed", item))
                continue
            if isinstance(item, SearchStep) and collection is not None and not searched:
                searched, partial = True, partial_note(collection)  # as it stood when the searching began
            if isinstance(item, AnswerStep):  # "no answer" from 1 of 9 files says so; so does a switch mid-chat
                item = replace(item, flags=(*item.flags, *(f for f in (partial, moved) if f)))
            pending = view.chat.add(item)
            if isinstance(item, (SearchStep, ToolStep)):
                for path, caption, ref in thumbnails(ctx, question.session, corpus_key, item):
                    view.seen.append((path, caption))
                    view.seen_refs.append([corpus_key, ref.file, ref.page])
            if isinstance(item, AnswerStep):
                final = item if item.failure is None else None
                give_answer_marks(ctx.marks, question.session, corpus_key, item)
                for picture, ref_marks in cited_pages(ctx, question.session, corpus_key, item):
                    view.cited.append(picture)
                    view.cited_refs.append(ref_marks)
            yield view.update(pending, done=pending is None)
    except MadqaError as exc:
        view.chat.problem(str(exc))
        yield view.update(done=True)
    return final
