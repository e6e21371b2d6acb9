"""Limits that keep one search cheap whatever its text: wildcard expansion and a time budget.

The BM25 retrievers (``whoosh``, ``tantivy``) share these, so the CLI's ``search``, the web app's
search box and the agent's search tool are bounded alike. ``*a* *b* *c* ...`` used to expand every
pattern to most of the term dictionary (109 s and GBs of memory on one search); now:

- at most ``MAX_WILDCARDS`` wildcard words per query are expanded, the rest are dropped (noted);
- a pattern starting with ``*`` or ``?`` scans the whole term dictionary, so it needs at least
  ``MIN_LEADING_CHARS`` literal characters (``*port`` yes, ``*a*`` no: dropped, noted);
- a pattern expands to its ``MAX_EXPANSION`` most frequent terms, scanning at most ``MAX_SCANNED``;
- each search has a time budget (``MADQA_SEARCH_TIMEOUT_S``, default 5 s: the ``search_timeout_s``
  setting, which the registry hands a retriever factory taking ``settings``); past it the search stops
  and returns what it found, with a note saying the result may be partial.
"""

from __future__ import annotations

import heapq
import re
import time
from collections.abc import Callable, Iterable

MAX_WILDCARDS = 4
MIN_LEADING_CHARS = 3
MAX_EXPANSION = 256
MAX_SCANNED = 500_000
DEFAULT_TIMEOUT_S = 5.0
PARTIAL_NOTE = "the search stopped at its time budget of {:g} s; these results may be partial (use fewer wildcards)"
_WILD = re.compile(r"[*?]")


class SearchBudget:
    """One search's budget: a deadline, a count of wildcard words, and the notes about what was cut.

    ``seconds``: the retriever's ``settings.search_timeout_s`` (None: ``DEFAULT_TIMEOUT_S``)."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = DEFAULT_TIMEOUT_S if seconds is None else seconds
        self.deadline = time.monotonic() + self.seconds
        self.wildcards = 0
        self.notes: set[str] = set()
        self.cut: dict[str, list[str]] = {}  # what was cut -> the patterns it was cut for
        self._taken: set[str] = set()

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self.deadline

    def stop(self) -> None:
        """Record that the search ran out of time (its result is partial)."""
        self.notes.add(PARTIAL_NOTE.format(self.seconds))

    def allow(self, pattern: str) -> bool:
        """True when wildcard word ``pattern`` may be expanded; False (with a note) when it is dropped.

        The same pattern seen again (a fallback attempt re-parses the query) is allowed without
        counting twice."""
        if pattern in self._taken:
            return True
        literal = _WILD.sub("", pattern)
        if pattern[:1] in ("*", "?") and len(literal) < MIN_LEADING_CHARS:
            self._cut(f"a wildcard starting with * or ? needs at least {MIN_LEADING_CHARS} letters; ignored", pattern)
            return False
        if self.wildcards >= MAX_WILDCARDS:
            self._cut(f"only the first {MAX_WILDCARDS} wildcard words are expanded; ignored", pattern)
            return False
        self.wildcards += 1
        self._taken.add(pattern)
        return True

    def _cut(self, what: str, pattern: str) -> None:
        patterns = self.cut.setdefault(what, [])
        if pattern not in patterns:
            patterns.append(pattern)

    def with_notes(self, note: str | None) -> str | None:
        """``note`` and then what the limits cut, joined by '; ' (None when there is nothing to say)."""
        cut = [f"{what}: {', '.join(repr(p) for p in patterns)}" for what, patterns in self.cut.items()]
        return "; ".join(n for n in (note, *sorted(self.notes), *cut) if n) or None

    def top_terms(self, pattern: str, scanned: Iterable[tuple[str, int]],
                  match: Callable[[str], object] | None = None) -> list[str]:
        """The ``MAX_EXPANSION`` most frequent matching terms of ``scanned`` ((term, document
        frequency) pairs), scanning at most ``MAX_SCANNED`` and stopping at the deadline."""
        best: list[tuple[int, str]] = []
        for count, (term, freq) in enumerate(scanned, 1):
            if count % 2048 == 0 and self.expired():
                self.stop()
                break
            if count > MAX_SCANNED:
                self._cut(f"only the first {MAX_SCANNED:,} words of the dictionary were looked at for", pattern)
                break
            if match is not None and not match(term):
                continue
            if len(best) < MAX_EXPANSION:
                heapq.heappush(best, (freq, term))
            elif freq > best[0][0]:
                heapq.heapreplace(best, (freq, term))
        if len(best) == MAX_EXPANSION:
            self._cut(f"more than {MAX_EXPANSION} words match, so the {MAX_EXPANSION} most frequent were searched, "
                      "for", pattern)
        return [term for _, term in sorted(best, key=lambda x: (-x[0], x[1]))]


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A compiled regex for a ``*``/``?`` pattern of word characters (everything else literal)."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern))


def literal_prefix(pattern: str) -> str:
    """The characters of ``pattern`` before its first wildcard."""
    return _WILD.split(pattern, maxsplit=1)[0]
