"""Word proximity for plain queries, shared by the BM25 retrievers (whoosh, tantivy, milvus); not a plugin.

BM25 scores each word on its own, so for "default line width" a page saying "line" at the top and
"width" at the bottom ranks like the page that writes "default line width". For a *plain* query
(no operator, quote or wildcard: ``madqa_plugins.text.query_language.plain_terms``) of several words, each
retriever fetches ``DEPTH`` candidates instead of k, and ``rerank`` raises a candidate's BM25 by the
share of the query's adjacent word pairs that the page writes side by side (either order, with
only punctuation or stop words of ``madqa_plugins.text.text_analysis`` between them), times ``weight``:
``bm25 * (1 + weight * pairs_found / pairs)``. The bonus only reorders pages inside a band: pages
holding every word stay above those that do not, so a keyword query keeps its precision.
The figures that chose ``WEIGHT`` and ``DEPTH`` are in docs/search.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from madqa_plugins.text import text_analysis

WEIGHT = text_analysis.PROXIMITY_WEIGHT  # 0.5, the default bonus for a page writing every pair of the query's words side by side
DEPTH = 20  # candidates reranked (at least k)
Key = TypeVar("Key", bound=Hashable)


def pairs(terms: Sequence[str]) -> list[tuple[str, str]]:
    """The query's adjacent word pairs, in order (``[a, b, c]`` -> ``(a, b), (b, c)``)."""
    return [(a, b) for a, b in zip(terms, terms[1:], strict=False) if a != b]


_GAP = re.compile(r"[\W_]+")
_STOP_WORD = re.compile(r"(?:" + "|".join(sorted(text_analysis.STOP, key=len, reverse=True)) + r")(?!\w)")
MAX_STOPS = 4  # stop words allowed between the two words


def _ends_word(lowered: str, at: int) -> bool:
    return at >= len(lowered) or not (lowered[at].isalnum() or lowered[at] == "_")


def _followed_by(lowered: str, end: int, word: str) -> bool:
    """Whether ``word`` comes right after position ``end``, past punctuation and a few stop words."""
    for _ in range(MAX_STOPS + 1):
        gap = _GAP.match(lowered, end)
        if gap is None:
            return False
        pos = gap.end()
        if lowered.startswith(word, pos) and _ends_word(lowered, pos + len(word)):
            return True
        stop = _STOP_WORD.match(lowered, pos)
        if stop is None:
            return False
        end = stop.end()
    return False


def _side_by_side(lowered: str, a: str, b: str) -> bool:
    for x, y in ((a, b), (b, a)):
        at = lowered.find(x)
        while at >= 0:
            if (at == 0 or _ends_word(lowered, at - 1)) and _ends_word(lowered, at + len(x)) \
                    and _followed_by(lowered, at + len(x), y):
                return True
            at = lowered.find(x, at + 1)
    return False


def pairs_found(text: str, wanted: list[tuple[str, str]]) -> int:
    """How many of the ``wanted`` pairs ``text`` writes side by side (either order)."""
    lowered = text.lower()
    return sum(1 for a, b in wanted if a in lowered and b in lowered and _side_by_side(lowered, a, b))


def rerank(candidates: list[tuple[int, float, Key]], terms: Sequence[str], text_of: Callable[[Key], str],
           weight: float = WEIGHT, k: int | None = None) -> list[tuple[int, float, Key]]:
    """``candidates`` (band, bm25, key), best band first and by BM25 raised for proximity within it.

    ``band`` orders first (e.g. 1 for pages holding every word, 0 for the others); ties keep the
    candidates' own order. With ``k``, only the top k are sure to be in order: a candidate that
    cannot reach the k-th place even with the whole bonus keeps its BM25 and its text is not read.
    With fewer than two distinct words, or ``weight`` 0, nothing changes.
    """
    wanted = pairs(list(dict.fromkeys(terms)))
    if not wanted or weight <= 0 or len(candidates) < 2:
        return candidates
    order = sorted(range(len(candidates)), key=lambda i: (-candidates[i][0], -candidates[i][1], i))
    raised: dict[int, tuple[int, float, Key]] = {}
    kept: list[tuple[int, float]] = []  # (band, raised score) of the candidates read so far
    for i in order:
        band, bm25, key = candidates[i]
        if k is not None and len(kept) >= k:
            kth = sorted(kept, reverse=True)[k - 1]
            if (band, bm25 * (1.0 + weight)) < kth:
                raised[i] = candidates[i]  # out of reach: its text is not read
                continue
        score = bm25 * (1.0 + weight * pairs_found(text_of(key), wanted) / len(wanted))
        raised[i] = (band, score, key)
        kept.append((band, score))
    return [raised[i] for i in sorted(raised, key=lambda i: (-raised[i][0], -raised[i][1], i))]
