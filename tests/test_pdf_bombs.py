"""Decompression bombs and other PDFs that cost too much to read (issue 12, item 4): each is read by a worker
process with memory and CPU limits; past them the worker is stopped, the file fails with a plain reason and
the other files are indexed. Page and file texts are capped. The same ``ingest`` serves the CLI and uploads."""

from __future__ import annotations

from pathlib import Path

import pytest

from madqa.corpus import Corpus
from madqa.index import ingest
from madqa.settings import Settings
from tests.attacks import bomb_pdf
from tests.conftest import make_pdf
from tests.test_bad_input import cli


@pytest.fixture(scope="module")
def bomb_docs(tmp_path_factory) -> Path:
    """A 40 MB-inflating bomb, sorted first, then ordinary files (read after it, by a fresh worker)."""
    docs = tmp_path_factory.mktemp("bombs") / "docs"
    bomb_pdf(docs / "a_bomb.pdf", 40)
    for i in range(2):
        make_pdf(docs / f"ordinary{i}.pdf", [f"ordinary capybara page {p} of file {i}" for p in range(3)])
    return docs


def searchable(settings: Settings, registry, root: Path, word: str) -> set[str]:
    corpus = Corpus.open(root, settings.corpora_dir)
    return {h.file for h in registry.create("retriever", "whoosh", corpus, {}).search(word, 10).hits}


def test_the_bomb_payload_is_small_and_inflates(bomb_docs):
    import pymupdf

    size = (bomb_docs / "a_bomb.pdf").stat().st_size
    with pymupdf.open(bomb_docs / "a_bomb.pdf") as doc:
        assert size < 400_000 and len(doc[0].read_contents()) > 40_000_000


@pytest.mark.slow
def test_a_bomb_past_the_cpu_limit_is_stopped_and_reported_by_the_cli(bomb_docs, tmp_path):
    # room in memory, so the CPU limit is the one met (on a loaded machine the 768 MB cap was met first once)
    proc = cli("index", str(bomb_docs), "--ocr", "never", home=tmp_path / "home", timeout=300,
               MADQA_PDF_TIMEOUT_S="1", MADQA_PDF_MEMORY_MB="4096")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "failed: a_bomb.pdf: reading page 1 took more than 1 s of CPU, so it was stopped" in proc.stderr
    assert "indexed 2 files, 6 pages" in proc.stdout  # the files after it were read by a fresh worker


@pytest.mark.slow
def test_a_bomb_past_the_memory_limit_is_stopped_and_reported(bomb_docs, tmp_path, registry):
    settings = Settings.from_env(env={}, home=tmp_path / "home", pdf_memory_mb=300)
    report = ingest(bomb_docs, settings, registry, ocr="never")
    assert report.failures == [("a_bomb.pdf", "reading page 1 needs more than 300 MB of memory, so it was "
                                              "stopped (MADQA_PDF_MEMORY_MB; a decompression bomb?)")]
    assert searchable(settings, registry, bomb_docs, "capybara") == {"ordinary0.pdf", "ordinary1.pdf"}


def test_page_and_file_texts_are_capped_with_a_warning(tmp_path, registry):
    root = tmp_path / "docs"
    make_pdf(root / "long.pdf", [("capybara " * 300).strip() for _ in range(3)], fontsize=4)
    settings = Settings.from_env(env={}, home=tmp_path / "home", max_page_chars=1000, max_file_chars=1500)
    report = ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    lengths = [len(corpus.page_text("long.pdf", p)) for p in (1, 2, 3)]
    assert lengths == [1000, 500, 0]
    messages = [m for _, m in report.warnings]
    assert "page 1: text cut at 1,000 characters (MADQA_MAX_PAGE_CHARS)" in messages
    assert any("from page 2 on not kept: the file holds more than 1,500 characters" in m for m in messages)


@pytest.mark.parametrize("env,message", [({"MADQA_PDF_MEMORY_MB": "12"}, "between 128"),
                                         ({"MADQA_PDF_TIMEOUT_S": "soon"}, "expects a number")])
def test_bad_reader_limits_are_clear_errors(env, message):
    with pytest.raises(Exception, match=message):
        Settings.from_env(env=env)
