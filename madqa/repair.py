"""Checks that a stored corpus generation reads back whole, so a truncated or corrupt one is rebuilt.

A truncated Whoosh segment or table of contents, page store (``pages.sqlite``) or manifest used to give
raw tracebacks from ``search`` and ``index``, and ``index`` never repaired it (it reused the damage).
``ingest`` now checks the previous generation before reusing any of it; when the check fails it reads
every PDF again into a new generation and says so. Retrievers may offer ``check_index(folder)`` on
their factory (a reason, or None when the index opens and reads back).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from madqa.corpus import PAGES_DB, Corpus
from madqa.protocols import retriever_indexing


def check_pages(corpus: Corpus) -> str | None:
    """Why the page store cannot be trusted, or None: sqlite's quick check and one row per page."""
    try:
        db = sqlite3.connect((corpus.gen_dir / PAGES_DB).as_uri() + "?mode=ro", uri=True)
        try:
            verdict = db.execute("PRAGMA quick_check").fetchone()[0]
            rows = db.execute("SELECT count(*) FROM pages").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error as exc:
        return f"page store: {exc}"
    if verdict != "ok":
        return f"page store: {verdict}"
    if rows != corpus.page_count:
        return f"page store: {rows} pages stored, the manifest says {corpus.page_count}"
    return None


def check_generation(corpus: Corpus, registry: Any) -> str | None:
    """Why ``corpus``'s generation cannot be reused (a plain reason), or None when it reads back whole."""
    problem = check_pages(corpus)
    if problem:
        return problem
    for name in registry.names("retriever"):
        check = retriever_indexing(registry.get("retriever", name).factory).check_index
        folder = corpus.retriever_dir(name)
        if check is None or not folder.is_dir():
            continue
        try:
            problem = check(folder, corpus.page_count)
        # kept broad: a check reads a stored index that may be truncated or corrupt, and the engine's library
        # raises any type then; a check that trips is a damaged index too (its reason, with the type, is reported)
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            return f"the {name} index: {problem}"
    return None
