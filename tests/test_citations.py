"""Citations repaired where it is safe: written as text, file names in another case or folder, a page off
by one whose quote sits on the page the agent saw next to it. What is not safe stays dropped or flagged."""

from __future__ import annotations

import pytest

from madqa.agent import Agent
from madqa.answer import check_quotes, citation_from_text, parse_answer, resolve_citations, validate_citations
from madqa.corpus import Corpus
from madqa.index import ingest
from madqa.settings import load_config
from madqa.trace import Trace
from madqa.types import PageRef
from tests.conftest import make_pdf

REPORT = "finance/annual_report_2024.pdf"
PAGES = ["Letter to shareholders. We grew again.",
         "Consolidated income statement. Total revenue 148,612. Operating income 15,005.",
         "Employees: 1,204 at year end.",
         "Outlook for 2025."]


@pytest.fixture
def corpus(tmp_path, settings, registry) -> Corpus:
    root = tmp_path / "docs"
    make_pdf(root / REPORT, PAGES)
    make_pdf(root / "a" / "notes.pdf", ["Notes of team A."])
    make_pdf(root / "b" / "notes.pdf", ["Notes of team B."])
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


ALL_SEEN = {PageRef(REPORT, p) for p in range(1, 5)} | {PageRef("a/notes.pdf", 1), PageRef("b/notes.pdf", 1)}


def read(corpus: Corpus, citations: list, seen: set[PageRef] = ALL_SEEN):
    """(validated refs, quotes found, every flag) for an answer citing ``citations``."""
    _, raw, flags = parse_answer({"answer": ["148,612"], "citations": citations})
    cited = resolve_citations(raw, corpus, seen)
    assert validate_citations(raw, corpus, seen) == (list(cited.refs), list(cited.flags))
    quotes = check_quotes(cited, corpus)
    return list(cited.refs), quotes, flags + list(cited.flags) + list(quotes.flags)


@pytest.mark.parametrize("text", [
    "annual_report_2024.pdf p. 2", "annual_report_2024.pdf, page 2", "File: annual_report_2024.pdf, Page: 2",
    "annual_report_2024.pdf#page=2", "annual_report_2024.pdf:2", "annual_report_2024.pdf (pp. 2-3)",
])
def test_a_citation_written_as_text_is_read_and_flagged(corpus, text):
    refs, _, flags = read(corpus, [text])
    assert refs == [PageRef(REPORT, 2)]
    assert f"citation {text!r} given as text, read as annual_report_2024.pdf p.2" in flags


def test_text_that_names_no_page_is_not_a_citation():
    for text in ("annual_report_2024.pdf", "page 2", "see the income statement", "p. 2", ""):
        assert citation_from_text(text) is None, text
    assert citation_from_text(["annual_report_2024.pdf", 2]) == {"file": "annual_report_2024.pdf", "page": 2}


def test_a_file_holding_its_page_is_read(corpus):
    refs, _, flags = read(corpus, [{"file": "annual_report_2024.pdf#page=2", "quote": "Total revenue 148,612"}])
    assert refs == [PageRef(REPORT, 2)] and any("holds its page" in f for f in flags)


@pytest.mark.parametrize("cited", [
    "FINANCE/Annual_Report_2024.PDF",  # another letter case
    "docs/finance/annual_report_2024.pdf",  # a folder more
    "C:\\Users\\me\\finance\\annual_report_2024.pdf",  # backslashes
    "finance/annual_report_2024",  # no .pdf
    "Annual_Report_2024",
    "other/annual_report_2024.pdf",  # another folder, one file of that name
])
def test_a_file_name_that_fits_one_corpus_file_is_repaired_and_flagged(corpus, cited):
    refs, _, flags = read(corpus, [{"file": cited, "page": 2, "quote": "Total revenue 148,612"}])
    assert refs == [PageRef(REPORT, 2)]
    assert f"cited file {cited!r} read as {REPORT}" in flags


def test_the_exact_name_or_a_unique_bare_name_needs_no_repair(corpus):
    for cited in (REPORT, "annual_report_2024.pdf"):
        refs, _, flags = read(corpus, [{"file": cited, "page": 2, "quote": "Total revenue 148,612"}])
        assert refs == [PageRef(REPORT, 2)] and flags == [], cited


def test_a_name_that_fits_several_files_or_none_is_dropped(corpus):
    refs, _, flags = read(corpus, [{"file": "notes.pdf", "page": 1, "quote": "Notes of team A."},
                                   {"file": "NOTES", "page": 1, "quote": "Notes of team A."},
                                   {"file": "budget.pdf", "page": 1, "quote": "x"}])
    assert refs == []
    assert flags == ["cited file 'notes.pdf' fits 2 corpus files; name it as its page label does",
                     "cited file 'NOTES' fits 2 corpus files; name it as its page label does",
                     "cited file 'budget.pdf' is not in the corpus"]
    refs, _, flags = read(corpus, [{"file": "A/Notes.pdf", "page": 1, "quote": "Notes of team A."}])
    assert refs == [PageRef("a/notes.pdf", 1)] and flags == ["cited file 'A/Notes.pdf' read as a/notes.pdf"]


@pytest.mark.parametrize(("cited", "quote", "moved_to"), [
    (3, "Total revenue 148,612", 2),  # the page after the quote's
    (1, "Total revenue 148,612", 2),  # the page before
    (5, "Outlook for 2025", 4),  # past the last page
])
def test_a_citation_whose_quote_is_on_the_next_or_previous_page_moves_there(corpus, cited, quote, moved_to):
    refs, quotes, flags = read(corpus, [{"file": REPORT, "page": cited, "quote": quote}])
    assert refs == [PageRef(REPORT, moved_to)] and quotes.found == (True,) and quotes.quotes == (quote,)
    assert flags == [f"citation moved from p.{cited} to p.{moved_to}: its quote is on that page"]


def test_a_citation_moves_only_to_a_page_the_agent_saw(corpus):
    seen = {PageRef(REPORT, 3)}
    refs, quotes, flags = read(corpus, [{"file": REPORT, "page": 3, "quote": "Total revenue 148,612"}], seen)
    assert refs == [PageRef(REPORT, 3)] and quotes.found == (False,)
    assert not any("moved" in f for f in flags) and any(f.startswith("quote not found on cited") for f in flags)


def test_a_quote_two_pages_away_or_on_no_page_stays_flagged(corpus):
    for quote in ("Employees: 1,204 at year end", "Total revenue 999,999"):
        refs, quotes, flags = read(corpus, [{"file": REPORT, "page": 1, "quote": quote}])
        assert refs == [PageRef(REPORT, 1)] and quotes.found == (False,), quote
        assert not any("moved" in f for f in flags) and any(f.startswith("quote not found") for f in flags)


def test_a_quote_on_its_own_page_never_moves(corpus):
    make = [{"file": REPORT, "page": 2, "quote": "Total revenue 148,612"},
            {"file": REPORT, "page": 3, "quote": "Employees: 1,204"}]
    refs, quotes, flags = read(corpus, make)
    assert refs == [PageRef(REPORT, 2), PageRef(REPORT, 3)] and quotes.found == (True, True) and flags == []


def test_a_citation_without_a_quote_is_flagged(corpus):
    refs, quotes, flags = read(corpus, [{"file": REPORT, "page": 2}, "annual_report_2024.pdf p. 3"])
    assert refs == [PageRef(REPORT, 2), PageRef(REPORT, 3)] and quotes.found == (None, None)
    assert f"citation of {REPORT} p.2 carries no quote" in flags
    assert f"citation of {REPORT} p.3 carries no quote" in flags


def test_the_agent_writes_the_repaired_citation_into_the_row(corpus, registry, settings):
    config = load_config("offline").with_overrides(backend="scripted")
    agent = Agent(corpus, config, registry, settings, {"script": [
        {"search": "income statement revenue"},
        {"answer": ["148,612"], "citations": [{"file": "Annual_Report_2024", "page": 3,
                                               "quote": "Total revenue 148,612"}]},
    ]})
    question = "What was the total revenue in 2024?"
    row = Trace(question, config, "q1").consume(agent.run(question)).row()
    assert row["citations"] == [{"file": REPORT, "page": 2, "quote": "Total revenue 148,612"}]
    assert "cited file 'Annual_Report_2024' read as " + REPORT in row["flags"]
    assert "citation moved from p.3 to p.2: its quote is on that page" in row["flags"]
    assert row["quote_check"]["verified"] == 1
