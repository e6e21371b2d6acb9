"""In a real browser: a question the offline baseline refuses shows its closest passages, and a
passage's chip opens its page with the matching lines highlighted (issue 29)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser_support import (  # noqa: F401 - pytestmark applies to this module's tests
    Visitors,
    pytestmark,
    shot,
)
from tests.test_ui_browser import ask

# the demo's renewable-share question: the baseline is not sure of '78%' and refuses (docs/offline-reader.md)
REFUSED = "What share of the company's electricity came from renewable sources in 2024?"


def test_a_refusal_shows_its_closest_passages_highlighted_on_the_page(visitors: Visitors) -> None:
    page = visitors.open()
    ask(page, REFUSED)
    chat = page.locator("#ask-chat")
    expect(chat).to_contain_text("No answer.")
    expect(chat).to_contain_text("closest passages")
    expect(chat).to_contain_text("Closest passage, ")
    chip = chat.locator("button.option").first
    chip.click()
    caption = page.locator("#ask-page-caption")
    expect(caption).to_contain_text("the matching lines are marked in yellow")
    expect(caption).not_to_contain_text("not found on this page")
    shot(page, "offline-closest-passages")
