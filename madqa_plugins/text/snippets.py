"""Page snippets for the built-in retrievers (not a plugin: a helper they share)."""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"\w+", re.UNICODE)
OPERATORS = ("AND", "OR", "NOT")


def query_words(query: str) -> list[str]:
    """The words of a query without its operators (AND/OR/NOT) and syntax."""
    return [w for w in _WORD.findall(query) if w not in OPERATORS]


def snippet(text: str, terms: Iterable[str], width: int = 200) -> str:
    """A short window of ``text`` around the first query term found, whitespace collapsed."""
    flat = " ".join(text.split())
    lowered = flat.lower()
    positions = [lowered.find(t.lower().strip("*?")) for t in terms if t.strip("*?")]
    positions = [p for p in positions if p >= 0]
    start = max(0, min(positions) - width // 4) if positions else 0
    piece = flat[start:start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")
