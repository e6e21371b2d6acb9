"""Which collection the agent searches, picked in Ask, Compare, Evaluate and You search: the demo corpus, the
operator's collections and the visitor's uploads, each with its size and status.

Every picker writes the session's choice (``session["corpus"]``), so the tabs agree; a pick updates the other
pickers, the status line and the question lists (a collection's own question set, ``madqa.collections``). The
status words of a shared collection are made here too: while it indexes it says how much is searchable already.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from madqa.collection_index import SharedCollection
from madqa.ui.messages import md_escape, plural
from madqa.ui.sessions import DEMO, MINE, new_session, page_words, valid_token

LABEL = "Collection"


def collection_status(collection: SharedCollection) -> str:
    """A shared collection's state in one Markdown line: indexing (how far, what is searchable), ready, or why not."""
    state = collection.state()
    name = "the demo corpus" if collection.name == DEMO else f"**{md_escape(collection.name)}**"
    failed = (f" · ⚠ {plural(len(state.failures), 'file')} could not be indexed: "
              + "; ".join(f"{md_escape(f)} ({md_escape(r)})" for f, r in state.failures[:3])
              + (" …" if len(state.failures) > 3 else "")) if state.failures else ""
    if state.error and not state.indexed_files:
        return f"⚠ {name[0].upper() + name[1:]} is unavailable: {md_escape(state.error)}"
    if state.indexing:
        where = ""
        if state.current:
            file, done, total = state.current
            where = f": file {done} of {total}, {md_escape(file)}"
            if state.page:
                where += f" ({md_escape(page_words(*state.page))})"
        if not state.indexed_files:
            return f"Indexing {name} (first start){where}…{failed}"
        return (f"Indexing {name}{where}… searchable now: {state.indexed_files} of {plural(state.files, 'file')}, "
                f"{plural(state.pages, 'page')}{failed}")
    if collection.name == DEMO:
        return f"Demo corpus ready: {state.indexed_files} documents, {state.pages} pages.{failed}"
    return f"{name} ready: {plural(state.indexed_files, 'document')}, {plural(state.pages, 'page')}.{failed}"


def partial_note(collection: SharedCollection) -> str:
    """For an answer from a collection still indexing: how much of it was searched ('' once it is whole)."""
    state = collection.state()
    if not state.indexing or not state.files:
        return ""
    return (f"{collection.name} is still being indexed: searching {state.indexed_files} of "
            f"{plural(state.files, 'file')} ({plural(state.pages, 'page')}) indexed so far")


def collection_label(collection: SharedCollection) -> str:
    """The picker's words for a shared collection: its name, size and, while it indexes, how far."""
    state = collection.state()
    name = "Demo corpus" if collection.name == DEMO else collection.name
    if state.error and not state.indexed_files:
        return f"{name} — unavailable"
    size = f"{plural(state.indexed_files, 'document')}, {plural(state.pages, 'page')}"
    if state.indexing:
        return f"{name} — indexing, {state.indexed_files} of {plural(state.files, 'file')} searchable" \
            if state.files else f"{name} — indexing…"
    failed = f", {len(state.failures)} failed" if state.failures else ""
    return f"{name} — {size}{failed}"


def picker_choices(ctx: Any, session: Any) -> list[tuple[str, str]]:
    """(label, key) of every collection a visitor may pick: the shared ones, then the visitor's uploads."""
    choices = [(collection_label(c), key) for key, c in ctx.sessions.shared.items()]
    token = session.get("token", "") if isinstance(session, dict) else ""
    mine = ctx.sessions.own_corpus(token) if valid_token(token) else None
    uploads = f"Your uploads — {plural(len(mine.documents), 'document')}" if mine else "Your uploads — none yet"
    return [*choices, (uploads, MINE)]


def chosen(ctx: Any, session: Any) -> str:
    """The key the session searches (the app's default until it picks one)."""
    return ctx.sessions.key_of(session)


def build_picker(ctx: Any, elem_id: str, questions: Any = None, **kwargs: Any) -> gr.Dropdown:
    """A collection picker, registered with ``ctx`` (with ``questions``, its tab's question list that follows the
    collection picked) so ``wire_pickers`` links it to the session's choice."""
    picker = gr.Dropdown(picker_choices(ctx, None), value=ctx.sessions.default_key, label=LABEL,
                         elem_id=elem_id, interactive=True, **kwargs)
    ctx.pickers.append((picker, questions))
    return picker


def follow_questions(ctx: Any, picker: gr.Dropdown, questions: Any) -> None:
    """Make ``questions`` (a question list built after ``picker``) follow the collection it picks."""
    ctx.pickers[:] = [(p, questions if p is picker else q) for p, q in ctx.pickers]


def picker_update(ctx: Any, session: Any) -> Any:
    """A picker's choices (sizes and status as they stand) and the session's choice.

    A change of choices is a change of the component's props: Gradio then keeps a session copy of it made without
    its page, and a tab sent later (``ui.lazy``) that holds it fails. So pickers and question lists of a tab not yet
    sent get values only (``wire_pickers``); their choices change once their tab is in the page."""
    return gr.update(choices=picker_choices(ctx, session), value=chosen(ctx, session))


def question_update(ctx: Any, key: str) -> Any:
    """A question list's choices for collection ``key`` (its own question set; none for uploads)."""
    choices = ctx.question_choices_for(key)
    return gr.update(choices=choices, value=None, visible=bool(choices))


@dataclass
class PickerRefresh:
    """What brings one tab's picker (and its question list) up to the session's choice: an event's fn and outputs."""

    fn: Callable[[Any], Any]
    outputs: list[Any]


def wire_pickers(ctx: Any) -> list[PickerRefresh]:
    """Link every registered picker to the session's choice: a pick sets it and the status line; a picker's new
    value sets its tab's question list. Nothing is sent to another tab's components (one not yet in the page would
    break its tab's send, ``picker_update``). Returns, per picker in the order built, what brings it up to the
    session's choice: run it once its tab is in the page, and when the tab is opened again."""
    header = [ctx.header] if ctx.header is not None else []
    refreshes = []
    for picker, questions in ctx.pickers:
        def pick(key: str, session: Any) -> tuple[Any, ...]:
            session = session if isinstance(session, dict) and valid_token(session.get("token")) else \
                new_session(ctx.sessions.default_key)
            if key != MINE and key not in ctx.sessions.shared:
                key = chosen(ctx, session)
            session = {**session, "corpus": key}
            ctx.sessions.touch(session["token"])
            return (session, *(ctx.header_text(session) for _ in header))

        def refresh(session: Any) -> tuple[Any, ...]:
            return (picker_update(ctx, session),)  # a new value sets the question list (its change event)

        picker.input(pick, [picker, ctx.session], [ctx.session, *header], api_visibility="private", queue=False)
        if questions is not None:  # its value set (here or by another tab's pick, once this tab is in the page)
            picker.change(lambda key: question_update(ctx, key), [picker], [questions], api_visibility="private",
                          queue=False)
        refreshes.append(PickerRefresh(refresh, [picker]))
    return refreshes
