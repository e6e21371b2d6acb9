"""Reranker ``embedding``: reorders hits by how close each page's meaning is to the question and query.

Optional: the same all-MiniLM-L6-v2 model as the ``dense`` retriever (requirements-optional.txt).
A page's similarity to a text is its best window's cosine (as in ``dense``); the hit's new score
is ``question_weight * sim(question) + (1 - question_weight) * sim(query)`` (the query with its
operators stripped), so it sees both what the user asked and what the model searched for. Page
vectors come from the ``dense`` index when this corpus has one; otherwise the pages are embedded
on the spot (about a second per page on a shared CPU core) and kept for the session.

It asks the retriever for ``candidates`` hits (20) and returns them all reordered; the agent shows
the first top_k, so pages the retriever ranked lower can come up.

Options (``[options.reranker]``): ``question_weight`` (float, 0.5), ``candidates`` (int, 20),
``max_windows`` (int, 4).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

import madqa
from madqa_plugins.dense import minilm
from madqa_plugins.dense.dense import DenseIndex, meaning_of

OPTIONS = (
    madqa.Option("question_weight", float, 0.5, "weight of the question against the query", low=0, high=1,
                 visitor_safe=True),
    madqa.Option("candidates", int, 20, "hits asked of the retriever, reordered", low=1, visitor_safe=True,
                 visitor_high=50),
    madqa.Option("max_windows", int, 4, "windows of 256 word pieces embedded per page", low=1),
)


class EmbeddingReranker:
    """Cosine of page embeddings with the question and the query, mixed by ``question_weight``."""

    def __init__(self, host: madqa.Host, options: dict[str, Any] | None = None) -> None:
        opts = madqa.read_options(options, OPTIONS, "reranker embedding")
        self.corpus = corpus = host.require_corpus("reranker embedding")
        self.weight = opts["question_weight"]
        self.candidates = max(1, opts["candidates"])
        self.max_windows = max(1, opts["max_windows"])
        folder = corpus.retriever_dir("dense")
        self.index = DenseIndex.get(folder) if DenseIndex.usable(folder, self.max_windows) else None
        self.encoder = minilm.encoder()
        self._cache: dict[tuple[str, int], np.ndarray] = {}
        self._lock = threading.Lock()

    def _page(self, hit: madqa.Hit) -> np.ndarray:
        ref = (hit.file, hit.page)
        with self._lock:
            if ref not in self._cache:
                vectors = self.index.page_vectors(ref) if self.index is not None else None
                if vectors is None:
                    text = self.corpus.page_text(hit.file, hit.page)
                    windows = self.encoder.windows(text, self.max_windows) if text.strip() else []
                    vectors = self.encoder.embed_windows(windows) if windows else np.zeros((0, minilm.MiniLM.dim))
                self._cache[ref] = np.asarray(vectors, dtype=np.float32)
            return self._cache[ref]

    def rerank(self, question: str, query: str, hits: list[madqa.Hit]) -> list[madqa.Hit]:
        """The same hits, most similar first, each scored by its mixed cosine similarity."""
        if not hits:
            return hits
        q_vec = self.encoder.embed_one(question) if question.strip() else None
        plain = meaning_of(query)[0]
        s_vec = self.encoder.embed_one(plain) if plain.strip() else None
        scored = []
        for order, hit in enumerate(hits):
            vectors = self._page(hit)
            if not len(vectors):
                scored.append((-1.0, order, hit))
                continue
            parts = []
            if q_vec is not None:
                parts.append((self.weight, float((vectors @ q_vec).max())))
            if s_vec is not None:
                parts.append((1.0 - self.weight, float((vectors @ s_vec).max())))
            total = sum(w for w, _ in parts)
            score = sum(w * s for w, s in parts) / total if total else -1.0
            scored.append((score, order, hit))
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [madqa.Hit(h.file, h.page, s, h.snippet) for s, _, h in scored]


@madqa.hookimpl(trylast=True)
def register_rerankers(register: madqa.Register) -> None:
    register("embedding", EmbeddingReranker, "reorder by MiniLM similarity to the question and the query",
             requires=minilm.REQUIRES, options=OPTIONS, takes_host=True)
