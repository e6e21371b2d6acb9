"""What the empty Ask chat offers for the collection being searched: its documents in one line and one-click example
questions from its question set. Both follow the collection picker, so neither names another collection's documents
nor asks another collection's questions."""

from __future__ import annotations

from typing import Any

from madqa.index import find_pdfs
from madqa.ui.context import AppContext
from madqa.ui.messages import md_escape, shorten
from madqa.ui.sessions import DEMO, MINE, valid_token

EXAMPLES_SHOWN = 4
NAMES_SHOWN = 12


def example_questions(ctx: AppContext, key: str | None = None, n: int = EXAMPLES_SHOWN) -> list[dict[str, str]]:
    """One-click example questions of collection ``key`` (default: the app's): one per document category, in file
    order; none for a collection without a question set (the visitor's uploads)."""
    picked: list[dict[str, Any]] = []
    categories: set[Any] = set()
    for q in ctx.questions_for(key or ctx.sessions.default_key):
        category = q.get("document_category") or q.get("domain")
        if category not in categories:
            categories.add(category)
            picked.append(q)
        if len(picked) == n:
            break
    return [{"text": q["question"], "display_text": shorten(q["question"], 80)} for q in picked]


def documents_strip(ctx: AppContext, key: str | None = None, session: Any = None) -> str:
    """The documents of collection ``key`` (default: the app's; ``MINE``: the session's uploads) in one line, so a
    visitor sees what can be asked about; '' when it has none."""
    key = key or ctx.sessions.default_key
    if key == MINE:
        token = session.get("token", "") if isinstance(session, dict) else ""
        mine = ctx.sessions.own_corpus(token) if valid_token(token) else None
        return _strip("Your documents", sorted(mine.documents) if mine else [])
    collection = ctx.sessions.shared.get(key)
    if collection is None:
        return ""
    root = collection.root
    docs = [p.relative_to(root).as_posix() for p in find_pdfs(root)] if root.is_dir() else []
    return _strip("Demo documents" if collection.name == DEMO else f"Documents of {md_escape(collection.name)}", docs)


def _strip(whose: str, docs: list[str]) -> str:
    if not docs:
        return ""
    names = " · ".join(f"📄 {md_escape(name.rsplit('/', 1)[-1])}" for name in docs[:NAMES_SHOWN])
    more = f" · and {len(docs) - NAMES_SHOWN} more" if len(docs) > NAMES_SHOWN else ""
    return f"**{whose}:** {names}{more}"
