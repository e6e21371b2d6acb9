"""Scoring for the ``whoosh`` retriever: BM25F with page lengths in memory, and an array path for plain queries.

Not a plugin: ``madqa_plugins.whoosh.whoosh_bm25`` uses it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from whoosh import query, scoring
from whoosh.codec.whoosh3 import W3LeafMatcher


def page_lengths(searcher: Any, fieldname: str) -> list[int]:
    """The (quantized) length of every page of this searcher's segment, read once per searcher."""
    cache = searcher.__dict__.setdefault("_madqa_lengths", {})
    lengths = cache.get(fieldname)
    if lengths is None:
        reader = searcher.reader()
        lengths = cache[fieldname] = [reader.doc_field_length(d, fieldname, 1) for d in range(reader.doc_count_all())]
    return lengths


class BM25FCachedLengths(scoring.BM25F):
    """BM25F whose scorers read page lengths from a list loaded once per segment, not from disk per hit."""

    def scorer(self, searcher: Any, fieldname: str, text: str, qf: int = 1) -> Any:
        scorer = super().scorer(searcher, fieldname, text, qf)
        if hasattr(scorer, "dfl"):
            scorer.dfl = page_lengths(searcher, fieldname).__getitem__
        return scorer


class ArrayBM25:
    """Top-k for queries made only of words, AND and OR (most agent queries), scored with numpy.

    Whoosh walks such queries posting by posting in Python; here each word's postings are read once
    per segment (block by block, kept in a small cache) and scored as arrays with BM25F's formula,
    statistics and the index's own quantized page lengths, so scores and order equal Whoosh's
    (ties: lower document number first). Anything else (phrases, wildcards, NOT, weighted OR,
    boosts, segments with deletions) returns None and goes to Whoosh.
    """

    MAX_CACHED_POSTINGS = 2_000_000  # 32 MB of arrays per searcher at most; cleared when exceeded

    def __init__(self, weighting: BM25FCachedLengths) -> None:
        self.weighting = weighting

    @staticmethod
    def supports(q: query.Query) -> bool:
        if isinstance(q, query.Term):
            return q.fieldname == "text" and q.boost == 1.0
        if type(q) is query.And:  # NOT x inside an AND only excludes (as Whoosh's AndNot does)
            positive = [sub for sub in q.subqueries if not isinstance(sub, query.Not)]
            negative = [sub.query for sub in q.subqueries if isinstance(sub, query.Not)]
            return (q.boost == 1.0 and bool(positive) and all(ArrayBM25.supports(sub) for sub in positive)
                    and all(ArrayBM25.supports(sub) and sub.boost == 1.0 for sub in negative))
        if type(q) is query.Or:
            scaled = getattr(q, "scale", None) or getattr(q, "minmatch", 0)
            return not scaled and q.boost == 1.0 and all(ArrayBM25.supports(sub) for sub in q.subqueries)
        return False

    def top(self, searcher: Any, q: query.Query, k: int,
            allowed: frozenset[int] | None = None) -> list[tuple[float, int]] | None:
        """[(score, global docnum)] best first, or None when this query or index is not for us;
        ``allowed``: the only document numbers that may be returned (a scope), masked before the top k."""
        if not self.supports(q):
            return None
        leaves = searcher.leaf_searchers()
        if any(sub.reader().has_deletions() for sub, _ in leaves):
            return None
        found: list[tuple[float, int]] = []
        for sub, offset in leaves:
            scores, matched = self._eval(searcher, sub, q, self._lengths(sub))
            found += self._best(scores, _within(matched, allowed, offset), k, offset)
        found.sort(key=lambda item: (-item[0], item[1]))
        return found[:k]

    def top_plain(self, searcher: Any, groups: list[query.Query], k: int, ranking: str,
                  allowed: frozenset[int] | None = None) -> list[tuple[float, int, int, float]] | None:
        """[(score, global docnum, words matched, BM25 sum)] best first for a plain query of word
        ``groups`` (each a Term or an OR of variants), ranked by ``ranking`` (see ``plain_scores``);
        None when a group is not for us. Pages deleted in a segment, and pages outside ``allowed``
        (a scope's document numbers), are masked out."""
        if not groups or not all(self.supports(g) for g in groups):
            return None
        found: list[tuple[float, int, int, float]] = []
        for sub, offset in searcher.leaf_searchers():
            lengths = self._lengths(sub)
            parts = [self._eval(searcher, sub, g, lengths) for g in groups]
            count = np.sum([m for _, m in parts], axis=0)
            total = np.sum([s for s, _ in parts], axis=0)
            matched = _within(count > 0, allowed, offset)
            reader = sub.reader()
            if reader.has_deletions():
                matched &= ~np.fromiter((reader.is_deleted(d) for d in range(len(lengths))), bool, len(lengths))
            scores = plain_scores(total, count, len(groups), ranking, self._bound(searcher, groups))
            found += [(s, d, int(count[d - offset]), float(total[d - offset]))
                      for s, d in self._best(scores, matched, k, offset)]
        found.sort(key=lambda item: (-item[0], item[1]))
        return found[:k]

    def _bound(self, searcher: Any, groups: list[query.Query]) -> float:
        """An upper bound of any page's BM25 sum for these groups (each word's idf times k1 + 1)."""
        return sum(searcher.idf("text", t) * (self.weighting.K1 + 1)
                   for g in groups for _, t in g.iter_all_terms()) + 1.0

    @staticmethod
    def _lengths(sub: Any) -> np.ndarray:
        lengths = sub.__dict__.get("_madqa_lengths_np")
        if lengths is None:
            lengths = sub.__dict__["_madqa_lengths_np"] = np.array(page_lengths(sub, "text"), dtype=np.float64)
        return lengths

    @staticmethod
    def _best(scores: np.ndarray, matched: np.ndarray, k: int, offset: int) -> list[tuple[float, int]]:
        docs = np.flatnonzero(matched)
        if len(docs) > k:
            docs = docs[np.argpartition(-scores[docs], k - 1)[:k]]  # a superset of the top k...
            cut = scores[docs].min()
            docs = np.flatnonzero(matched & (scores >= cut))  # ...with every tie at the cut kept
        return [(float(scores[d]), int(d) + offset) for d in docs]

    def _eval(self, top: Any, sub: Any, q: query.Query, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(q, query.Term):
            scores = np.zeros(len(lengths))
            ids, weights = self._postings(sub, q.text)
            if len(ids):
                idf = top.idf("text", q.text)
                avgfl = top.avg_field_length("text") or 1
                b, k1 = self.weighting.B, self.weighting.K1
                scores[ids] = idf * (weights * (k1 + 1)) / (weights + k1 * ((1 - b) + b * lengths[ids] / avgfl))
            matched = np.zeros(len(lengths), dtype=bool)
            matched[ids] = True
            return scores, matched
        parts = [self._eval(top, sub, child, lengths) for child in q.subqueries if not isinstance(child, query.Not)]
        scores = np.sum([p[0] for p in parts], axis=0)
        flags = [p[1] for p in parts]
        matched = np.logical_and.reduce(flags) if isinstance(q, query.And) else np.logical_or.reduce(flags)
        for child in q.subqueries:
            if isinstance(child, query.Not):  # Whoosh's matcher for it scores a constant 1.0 where it matches
                matched &= ~self._eval(top, sub, child.query, lengths)[1]
                scores = scores + 1.0
        return np.where(matched, scores, 0.0), matched

    def _postings(self, sub: Any, word: str) -> tuple[np.ndarray, np.ndarray]:
        cache = sub.__dict__.setdefault("_madqa_postings", {})
        hit = cache.get(word)
        if hit is not None:
            return hit
        reader = sub.reader()
        ids: list[np.ndarray] = []
        weights: list[np.ndarray] = []
        if ("text", word) in reader:
            m = reader.postings("text", word)
            if isinstance(m, W3LeafMatcher):
                while m.is_active():  # a block at a time: (delta-coded ids, weights or one weight or None, ...)
                    m._read_data()
                    block_ids = np.cumsum(np.asarray(m._data[0], dtype=np.int64))
                    w = m._data[1]
                    ids.append(block_ids)
                    weights.append(np.full(len(block_ids), 1.0 if w is None else w) if w is None or
                                   isinstance(w, float) else np.asarray(w, dtype=np.float64))
                    m._next_block()
            else:
                pairs = []
                while m.is_active():
                    pairs.append((m.id(), m.weight()))
                    m.next()
                ids.append(np.array([i for i, _ in pairs], dtype=np.int64))
                weights.append(np.array([w for _, w in pairs], dtype=np.float64))
        result = (np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64),
                  np.concatenate(weights) if weights else np.zeros(0))
        size = sub.__dict__.get("_madqa_postings_size", 0) + len(result[0])
        if size > self.MAX_CACHED_POSTINGS:
            cache.clear()
            size = len(result[0])
        sub.__dict__["_madqa_postings_size"] = size
        cache[word] = result
        return result


def _within(matched: np.ndarray, allowed: frozenset[int] | None, offset: int) -> np.ndarray:
    """``matched`` (a segment's pages, from global number ``offset``) limited to ``allowed`` global numbers."""
    if allowed is None:
        return matched
    mask = np.zeros(len(matched), dtype=bool)
    local = [d - offset for d in allowed if offset <= d < offset + len(matched)]
    mask[local] = True
    return matched & mask


RANKINGS = ("all-first", "coordination", "or")


def plain_scores(bm25: np.ndarray, count: np.ndarray, n: int, ranking: str, bound: float) -> np.ndarray:
    """Scores of a plain query's pages from their summed BM25 and how many of its ``n`` words they hold.

    ``or``: the BM25 sum (OR-grouped BM25); ``coordination``: the sum times the share of words
    matched (Lucene's classic coord); ``all-first``: pages holding every word first, each band by
    its BM25 sum (AND then OR): ``bound`` (more than any page's sum) is added to the first band.
    """
    if ranking == "or" or n <= 1:
        return bm25
    if ranking == "coordination":
        return bm25 * (count / n)
    return bm25 + np.where(count >= n, bound, 0.0)
