"""Ask's scope picker in headless Chromium: "All documents" by default; one document chosen, every page the
agent's searches found comes from it and the answer says what was searched; axe stays clean with the picker
open and with a scoped answer. Screenshots: ``test-artifacts/scope-<what>.png``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser_support import Visitors, pytestmark, shot  # noqa: F401 - pytestmark marks the module
from tests.test_accessibility import violations
from tests.test_ui_chat_browser import ask

QUESTION = "What was Kestrel Dynamics' total revenue in 2024?"
SALES = "sales/q4_2024_sales_review.pdf"


def found_captions(page: Any) -> list[str]:
    """The captions of the "Pages found" gallery: ``p.N · file name (search K)``, one per page shown."""
    return [c.strip() for c in page.locator("#ask-seen .caption-label").all_inner_texts()]


def test_one_document_chosen_is_all_the_agent_searches(visitors: Visitors) -> None:
    page = visitors.open(1440, 900)
    picker = page.locator("#ask-scope")
    expect(picker).to_contain_text("All documents")  # the default, said in words
    assert picker.bounding_box()["y"] < page.locator("#ask-chat").bounding_box()["y"]  # in the bar, above the chat
    chat = page.locator("#ask-chat")
    ask(page, QUESTION)  # all documents: the annual report answers
    everywhere = found_captions(page)
    assert any("annual_report_2024.pdf" in c for c in everywhere), everywhere
    expect(chat).not_to_contain_text("Searched only")
    page.locator("#ask-new-chat").click()

    box = picker.locator("input")
    box.click()
    box.fill("sales")
    expect(page.get_by_role("option", name=SALES, exact=False)).to_be_visible()
    shot(page, "scope-picker-open-1440")
    open_problems = violations(page)
    page.get_by_role("option", name=SALES, exact=False).click()
    page.keyboard.press("Escape")
    expect(picker).to_contain_text(SALES)
    ask(page, QUESTION)
    expect(chat).to_contain_text(f"Searched only: {SALES}")
    scoped = found_captions(page)
    assert scoped and all("q4_2024_sales_review.pdf" in c for c in scoped), scoped
    for chip in page.locator("#ask-chat button.option").all_inner_texts():  # citations, if any, from it too
        assert "q4_2024_sales_review.pdf" in chip, chip
    shot(page, "scope-answer-1440")
    assert {"picker open": [v["id"] for v in open_problems],
            "scoped answer": [v["id"] for v in violations(page)]} == {"picker open": [], "scoped answer": []}


def test_the_phone_keeps_the_picker_inside_the_screen(visitors: Visitors) -> None:
    page = visitors.open(390, 844)
    box = page.locator("#ask-scope").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    shot(page, "scope-picker-390")


def test_a_visitors_uploads_are_the_choices_and_the_corpus_search_takes_file_terms(visitors: Visitors,
                                                                                   tmp_path: Path) -> None:
    from tests.conftest import make_pdf

    zorblax = make_pdf(tmp_path / "zorblax counts.pdf", ["The zorblax widgets counted 4,711 in March."])
    quibble = make_pdf(tmp_path / "quibble log.pdf", ["The zorblax widgets counted 9,999 in the quibble log."] * 3)
    page = visitors.open(1440, 900)
    page.get_by_role("tab", name="Corpus").click()
    page.locator("#corpus-files input[type=file]").set_input_files([str(zorblax), str(quibble)])
    page.locator("#corpus-add").click()
    expect(page.locator("#corpus-results")).to_contain_text("indexed")
    page.locator("#corpus-query textarea").fill('zorblax file:"zorblax counts"')
    page.locator("#corpus-search").click()
    expect(page.locator("#corpus-hits")).to_contain_text("zorblax counts.pdf")
    expect(page.locator("#corpus-hits")).not_to_contain_text("quibble log.pdf")
    page.get_by_role("tab", name="Ask").click()
    box = page.locator("#ask-scope input")
    box.click()
    expect(page.get_by_role("option", name="quibble log.pdf (3 p.)")).to_be_visible()  # the uploads, not the demo
    expect(page.get_by_role("option", name=SALES, exact=False)).to_have_count(0)
    page.get_by_role("option", name="zorblax counts.pdf (1 p.)").click()
    page.keyboard.press("Escape")
    ask(page, "How many zorblax widgets were counted?")
    chat = page.locator("#ask-chat")
    expect(chat).to_contain_text("Searched only: zorblax counts.pdf")
    captions = found_captions(page)
    assert captions and all("zorblax counts.pdf" in c for c in captions), captions
    expect(chat).to_contain_text("4,711")
