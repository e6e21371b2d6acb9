"""Rerankers in the loop: `none` keeps the order; a reranker's `candidates` widens what it may promote."""

from __future__ import annotations

import madqa
from madqa.agent import Agent
from madqa.corpus import Corpus
from madqa.index import ingest
from madqa.settings import load_config
from madqa.trace import Trace
from madqa.types import SearchStep
from tests.conftest import make_pdf


class Reverse:
    """Sees the question and the query; returns the hits in reverse order."""

    def __init__(self, candidates: int = 0) -> None:
        self.candidates = candidates
        self.calls: list[tuple[str, str, int]] = []

    def rerank(self, question, query, hits):
        self.calls.append((question, query, len(hits)))
        return list(reversed(hits))


def _search_step(tmp_path, settings, registry, reranker):
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["turbine turbine turbine blade", "turbine blade", "a turbine"])
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    config = load_config("offline").with_overrides(backend="scripted", top_k=1)
    script = [{"search": "turbine"}, {"answer": ["x"], "citations": []}]
    agent = Agent(corpus, config, registry, settings, {"script": script})
    if reranker is not None:
        agent.reranker = reranker
    trace = Trace("Which blade?", config, "q").consume(agent.run("Which blade?"))
    return next(s for s in trace.steps if isinstance(s, SearchStep))


def test_none_keeps_the_retrievers_order(tmp_path, settings, registry):
    none = registry.create("reranker", "none", None, {})
    hits = [madqa.Hit("a.pdf", 2, 2.0), madqa.Hit("a.pdf", 1, 1.0)]
    assert none.rerank("q", "x", hits) == hits
    step = _search_step(tmp_path, settings, registry, None)
    assert [h.page for h in step.hits] == [1]


def test_reranker_candidates_let_it_promote_lower_pages(tmp_path, settings, registry):
    narrow = Reverse()
    step = _search_step(tmp_path, settings, registry, narrow)
    assert narrow.calls == [("Which blade?", "turbine", 1)] and [h.page for h in step.hits] == [1]
    wide = Reverse(candidates=3)
    step = _search_step(tmp_path / "w", settings, registry, wide)
    assert wide.calls == [("Which blade?", "turbine", 3)]
    assert len(step.hits) == 1 and step.hits[0].page != 1  # top_k still bounds what is shown
