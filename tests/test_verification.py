"""Answers checked on their pages (madqa.verification): each item written on its cited page, moved to
another page seen, in another scale there, on no page seen, or too long to be a short answer."""

from __future__ import annotations

import pytest

from madqa.types import PageRef
from madqa.verification import MAX_ITEM_CHARS, check_item, dates, item_flag, written_on

STATEMENT = PageRef("report.pdf", 6)
LETTER = PageRef("report.pdf", 3)
HEADCOUNT = PageRef("report.pdf", 9)
PAGES = {
    STATEMENT: "Consolidated income statement (EUR thousand)\n2024 2023\nRevenue 148,612 131,400\n"
               "Operating income (EBIT) 19,218 15,005\nNet margin 9.4 % 8.1 %\n",
    LETTER: "Dear shareholders, revenue grew to EUR 148.6 million and EBIT reached EUR 19 million.\n"
            "The Board approved the con-\nsolidated accounts on 31 March 2025.",
    HEADCOUNT: "Head\u00adcount at year end: 1,204 employees in the ﬁeld and at head ofﬁce",
}


def check(item: str, cited: PageRef, pages: dict[PageRef, str] = PAGES):
    return check_item(item, [cited], list(pages), pages.__getitem__)


@pytest.mark.parametrize("item", [
    "148,612", "148.612", "148 612", "EUR 148,612", "€148,612", "148,612 thousand euros", "EUR 148,612 thousand",
    "Revenue 148,612", "revenue", "9.4%", "9,4 percent", "Operating income (EBIT)", "EBIT 15,005",
])
def test_items_written_on_the_cited_page_are_found_whatever_their_separators_units_and_case(item):
    assert check(item, STATEMENT).verdict == "cited"


@pytest.mark.parametrize("item", ["31 March 2025", "2025-03-31", "March 31, 2025", "31.03.2025", "31st March 2025"])
def test_a_date_is_found_in_any_common_form(item):
    assert check(item, LETTER).verdict == "cited"


def test_hyphenation_ligatures_and_soft_hyphens_do_not_hide_an_answer():
    assert check("consolidated accounts", LETTER).verdict == "cited"
    assert check("headcount", HEADCOUNT).verdict == "cited"
    assert check("in the field and at head office", HEADCOUNT).verdict == "cited"


def test_an_item_on_another_page_seen_moves_its_citation_there():
    moved = check("148.612 Tausend EUR", HEADCOUNT)  # another language, citing the headcount page
    assert moved.verdict == "moved" and moved.page == STATEMENT and moved.verified is not False
    assert "not on its cited page" in (item_flag(moved) or "")


def test_a_value_in_another_scale_is_not_as_written():
    only_statement = {STATEMENT: PAGES[STATEMENT]}
    for item, printed in (("EUR 148.6 million", "148,612"), ("EUR 19 million", "19,218"),
                          ("EUR 0.15 billion", "148,612")):
        scaled = check(item, STATEMENT, only_statement)
        assert (scaled.verdict, scaled.written, scaled.verified) == ("scale", printed, False), item
    # written so on the letter, which was seen: found there as written
    assert check("EUR 19 million", STATEMENT).verdict == "moved"


def test_a_wrong_value_a_whole_page_and_an_empty_guess_are_not_verified():
    assert check("1,205", HEADCOUNT).verdict == "unseen"
    assert check("2025", HEADCOUNT).verdict == "moved"  # the year is on the letter
    whole = check(PAGES[LETTER] * 3, LETTER)
    assert whole.verdict == "long" and str(MAX_ITEM_CHARS) in (item_flag(whole) or "")
    assert check("Kestrel Dynamics", STATEMENT).verdict == "unseen"


def test_dates_reads_the_ambiguous_form_both_ways():
    assert dates("03/04/2024") == {(2024, 4, 3), (2024, 3, 4)}
    assert dates("2024-13-40") == set()


def test_written_on_does_not_match_inside_longer_numbers_or_words():
    assert not written_on("612", "Revenue 148,612")
    assert not written_on("14", "Revenue 148,612")
    assert not written_on("cat", "a category")
    assert written_on("a category", "A  CATEGORY")


def test_a_scale_word_on_the_page_counts_as_written():
    page = {LETTER: "Revenue grew to EUR 7.5 million in 2024."}
    assert check("EUR 7.5 million", LETTER, page).verdict == "cited"
    for item in ("7,500 thousand", "7,500,000", "EUR 7500 k"):
        scaled = check(item, LETTER, page)
        assert (scaled.verdict, scaled.written) == ("scale", "7.5"), item
