"""A collection with no pages is a state, not an error (issue 25, break 5): a search of it, with any retriever and
from any face, says so and finds nothing ("could not be run: math domain error" before)."""

from __future__ import annotations

from pathlib import Path

import pytest

import madqa
from madqa.cli import main
from madqa.corpus import Corpus
from madqa.index import ingest
from madqa.plugins import Registry
from madqa.settings import Settings


@pytest.fixture
def empty(tmp_path: Path, settings: Settings, registry: Registry) -> Corpus:
    """A corpus whose only file failed: indexed, with no page."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "broken.pdf").write_bytes(b"not a pdf")
    report = ingest(tmp_path / "docs", settings, registry, ocr="never")
    assert report.failures and report.pages == 0
    return Corpus.open(tmp_path / "docs", settings.corpora_dir)


@pytest.mark.parametrize("retriever", ["whoosh", "tantivy"])
@pytest.mark.parametrize("query", ["What was the revenue in 2024?", "revenue 2024", '"annual report"', "employ*"])
def test_searching_an_empty_collection_says_it_has_no_pages(empty: Corpus, registry: Registry, retriever: str,
                                                             query: str) -> None:
    if retriever not in registry.names("retriever"):
        pytest.skip(f"{retriever} is not installed")
    result = registry.create("retriever", retriever, empty, {}).search(query, 5)
    assert result.hits == () and result.note == madqa.NO_PAGES_NOTE


def test_the_cli_search_of_an_empty_collection_is_no_error(empty: Corpus, settings: Settings,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MADQA_HOME", str(settings.home))
    assert main(["search", "--corpus", str(empty.root), "What was the revenue in 2024?"]) == 0
    out = capsys.readouterr()
    assert madqa.NO_PAGES_NOTE in out.out + out.err and "could not be run" not in out.out + out.err
