"""An operator's collection in headless Chromium (issue 28): the page opens on it, the picker in Ask's top bar
names it with its size, a question is answered from it with a citation of its PDF, the demo can be picked instead,
the choice holds in Compare, and two visitors ask at once. Screenshot: ``test-artifacts/collections-ask.png``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from madqa.settings import Settings
from tests.browser_support import EBIT_QUESTION, TIMEOUT_MS, pytestmark, served, shot  # noqa: F401 - marks the module
from tests.test_ui_chat_browser import ask
from tests.test_ui_collections import make_papers

FERRY = "How many passengers did the Quillmarsh ferry carry in March?"


@pytest.fixture(scope="module")
def papers_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = make_papers(tmp_path_factory.mktemp("browser-papers"))
    settings = Settings.from_env(env={}, home=tmp_path_factory.mktemp("browser-collections-home"),
                                 collections=f"papers={folder}", web_requests_per_minute=100_000,
                                 web_jobs_per_client=100)
    with served(settings) as url:
        yield url


def open_page(browser: Any, url: str) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url, wait_until="domcontentloaded")
    page.locator("#ask-question textarea").wait_for(state="visible")
    expect(page.locator("#status")).to_contain_text("papers ready: 3 documents, 4 pages")
    return context, page


def pick(page: Any, elem_id: str, words: str) -> None:
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=words).first.click()


def test_a_visitor_picks_the_collection_and_is_answered_from_it(browser: Any, papers_url: str) -> None:
    context, page = open_page(browser, papers_url)
    try:
        picker = page.locator("#ask-collection input")
        expect(picker).to_have_value("papers — 3 documents, 4 pages, 1 failed")  # the page opens on it
        bar = page.locator("#ask-model-bar")
        assert abs(picker.bounding_box()["y"] - bar.bounding_box()["y"]) < 80  # one bar at the top
        chat = page.locator("#ask-chat")
        ask(page, FERRY)
        expect(chat).to_contain_text("8316")
        expect(chat.get_by_role("link", name="ferries.pdf · p.1").first).to_be_visible()
        shot(page, "collections-ask")
        pick(page, "ask-collection", "Demo corpus")
        expect(page.locator("#status")).to_contain_text("Searching: the demo corpus")
        page.locator("#ask-new-chat").click()
        ask(page, EBIT_QUESTION)
        expect(chat).to_contain_text("15,005")
        page.get_by_role("tab", name="Compare").click()  # the choice holds in every tab
        expect(page.locator("#compare-collection input")).to_have_value("Demo corpus — 9 documents, 44 pages")
        pick(page, "compare-collection", "papers")
        page.get_by_role("tab", name="Ask").click()
        expect(page.locator("#ask-collection input")).to_have_value("papers — 3 documents, 4 pages, 1 failed")
    finally:
        context.close()


def test_two_visitors_ask_the_collection_at_once(browser: Any, papers_url: str) -> None:
    (one, first), (two, second) = open_page(browser, papers_url), open_page(browser, papers_url)
    try:
        for page, question in ((first, FERRY), (second, "How many crates of apples did the Brackenfold orchard "
                                                        "harvest?")):
            box = page.locator("#ask-question textarea")
            box.fill(question)
            box.press("Enter")  # both asked before either answer is in
        expect(first.locator("#ask-chat")).to_contain_text("8316")
        expect(second.locator("#ask-chat")).to_contain_text("2950")
        expect(second.locator("#ask-chat").get_by_role("link", name="orchard/apples.pdf · p.1").first).to_be_visible()
    finally:
        one.close()
        two.close()


def test_a_tab_opened_again_follows_the_choice_without_a_server_error(browser: Any, papers_url: str) -> None:
    """Compare opened, the collection changed in Ask, Compare opened again: its picker names the new choice and its
    question list stays usable. The refresh at a later opening sent its one output as a 1-tuple, which Gradio took for
    the value itself: the picker went blank, the question list showed "Error" and the server logged a 500."""
    context, page = open_page(browser, papers_url)
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 500 else None)
    try:
        page.get_by_role("tab", name="Compare").click()
        expect(page.locator("#compare-collection input")).to_have_value("papers — 3 documents, 4 pages, 1 failed")
        page.get_by_role("tab", name="Ask").click()
        pick(page, "ask-collection", "Demo corpus")
        expect(page.locator("#status")).to_contain_text("Searching: the demo corpus")
        page.get_by_role("tab", name="Compare").click()
        expect(page.locator("#compare-collection input")).to_have_value("Demo corpus — 9 documents, 44 pages")
        questions = page.locator("#compare-example")
        expect(questions).to_be_visible()  # the demo's own question set
        page.wait_for_timeout(1500)  # the events of the opening all answered
        expect(questions).not_to_contain_text("Error")
        assert failed == []
        page.get_by_role("tab", name="Ask").click()
        page.get_by_role("tab", name="Compare").click()  # and again, nothing changed
        expect(page.locator("#compare-collection input")).to_have_value("Demo corpus — 9 documents, 44 pages")
        page.wait_for_timeout(1500)
        expect(questions).not_to_contain_text("Error")
        assert failed == []
    finally:
        context.close()


def test_the_documents_named_under_the_question_box_follow_the_collection_picked(browser: Any, papers_url: str) -> None:
    """Under the question box the documents named are the picked collection's: after picking the demo corpus they
    still named the papers' documents."""
    context, page = open_page(browser, papers_url)
    try:
        strip = page.locator("#ask-documents")
        expect(strip).to_contain_text("Documents of papers")
        expect(strip).to_contain_text("ferries.pdf")
        pick(page, "ask-collection", "Demo corpus")
        expect(strip).to_contain_text("Demo documents")
        expect(strip).to_contain_text("annual_report_2024.pdf")
        expect(strip).not_to_contain_text("ferries.pdf")
        pick(page, "ask-collection", "Your uploads")
        expect(strip).not_to_contain_text("annual_report_2024.pdf")  # none uploaded: nothing named
        pick(page, "ask-collection", "papers")
        expect(strip).to_contain_text("ferries.pdf")
    finally:
        context.close()


def test_a_question_after_switching_collection_is_not_a_follow_up_of_the_other_collections_turns(
        browser: Any, papers_url: str) -> None:
    """Asked of the papers, then the demo corpus picked mid-chat: the next question is asked on its own and says why.
    It was taken as a follow-up of the papers' question ("How many passengers did the Quillmarsh ferry carry in
    April?", searched in the demo corpus), and a model would have been given pages the demo corpus does not hold."""
    context, page = open_page(browser, papers_url)
    try:
        chat = page.locator("#ask-chat")
        ask(page, FERRY)
        expect(chat).to_contain_text("8316")
        pick(page, "ask-collection", "Demo corpus")
        expect(page.locator("#status")).to_contain_text("Searching: the demo corpus")
        ask(page, "and in April?")
        expect(chat).to_contain_text("asked on its own, not as a follow-up: the earlier turns of this chat searched "
                                     "papers, this question the demo corpus")
        expect(chat).not_to_contain_text("Quillmarsh ferry carry in April")  # no rewrite from the papers' question
        ask(page, "What was the employee turnover rate in 2023?")  # same collection again: follow-ups as before
        expect(chat).to_contain_text("Answer: 8.1%")
        ask(page, "and in 2024?")
        expect(chat).to_contain_text("Answer: 6.8%")
    finally:
        context.close()


def test_the_documents_chosen_to_search_follow_a_switch_of_collection(browser: Any, papers_url: str) -> None:
    """A document of the papers chosen under "Search in", then the demo corpus picked: the choice is dropped and the
    demo's documents offered. It stayed ("ferries.pdf"), and the next question failed: "file 'ferries.pdf' is not a
    document of this collection"."""
    context, page = open_page(browser, papers_url)
    try:
        scope = page.locator("#ask-scope")
        scope.locator("input").click()
        page.get_by_role("option", name="ferries.pdf").click()
        page.keyboard.press("Escape")
        expect(scope).to_contain_text("ferries.pdf")
        pick(page, "ask-collection", "Demo corpus")
        expect(page.locator("#status")).to_contain_text("Searching: the demo corpus")
        expect(scope).not_to_contain_text("ferries.pdf")
        scope.locator("input").click()
        expect(page.get_by_role("option", name="finance/annual_report_2024.pdf", exact=False)).to_be_visible()
        page.keyboard.press("Escape")
        ask(page, EBIT_QUESTION)
        expect(page.locator("#ask-chat")).to_contain_text("15,005")
        expect(page.locator("#ask-chat")).not_to_contain_text("is not a document of this collection")
    finally:
        context.close()
