"""Retriever ``hybrid``: BM25 and dense results fused by reciprocal rank (RRF).

Each side returns ``depth`` candidates; a page scores ``sum(weight / (k + rank))`` over the sides
that found it (rank from 1), the standard RRF of Cormack et al. (2009) with k=60. The BM25 side
gets the query as written (the full query language); the dense side its meaning (operators
stripped). Snippets come from BM25 when it found the page. The note says how many of the pages
shown came from each side, plus the sides' own notes. If one side fails, the other is used alone
and the note says so.

A scope (``search(..., files=...)``) goes to both sides (``madqa.search_scoped``: a side that cannot
filter files is filtered after it), so the fusion ranks the scope's pages only.

Both sides are ordinary registered retrievers, built through the registry that builds this one
(``Registry.create`` hands itself to a factory taking ``registry``; ``bm25`` and ``dense`` options
name them), so an override of ``whoosh`` by another plugin is honoured.

Options (``[options.retriever]``): ``bm25`` ("whoosh"), ``dense`` ("dense"), ``k`` (60),
``depth`` (20), ``bm25_weight`` (1.0), ``dense_weight`` (1.0), ``max_windows`` (4, passed to dense),
``keep`` (4): BM25's first ``keep`` pages stay first and the fusion ranks the rest. Plain RRF (``keep=0``)
lost to BM25 alone on the real-document sets (dense is weak on tables and reference cards, and a
page both sides half-like outranks BM25's best); keeping BM25's head makes the fusion a way to *add*
dense's finds below it, so it can cost at most the pages BM25 ranked past ``keep``.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

import madqa
from madqa_plugins.dense import minilm

KEEP = 4  # learned on the development sets (docs/search.md): fusion below BM25's best pages never hurts them
OPTIONS = (
    madqa.Option("bm25", str, "whoosh", "the BM25 retriever fused"),
    madqa.Option("dense", str, "dense", "the dense retriever fused"),
    madqa.Option("k", int, 60, "the reciprocal-rank constant: sum(weight / (k + rank))", low=1, visitor_safe=True,
                 visitor_high=1000),
    madqa.Option("depth", int, 20, "candidates taken from each side", low=1, visitor_safe=True, visitor_high=50),
    madqa.Option("bm25_weight", float, 1.0, "weight of the BM25 side", low=0, visitor_safe=True, visitor_high=10),
    madqa.Option("dense_weight", float, 1.0, "weight of the dense side", low=0, visitor_safe=True, visitor_high=10),
    madqa.Option("max_windows", int, 4, "the dense side's windows per page", low=1),
    madqa.Option("keep", int, KEEP, "BM25's first pages kept first, the fusion ranking the rest (0: plain RRF)",
                 low=0, visitor_safe=True, visitor_high=50),
)
DEFAULTS = {o.name: o.default for o in OPTIONS}


def fuse(rankings: list[tuple[float, list[madqa.Hit]]], k: int) -> list[tuple[float, madqa.Hit, list[int]]]:
    """Reciprocal-rank fusion: (score, hit, sides that found it) best first; ties keep first-seen order."""
    fused: dict[madqa.PageRef, list[Any]] = {}
    for side, (weight, hits) in enumerate(rankings):
        for rank, hit in enumerate(hits, 1):
            entry = fused.setdefault(hit.ref, [0.0, hit, []])
            entry[0] += weight / (k + rank)
            entry[2].append(side)
            if not entry[1].snippet and hit.snippet:
                entry[1] = hit
    return sorted((tuple(e) for e in fused.values()), key=lambda e: -e[0])


def keep_head(fused: list[tuple[float, madqa.Hit, list[int]]], bm25: list[madqa.Hit],
              keep: int) -> list[tuple[float, madqa.Hit, list[int]]]:
    """``fused`` with the first ``keep`` BM25 pages moved to the front in BM25's order (scores kept
    descending: each raised above the fusion's best)."""
    head = [h.ref for h in bm25[:keep]]
    if not head:
        return fused
    by_ref = {hit.ref: (score, hit, found) for score, hit, found in fused}
    top = max(score for score, *_ in fused)
    first = [(top + (len(head) - i) * 1e-6, by_ref[ref][1], by_ref[ref][2]) for i, ref in enumerate(head)]
    return first + [entry for entry in fused if entry[1].ref not in set(head)]


class HybridRetriever:
    """RRF of a BM25 retriever and the dense retriever, both created through the registry that
    created this one (``host.registry``)."""

    index_parts = ("whoosh", "dense")  # what `madqa index --retrievers hybrid` builds
    filters_files = True  # search(..., files=...): both sides search those files only (madqa.scope)

    def __init__(self, host: madqa.Host, options: dict[str, Any] | None = None) -> None:
        opts = madqa.read_options(options, OPTIONS, "retriever hybrid")
        if "hybrid" in (opts["bm25"], opts["dense"]):
            raise madqa.PluginError("retriever hybrid cannot fuse itself")
        registry, corpus = host.registry, host.corpus
        if registry is None:  # its parts come from the caller's plugins, never from a registry of its own
            raise madqa.PluginError("retriever hybrid is built through a registry (Registry.create hands itself "
                                    "over as host.registry), which provides its BM25 and dense parts")
        self.opts = opts
        self.bm25 = registry.create("retriever", opts["bm25"], corpus, {})
        self.dense = registry.create("retriever", opts["dense"], corpus,
                                     {"max_windows": opts["max_windows"]} if opts["dense"] == "dense" else {})

    def search(self, query_text: str, k: int = 5, files: AbstractSet[str] | None = None) -> madqa.SearchResult:
        """The two sides' pages (of ``files`` only, when given) fused by reciprocal rank, best first."""
        depth = max(int(k), self.opts["depth"])
        sides: list[Any] = []
        notes = []
        for label, retriever, weight in (("BM25", self.bm25, self.opts["bm25_weight"]),
                                         ("dense", self.dense, self.opts["dense_weight"])):
            try:
                result = madqa.search_scoped(retriever, query_text, depth, files)
            except madqa.SearchError as exc:
                notes.append(f"{label} failed ({exc}); the other side alone")
                sides.append((weight, []))
                continue
            if result.note:
                notes.append(f"{label}: {result.note}")
            sides.append((weight, list(result.hits)))
        fused = keep_head(fuse(sides, self.opts["k"]), sides[0][1], self.opts["keep"])[:max(1, int(k))]
        hits = tuple(madqa.Hit(h.file, h.page, score, h.snippet) for score, h, _ in fused)
        both = sum(1 for *_, found in fused if len(found) == 2)
        only_bm25 = sum(1 for *_, found in fused if found == [0])
        only_dense = sum(1 for *_, found in fused if found == [1])
        summary = f"hybrid: {both} pages found by both, {only_bm25} by BM25 only, {only_dense} by dense only"
        return madqa.SearchResult(hits, " ".join(str(query_text).split()), "; ".join([summary, *notes]))


@madqa.hookimpl(trylast=True)
def register_retrievers(register: madqa.Register) -> None:
    register("hybrid", HybridRetriever, "BM25 + dense fused by reciprocal rank (needs the dense model)",
             requires=minilm.REQUIRES, options=OPTIONS, takes_host=True)
