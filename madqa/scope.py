"""Searching one document or a chosen set: the files a search is limited to, for every retriever.

A scope is a set of file names of the corpus (empty: the whole collection). It reaches a search two ways:
chosen beside the question (Ask's scope picker, ``madqa ask --file``, ``Agent.run(scope=...)``) and written
in the query itself as ``file:NAME`` (``file:"annual report.pdf"`` for a name with spaces); the two
intersect when both are given.

A retriever that declares ``filters_files = True`` (``madqa.CAPABILITIES``) takes ``files=`` in its
``search`` and returns hits from those files only. Any other retriever (a third party's that ignores the
argument) is asked for more hits and filtered here, so a scope holds whatever the retriever: the
post-filter also runs after a retriever that filters itself, which costs nothing when it did its job.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from madqa.errors import ScopeError
from madqa.protocols import Retriever, retriever_filters_files
from madqa.types import SearchResult

POST_FILTER_DEPTH = 10  # a retriever that cannot filter is asked for this many times k hits ...
POST_FILTER_MAX = 1000  # ... at most, then hits outside the scope are dropped
_FILE_TERM = re.compile(r'(?<![\w:])file:(?:"([^"]+)"|(\S+))', re.IGNORECASE)


@dataclass(frozen=True)
class ScopedQuery:
    """A query with its ``file:`` terms taken out: what the retriever runs, and the files they name."""

    query: str
    files: tuple[str, ...]  # resolved to the corpus's own names; empty when the query names none


def resolve_files(names: Iterable[str], documents: Collection[str]) -> tuple[str, ...]:
    """The corpus's names for ``names``: exact, then case-insensitive, then without ``.pdf`` or folders.

    Raises ScopeError for a name that matches no document, or more than one."""
    by_lower: dict[str, list[str]] = {}
    for doc in documents:
        for key in _keys(doc):
            by_lower.setdefault(key, []).append(doc)
    out: list[str] = []
    for name in names:
        if name in documents:
            out.append(name)
            continue
        found = sorted(set(next((by_lower[k] for k in _keys(name) if k in by_lower), [])))
        if len(found) != 1:
            some = ", ".join(sorted(documents)[:8]) + (", ..." if len(documents) > 8 else "")
            why = "matches several documents: " + ", ".join(found[:5]) if found else "is not a document of this collection"
            raise ScopeError(f"file {name!r} {why} (documents: {some})")
        out.append(found[0])
    return tuple(dict.fromkeys(out))


def parse_scope(query: str, documents: Collection[str]) -> ScopedQuery:
    """``query`` with its ``file:NAME`` terms taken out and their names resolved (ScopeError if one is unknown)."""
    named = [m.group(1) or m.group(2) for m in _FILE_TERM.finditer(query)]
    if not named:
        return ScopedQuery(query, ())
    rest = " ".join(_FILE_TERM.sub(" ", query).split())
    return ScopedQuery(rest, resolve_files(named, documents))


def combine(chosen: Collection[str], named: Collection[str]) -> tuple[str, ...] | None:
    """The files a search may return: the chosen scope and the query's ``file:`` names together.

    None means the whole collection. Both given: their intersection (a file outside the chosen scope
    cannot be searched by naming it); ScopeError when that leaves nothing."""
    if not chosen and not named:
        return None
    if not chosen:
        return tuple(named)
    if not named:
        return tuple(chosen)
    both = tuple(f for f in named if f in set(chosen))
    if not both:
        raise ScopeError("the query names " + ", ".join(named) + ", outside the chosen scope ("
                         + ", ".join(sorted(chosen)) + ")")
    return both


def search_scoped(retriever: Retriever, query: str, k: int, files: Collection[str] | None) -> SearchResult:
    """``retriever.search`` limited to ``files`` (None: the whole collection), whatever the retriever does."""
    if files is None:
        return retriever.search(query, k)
    wanted = frozenset(files)
    if retriever_filters_files(retriever):
        result = retriever.search(query, k, files=wanted)  # type: ignore[call-arg]
        depth = k
    else:
        depth = min(max(k * POST_FILTER_DEPTH, k), POST_FILTER_MAX)
        result = retriever.search(query, depth)
    hits = tuple(h for h in result.hits if h.ref.file in wanted)[:k]
    note = result.note
    if len(hits) < k and len(result.hits) >= depth and not retriever_filters_files(retriever):
        extra = (f"searched the best {depth} pages of the collection, {len(hits)} of them in the scope "
                 "(this retriever cannot search within files)")
        note = f"{note}; {extra}" if note else extra
    return SearchResult(hits, result.query, note)


def search_as_written(retriever: Retriever, written: str, k: int, documents: Collection[str],
                      chosen: Collection[str] = ()) -> SearchResult:
    """A person's search box (``madqa search``, the app's You search and corpus tabs): the query's
    ``file:NAME`` terms taken out, the rest searched within them and the ``chosen`` files (names as the
    corpus has them). ScopeError for an unknown name, or a query of ``file:`` terms alone."""
    scoped = parse_scope(written, documents)
    if not scoped.query:
        raise ScopeError("the query has only file: terms; add the words to search for in the file")
    return search_scoped(retriever, scoped.query, k, combine(chosen, scoped.files))


def describe_scope(files: Collection[str] | None) -> str | None:
    """The sentence telling the model (and the trace) what is searched; None for the whole collection."""
    if not files:
        return None
    names = sorted(files)
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    one = len(names) == 1
    return (f"Search is limited to {'one document' if one else f'{len(names)} documents'} of the collection: "
            f"{shown}. search_documents returns pages of {'it' if one else 'these'} only.")


def scope_options(documents: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, file) choices for a scope picker: each document with its page count."""
    return [(f"{name} ({getattr(doc, 'pages', '?')} p.)", name) for name, doc in sorted(documents.items())]


def _keys(name: str) -> list[str]:
    low = name.strip().lower()
    base = low.rsplit("/", 1)[-1]
    stems = [k[:-4] for k in (low, base) if k.endswith(".pdf")]
    return list(dict.fromkeys([low, base, *stems]))
