"""Which collection the agent searches, picked in Ask, Compare, Evaluate and You search: the demo corpus, the
operator's collections and the visitor's uploads, each with its size and status.

Every picker writes the session's choice (``session["corpus"]``), so the tabs agree; a pick updates the other
pickers, the status line and the question lists (a collection's own question set, ``madqa.collections``). The
status words of a shared collection are made here too: while it indexes it says how much is searchable already.
"""

from __future__ import annotations

from collections.abc import Callable
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


def build_picker(ctx: Any, elem_id: str, **kwargs: Any) -> gr.Dropdown:
    """A collection picker (registered with ``ctx`` so ``wire_pickers`` links it to the others)."""
    picker = gr.Dropdown(picker_choices(ctx, None), value=ctx.sessions.default_key, label=LABEL,
                         elem_id=elem_id, interactive=True, **kwargs)
    ctx.pickers.append(picker)
    return picker


def question_update(ctx: Any, key: str) -> Any:
    """A question list's choices for collection ``key`` (its own question set; none for uploads)."""
    choices = ctx.question_choices_for(key)
    return gr.Dropdown(choices=choices, value=None, visible=bool(choices))


def wire_pickers(ctx: Any) -> Callable[[Any], tuple[Any, ...]]:
    """Link every registered picker: a pick sets the session's collection and updates the others, the status line
    and the question lists. Returns ``refresh(session)`` giving the pickers' updates (for a timer, a tab opened)."""
    pickers = list(ctx.pickers)
    questions = list(ctx.question_lists)
    header = [ctx.header] if ctx.header is not None else []

    def refresh(session: Any) -> tuple[Any, ...]:
        update = gr.Dropdown(choices=picker_choices(ctx, session), value=chosen(ctx, session))
        return tuple(update for _ in pickers)

    def pick(key: str, session: Any) -> tuple[Any, ...]:
        session = session if isinstance(session, dict) and valid_token(session.get("token")) else \
            new_session(ctx.sessions.default_key)
        if key != MINE and key not in ctx.sessions.shared:
            key = chosen(ctx, session)
        session = {**session, "corpus": key}
        ctx.sessions.touch(session["token"])
        lists = tuple(question_update(ctx, key) for _ in questions)
        return (session, *refresh(session), *lists, *(ctx.header_text(session) for _ in header))

    for picker in pickers:
        picker.input(pick, [picker, ctx.session], [ctx.session, *pickers, *questions, *header],
                     api_visibility="private", queue=False)
    return refresh
