"""What one visitor's uploads may cost (issue 25, breaks 2, 3 and 5): pages per file and per session, counted
before any page is read; indexing time; everything a session owns counted and removed together; and what earlier
runs left behind removed at start."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from madqa.corpus import Corpus, state_dir_for
from madqa.index import ingest
from madqa.plugins import Registry
from madqa.settings import Settings
from madqa.ui.leftovers import claim_uploads, sweep_at_start
from madqa.ui.limits import Limits, folder_bytes
from madqa.ui.sessions import SessionStore, new_session
from tests.conftest import make_pdf


def store_for(tmp_path: Path, registry: Registry, **limits: object) -> SessionStore:
    settings = Settings.from_env(env={}, home=tmp_path / "home", ocr="never", **limits)
    return SessionStore(settings, registry, tmp_path / "no-demo")


def pages(n: int, word: str = "alpha") -> list[str]:
    return [f"{word} page {i} of the test file" for i in range(1, n + 1)]


def test_a_file_over_the_page_limit_is_refused_before_its_pages_are_read(tmp_path: Path, registry: Registry) -> None:
    store = store_for(tmp_path, registry, upload_max_pages_per_file=3)
    token = new_session()["token"]
    heard: list[str] = []
    outcome = store.add_files(token, [("big.pdf", make_pdf(tmp_path / "big.pdf", pages(5))),
                                      ("small.pdf", make_pdf(tmp_path / "small.pdf", pages(2)))],
                              lambda done, total, what: heard.append(what))
    big, small = outcome.files
    assert big.status == "failed" and "5 pages" in big.detail and "MADQA_UPLOAD_MAX_PAGES_PER_FILE" in big.detail
    assert small.status == "indexed" and small.pages == 2
    assert not any("big.pdf" in what and "page" in what for what in heard)  # refused on opening: no page read
    assert sorted(store.own_corpus(token).documents) == ["small.pdf"]
    assert sorted(p.name for p in store.folder(token).iterdir()) == ["small.pdf"]


def test_a_sessions_uploads_have_a_page_limit_across_uploads(tmp_path: Path, registry: Registry) -> None:
    store = store_for(tmp_path, registry, upload_max_pages=5)
    token = new_session()["token"]
    first = store.add_files(token, [("a.pdf", make_pdf(tmp_path / "a.pdf", pages(3)))]).files[0]
    assert first.status == "indexed"
    over = store.add_files(token, [("b.pdf", make_pdf(tmp_path / "b.pdf", pages(3, "beta")))]).files[0]
    assert over.status == "failed" and "MADQA_UPLOAD_MAX_PAGES" in over.detail and "the 2 left of" in over.detail
    # two files that fit one by one but not together: the second is refused, the first kept
    two = store.add_files(token, [("c.pdf", make_pdf(tmp_path / "c.pdf", pages(2, "gamma"))),
                                  ("d.pdf", make_pdf(tmp_path / "d.pdf", pages(1, "delta")))]).files
    assert [f.status for f in two] == ["indexed", "failed"] and "MADQA_UPLOAD_MAX_PAGES" in two[1].detail
    full = store.add_files(token, [("e.pdf", make_pdf(tmp_path / "e.pdf", pages(1, "eps")))]).files[0]
    assert full.status == "failed" and "no room is left" in full.detail
    assert store.own_corpus(token).page_count == 5
    assert sorted(store.own_corpus(token).documents) == ["a.pdf", "c.pdf"]


def test_indexing_past_its_time_keeps_nothing_of_the_upload(tmp_path: Path, registry: Registry) -> None:
    store = store_for(tmp_path, registry)
    token = new_session()["token"]
    assert store.add_files(token, [("a.pdf", make_pdf(tmp_path / "a.pdf", pages(2)))]).files[0].status == "indexed"
    before = store.own_corpus(token).gen_dir
    slow = store_for(tmp_path, registry, upload_index_timeout_s=1e-6)
    result = slow.add_files(token, [("b.pdf", make_pdf(tmp_path / "b.pdf", pages(2, "beta")))]).files[0]
    assert result.status == "failed" and "MADQA_UPLOAD_INDEX_TIMEOUT" in result.detail and "nothing" in result.detail
    assert sorted(p.name for p in slow.folder(token).iterdir()) == ["a.pdf"]
    corpus = slow.own_corpus(token)
    assert corpus.gen_dir == before and sorted(corpus.documents) == ["a.pdf"]
    assert not [p for p in corpus.gen_dir.parent.iterdir() if p.name.startswith("tmp-")]  # no half-built generation
    # a first upload stopped so leaves no folder at all
    other = new_session()["token"]
    assert slow.add_files(other, [("c.pdf", tmp_path / "b.pdf")]).files[0].status == "failed"
    assert not (slow.uploads_root / other).exists() and slow.own_corpus(other) is None


def test_an_upload_that_adds_no_page_leaves_no_empty_corpus(tmp_path: Path, registry: Registry) -> None:
    store = store_for(tmp_path, registry)
    token = new_session()["token"]
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"not a pdf at all")
    assert store.add_files(token, [("bad.pdf", bad)]).files[0].status == "failed"
    assert store.own_corpus(token) is None and not (store.uploads_root / token).exists()


def test_the_quota_counts_a_sessions_index_and_page_store(tmp_path: Path, registry: Registry) -> None:
    """241 MB of index from 32 MB of upload was unseen by the quota: a session's index now lives in its folder."""
    store = store_for(tmp_path, registry)
    token = new_session()["token"]
    store.add_files(token, [("a.pdf", make_pdf(tmp_path / "a.pdf", pages(30)))])
    docs = folder_bytes(store.folder(token))
    limits = Limits(store.settings, [store.uploads_root])
    assert limits.upload_bytes() == folder_bytes(store.uploads_root / token) > docs
    assert not store.settings.corpora_dir.exists() or not any(store.settings.corpora_dir.iterdir())
    store.remove_all(token)
    assert not (store.uploads_root / token).exists()


def test_the_start_sweep_removes_unreachable_uploads_and_keeps_operator_collections(
        tmp_path: Path, registry: Registry, caplog: pytest.LogCaptureFixture) -> None:
    store = store_for(tmp_path, registry)
    settings = store.settings
    token = new_session()["token"]
    store.add_files(token, [("a.pdf", make_pdf(tmp_path / "a.pdf", pages(2)))])
    half = store.uploads_root / new_session()["token"]  # a crash mid-ingest: an upload and a half-built index
    make_pdf(half / "docs" / "b.pdf", pages(1))
    (half / "index" / "docs-0123456789ab" / "tmp-gen-1").mkdir(parents=True)
    legacy = store.uploads_root / new_session()["token"] / "docs"  # an earlier version kept its index in corpora/
    make_pdf(legacy / "c.pdf", pages(1))
    ingest(legacy, settings, registry, ocr="never")
    operator = tmp_path / "operator-docs"
    make_pdf(operator / "d.pdf", pages(1))
    ingest(operator, settings, registry, ocr="never")
    other = claim_uploads(settings.home)  # another app on this MADQA_HOME: nothing is swept
    with caplog.at_level(logging.WARNING, logger="madqa.ui"):
        assert sweep_at_start(settings.home, store.uploads_root, settings.corpora_dir) is None
    assert (store.uploads_root / token).exists() and "another madqa app" in caplog.text
    other.release()
    with caplog.at_level(logging.WARNING, logger="madqa.ui"):
        lock = sweep_at_start(settings.home, store.uploads_root, settings.corpora_dir)
    assert lock is not None
    assert list(store.uploads_root.iterdir()) == []
    assert not state_dir_for(legacy, settings.corpora_dir).exists()
    assert sorted(Corpus.open(operator, settings.corpora_dir).documents) == ["d.pdf"]
    assert "removed 3 upload folders and 1 upload index" in caplog.text
    lock.release()


def test_dense_on_a_large_upload_gives_way_to_bm25_with_a_note(tmp_path: Path, registry: Registry) -> None:
    """The dense retriever embeds every page on first use (~0.35 CPU-s a page): capped per session's uploads."""
    from madqa.settings import PipelineConfig
    from madqa.ui.limits import within_embedding_cap

    dense = PipelineConfig(name="d", retriever="dense", options={"retriever": {"max_windows": 2}, "reranker": {}})
    assert within_embedding_cap(dense, registry, pages=500, most=500) == (dense, None)
    for config in (dense, PipelineConfig(name="h", retriever="hybrid")):
        bounded, note = within_embedding_cap(config, registry, pages=501, most=500)
        assert bounded.retriever == "whoosh" and "retriever" not in bounded.options and "whoosh" in bounded.name
        assert "MADQA_WEB_DENSE_MAX_PAGES" in note and "501" in note
    bm25 = PipelineConfig(name="w", retriever="whoosh")
    assert within_embedding_cap(bm25, registry, pages=10**6, most=1) == (bm25, None)
    store = store_for(tmp_path, registry)
    token = new_session()["token"]
    store.add_files(token, [("a.pdf", make_pdf(tmp_path / "a.pdf", pages(3)))])
    bounded, _ = within_embedding_cap(dense, registry, pages=3, most=2)
    corpus = store.own_corpus(token)
    hits = registry.create("retriever", bounded.retriever, corpus, bounded.part_options("retriever")).search("alpha")
    assert hits.hits and not corpus.retriever_dir("dense").exists()  # nothing was embedded
