"""Ask's scope picker: what the agent searches, "All documents" or one or several documents of the collection
the session searches (the demo, an operator's collection, or the visitor's uploads), passed to ``Agent.run(scope=...)`` (``madqa.scope``).

Its choices follow the session: drawn with the demo's documents, redrawn when the session switches
collection or uploads (the session state changes), keeping the documents still there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gradio as gr

from madqa.errors import MadqaError
from madqa.index import find_pdfs
from madqa.scope import scope_options
from madqa.ui.context import AppContext
from madqa.ui.messages import md_escape

ALL = "All documents"


def scope_choices(ctx: AppContext, session: Any) -> list[tuple[str, str]]:
    """(label, file) of every document the session's collection holds: its page count once it is indexed."""
    key = ctx.sessions.key_of(session)
    shared = ctx.sessions.shared.get(key)
    if shared is not None and not shared.wait_searchable(0):  # nothing indexed yet: the names, from the folder
        root = shared.root
        return [(name, name) for name in (p.relative_to(root).as_posix() for p in find_pdfs(root))] \
            if root.is_dir() else []
    try:
        return scope_options(ctx.sessions.corpus(session, key).documents)
    except MadqaError:  # no uploads yet, or the demo failed: nothing to choose (Ask says why when asked)
        return []


def build_scope_picker(ctx: AppContext) -> gr.Dropdown:
    """The picker (empty: all documents); its choices follow the session's collection."""
    picker = gr.Dropdown(scope_choices(ctx, None), value=[], multiselect=True, label="Search in",
                         info=f"{ALL}, or only the ones you pick",
                         elem_id="ask-scope", min_width=240)
    if ctx.session is not None:
        ctx.session.change(lambda session, chosen: scope_update(ctx, session, chosen), [ctx.session, picker], [picker],
                           queue=False, api_visibility="private")
    return picker


def scope_update(ctx: AppContext, session: Any, chosen: list[str] | None, key: str | None = None) -> Any:
    """The picker for the session's collection (``key``: the one just picked, the session may not say so yet): its
    documents as choices, of those chosen only the ones it holds."""
    if key is not None:
        session = {**(session if isinstance(session, dict) else {}), "corpus": key}
    choices = scope_choices(ctx, session)
    names = {value for _, value in choices}
    return gr.Dropdown(choices=choices, value=[c for c in chosen or [] if c in names])


def follow_collection_picker(ctx: AppContext, collection: gr.Dropdown, picker: gr.Dropdown) -> None:
    """Redraw ``picker`` when ``collection`` (Ask's collection picker) changes. The session's change alone did not: a
    pick answers unqueued, and the page fires a State's change only on a queued answer, so the documents of the
    collection left stayed chosen and the next question failed ('... is not a document of this collection')."""
    collection.change(lambda key, session, chosen: scope_update(ctx, session, chosen, key),
                      [collection, ctx.session, picker], [picker], queue=False, api_visibility="private")


def chosen_scope(chosen: Sequence[str] | str | None) -> tuple[str, ...]:
    """The picker's value as file names (empty: all documents). Checked against the collection by the agent
    (``Agent.run`` raises ScopeError for a name it lacks: a client that skips the browser), said in the chat."""
    if not chosen:
        return ()
    return tuple(dict.fromkeys(str(c) for c in ([chosen] if isinstance(chosen, str) else chosen) if str(c).strip()))


def scope_line(files: Sequence[str]) -> str:
    """The line shown with an answer that searched only some documents (Markdown); empty for all."""
    if not files:
        return ""
    shown = ", ".join(md_escape(f) for f in files[:8]) + (f" and {len(files) - 8} more" if len(files) > 8 else "")
    return f"🔎 _Searched only: {shown}._"
