"""What query strategies read from the search history (not a plugin: a helper ``drift`` and
``llm-rewrite`` share, so they agree on what "too close" and "stale" mean)."""

from __future__ import annotations

from typing import Any

import madqa


def norm(query: str) -> str:
    """A query lower-cased with its whitespace collapsed: two queries equal so are the same query."""
    return " ".join(query.lower().split())


def past_queries(state: Any) -> list[str]:
    """Every earlier query, as run then as written, without repeats."""
    return list(dict.fromkeys(list(getattr(state, "queries", []) or []) + list(getattr(state, "written", []) or [])))


def closest_query(query: str, past: list[str]) -> tuple[str, float]:
    """The query of ``past`` (not empty) most like ``query`` by the reports' lexical similarity,
    and that similarity."""
    closest = max(past, key=lambda p: madqa.lexical_similarity(query, p))
    return closest, madqa.lexical_similarity(query, closest)


def last_search_stale(state: Any) -> bool:
    """True when the previous search showed no page not seen before."""
    counts = list(getattr(state, "new_page_counts", []) or [])
    return bool(counts) and counts[-1] == 0
