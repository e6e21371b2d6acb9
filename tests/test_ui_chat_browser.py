"""Ask as a chat, in headless Chromium: who answers is said before the first question, a follow-up
answers from the conversation, the first answer's citations stay clickable, New chat starts over.
Screenshots: ``test-artifacts/chat-<what>.png``."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from madqa.plugins import collect, get_plugin_manager
from tests.browser_support import TIMEOUT_MS, Visitors, ask_and_wait, pytestmark, shot  # noqa: F401 - pytestmark marks the module

FIRST = "What was the employee turnover rate in 2023?"
FOLLOW_UP = "and in 2024?"


ask = ask_and_wait


def test_a_follow_up_answers_and_the_first_answers_citations_stay_clickable(visitors: Visitors) -> None:
    page = visitors.open(1440, 900)
    offline = collect(get_plugin_manager(entry_points=False)).get("backend", "offline").description
    bar = page.locator("#ask-model-bar")
    name, _, caveat = offline.partition(":")
    expect(bar).to_contain_text(name)  # before any question: the no-key baseline, by its own label ...
    expect(bar).to_contain_text(caveat.strip())  # ... its measured caveat folded under it
    expect(bar).to_contain_text("no API key needed")
    assert bar.bounding_box()["y"] < page.locator("#ask-chat").bounding_box()["y"]  # above the chat
    chat = page.locator("#ask-chat")
    ask(page, FIRST)
    expect(chat).to_contain_text("Answer: 8.1%")
    ask(page, FOLLOW_UP)
    expect(chat).to_contain_text("Answer: 6.8%")
    expect(chat).to_contain_text(offline)  # the badge names it as the bar does
    shot(page, "chat-follow-up-1440")
    # the first answer's own citation, in its own text, opens its page with the quote
    first_answer = chat.locator(".message", has_text="Answer: 8.1%").first
    link = first_answer.get_by_role("link", name=re.compile(r"annual_report_2024\.pdf · p\.9"))
    link.focus()
    page.keyboard.press("Enter")  # the keyboard reaches it too
    expect(page.locator("#ask-page-caption")).to_contain_text("page 9", timeout=TIMEOUT_MS)
    expect(page.locator("#ask-page img")).to_be_visible()
    assert page.url.split("#")[0] == page.url  # the link opened the viewer, not an address
    shot(page, "chat-earlier-citation-1440")
    page.locator("#ask-new-chat").click()
    expect(chat).not_to_contain_text("Answer: 8.1%")
    ask(page, FOLLOW_UP)  # nothing to follow: asked as typed, no 2024 turnover found
    expect(chat).not_to_contain_text("Answer: 6.8%")


def test_the_phone_sees_who_answers_on_its_first_screen(visitors: Visitors) -> None:
    page = visitors.open(390, 844)
    bar = page.locator("#ask-model-bar")
    expect(bar).to_contain_text("no API key needed")
    box = bar.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390  # not cut off sideways
    assert page.locator("#ask-new-chat").is_visible()
    shot(page, "chat-bar-390")
