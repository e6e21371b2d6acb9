"""Damaged stored state (issue 12, item 10): a truncated Whoosh table of contents or segment, page store or
manifest is detected, rebuilt from the PDFs as a new generation and reported, never a raw traceback; a
damaged page-image cache is bypassed, with a note."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from madqa import render
from madqa.corpus import Corpus, read_current, state_dir_for
from madqa.index import ingest
from madqa.render import render_page
from tests.conftest import make_pdf
from tests.test_bad_input import cli

DAMAGE = {
    "whoosh table of contents": lambda gen: next((gen / "retrievers" / "whoosh").glob("*.toc")),
    "whoosh segment": lambda gen: next((gen / "retrievers" / "whoosh").glob("*.seg")),
    "page store": lambda gen: gen / "pages.sqlite",
    "manifest": lambda gen: gen / "manifest.json",
}


@pytest.fixture
def indexed(tmp_path, settings, registry):
    root = tmp_path / "docs"
    for i in range(2):
        make_pdf(root / f"f{i}.pdf", [f"capybara census page {p} of file {i}" for p in range(3)])
    ingest(root, settings, registry, ocr="never")
    return root


def truncate(indexed: Path, settings, what: str) -> str:
    state = state_dir_for(indexed, settings.corpora_dir)
    generation = read_current(state)
    path = DAMAGE[what](state / generation)
    os.truncate(path, path.stat().st_size // 2)
    return generation


@pytest.mark.parametrize("what", list(DAMAGE))
def test_index_detects_damage_and_rebuilds_a_new_generation(indexed, settings, registry, what):
    damaged = truncate(indexed, settings, what)
    report = ingest(indexed, settings, registry, ocr="never")
    assert report.generation != damaged and report.pages == 6 and not report.failures
    assert any("the stored index was damaged" in m and "every PDF was read again" in m for _, m in report.warnings)
    corpus = Corpus.open(indexed, settings.corpora_dir)
    assert len(registry.create("retriever", "whoosh", corpus, {}).search("capybara", 10).hits) == 6


@pytest.mark.slow
@pytest.mark.parametrize("what", list(DAMAGE))
def test_cli_search_on_a_damaged_index_rebuilds_and_answers(indexed, settings, what):
    truncate(indexed, settings, what)
    proc = cli("search", "--corpus", str(indexed), "capybara", home=settings.home)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "damaged" in proc.stderr and "capybara census" in proc.stdout


@pytest.mark.parametrize("part", ["cache.db", ".val"])
def test_a_damaged_page_cache_is_bypassed_with_a_note(indexed, settings, part):
    corpus = Corpus.open(indexed, settings.corpora_dir)
    first = render_page(corpus, "f0.pdf", 1, settings, budget_px=8_000_000)  # big enough for a .val file
    assert first.note is None
    folder = Path(settings.cache_dir) / "pages"
    damaged = [folder / "cache.db"] if part == "cache.db" else list(folder.rglob("*.val"))
    assert damaged
    for path in damaged:
        os.truncate(path, path.stat().st_size // 3)
    render._caches.clear()  # as a new process would open it
    again = render_page(corpus, "f0.pdf", 1, settings, budget_px=8_000_000)
    assert again.data == first.data and "page-image cache" in again.note and "damaged" in again.note
