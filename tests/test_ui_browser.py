"""The web app in headless Chromium: ask, click a citation, compare, upload privately, evaluate.

Screenshots of every tab go to ``test-artifacts/`` (look at them); the time from Enter to the
first streamed step and to the answer goes to ``test-artifacts/ui-timings.json``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser_support import (  # noqa: F401 - pytestmark applies to this module's tests
    ARTIFACTS,
    EBIT_QUESTION,
    Visitors,
    pytestmark,
    shot,
)
from tests.conftest import make_pdf


def tab(page: Any, name: str) -> None:
    page.get_by_role("tab", name=name).click()


WATCH = """() => {
  const chat = document.querySelector('#ask-chat');
  const count = (needle) => chat.innerText.split(needle).length - 1;
  // an abstention ends the run too: it reads "No answer." (which contains no "Answer:")
  const marks = {Starting: 'Starting', first_step: 'Model · step 1', first_search: 'Search 1:', answer: 'Answer:',
                 abstained: 'No answer.'};
  const before = Object.fromEntries(Object.entries(marks).map(([k, v]) => [k, count(v)]));
  const t = window.__madqa_t = {};
  document.querySelector('#ask-question textarea').addEventListener(
    'keydown', (e) => { if (e.key === 'Enter') t.enter = performance.now(); }, {once: true, capture: true});
  new MutationObserver(() => {
    for (const [k, v] of Object.entries(marks)) if (!(k in t) && count(v) > before[k]) t[k] = performance.now();
  }).observe(chat, {subtree: true, childList: true, characterData: true});
}"""


def ask(page: Any, question: str) -> dict[str, float]:
    """Ask in the chat and wait for the answer; returns ms from Enter to each milestone, measured in the page."""
    page.evaluate(WATCH)
    box = page.locator("#ask-question textarea")
    box.fill(question)
    box.press("Enter")
    page.wait_for_function("() => ['answer', 'abstained'].some((k) => k in (window.__madqa_t || {}))")
    marks = page.evaluate("() => window.__madqa_t")
    return {k: round(v - marks["enter"]) for k, v in marks.items() if k != "enter"}


def test_ask_streams_steps_and_a_citation_opens_the_page(visitors: Visitors) -> None:
    page = visitors.open()
    timings = [ask(page, EBIT_QUESTION)]
    chat = page.locator("#ask-chat")
    summary = chat.get_by_text(re.compile(r"^Searched \d+× · \d+ pages? read"))
    assert summary.count() >= 1  # answer first: the steps fold into one line that expands
    summary.first.click()
    expect(chat.get_by_text("Search 1:").first).to_be_visible()
    citation = chat.locator("button.option").first
    label = citation.inner_text()
    assert label.startswith("📄 ") and " · p." in label
    expect_file, expect_page = label[2:].rsplit(" · p.", 1)
    assert page.locator("#ask-seen img").count() >= 1 and page.locator("#ask-cited img").count() >= 1
    citation.click()
    expect(page.locator("#ask-page-caption")).to_contain_text(f"page {expect_page} of")
    viewer = page.locator("#ask-page img")
    viewer.wait_for()
    assert viewer.evaluate("img => img.naturalWidth") > 600
    expect(page.locator("#ask-page-caption")).to_contain_text("the quote is marked in yellow")
    expect(chat).to_contain_text("✓ quote found on the page")
    shot(page, "tab-ask")
    page.locator("#ask-page").screenshot(path=str(ARTIFACTS / "highlight-text-page.png"))
    page.locator("#ask-seen img").first.click()  # a thumbnail opens its page too
    expect(page.locator("#ask-page-caption")).to_contain_text("searchable text from")
    timings.append(ask(page, "How much profit after tax did the company make in 2024?"))
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "ui-timings.json").write_text(json.dumps({"ms_from_enter": timings}, indent=1))
    assert all(t["first_step"] <= t["answer"] for t in timings)
    assert expect_file


def test_a_citation_of_a_scanned_page_opens_highlighted_from_ocr_words(visitors: Visitors) -> None:
    page = visitors.open()
    ask(page, "Which firmware version was installed during the field service visit at Pumping Station Nord?")
    citation = page.locator("#ask-chat button.option").filter(has_text="scans/").first
    citation.click()
    caption = page.locator("#ask-page-caption")
    expect(caption).to_contain_text("searchable text from: OCR")
    expect(caption).to_contain_text("the quote is marked in yellow")
    page.locator("#ask-page img").wait_for()
    page.locator("#ask-page").screenshot(path=str(ARTIFACTS / "highlight-scanned-page.png"))


def test_compare_runs_both_panes_and_summarises(visitors: Visitors) -> None:
    page = visitors.open()
    tab(page, "Compare")
    picker = page.locator("#compare-example input")
    picker.click()
    picker.fill("demo-002")
    page.get_by_role("option", name="demo-002: What was the operating income").click()
    expect(page.locator("#compare-question textarea")).to_have_value(EBIT_QUESTION)  # filled by a server round trip
    page.locator("#compare-run").click()
    summary = page.locator("#compare-summary")
    expect(summary).to_contain_text("ANLS*")
    for pane in ("#compare-chat-a", "#compare-chat-b"):
        assert page.locator(pane).get_by_text("Answer:").count() >= 1
    assert summary.get_by_text("query drift").count() == 1 and summary.get_by_text("B: offline[top_k=3]").count() == 1
    shot(page, "tab-compare")


def test_an_upload_is_searchable_in_its_session_only(visitors: Visitors, tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "zorblax widgets.pdf", ["Quarterly note. The zorblax widget count was 4711 units."])
    owner = visitors.open()
    tab(owner, "Corpus")
    expect(owner.locator("#corpus-docs")).to_contain_text("finance/annual_report_2024.pdf")
    owner.locator("#corpus-files input[type=file]").set_input_files(str(pdf))
    # the file list renders stem and extension apart ("zorblax widgets .pdf" in innerText at times)
    expect(owner.locator("#corpus-files")).to_contain_text(re.compile(r"zorblax widgets\s*\.pdf"))
    owner.locator("#corpus-add").click()
    expect(owner.locator("#corpus-results")).to_contain_text("indexed")
    assert owner.locator("#corpus-choice input[value=mine]").is_checked()
    expect(owner.locator("#corpus-docs")).to_contain_text("zorblax widgets.pdf")
    owner.locator("#corpus-query textarea").fill("zorblax")
    owner.locator("#corpus-search").click()
    expect(owner.locator("#corpus-hits")).to_contain_text("4711 units")
    shot(owner, "tab-corpus")
    tab(owner, "Ask")
    ask(owner, "How many zorblax widgets were counted?")
    owner.locator("#ask-chat button.option", has_text="zorblax widgets.pdf · p.1").wait_for()

    stranger = visitors.open()
    tab(stranger, "Corpus")
    expect(stranger.locator("#corpus-docs")).to_contain_text("finance/annual_report_2024.pdf")
    assert stranger.get_by_text("zorblax").count() == 0
    stranger.locator("#corpus-query textarea").fill("zorblax")
    stranger.locator("#corpus-search").click()
    stranger.wait_for_timeout(1500)
    assert stranger.locator("#corpus-hits").get_by_text("zorblax").count() == 0
    stranger.locator("#corpus-choice").get_by_text("My uploads").click()
    expect(stranger.locator("#corpus-summary")).to_contain_text("No uploads yet")
    assert stranger.get_by_text("zorblax widgets.pdf").count() == 0
    shot(stranger, "tab-corpus-other-session")
    stranger.locator("#corpus-choice").get_by_text("Demo corpus").click()
    tab(stranger, "Ask")
    ask(stranger, "How many zorblax widgets were counted?")  # the stranger's agent cannot find the owner's file
    chat = stranger.locator("#ask-chat")
    assert chat.get_by_text("zorblax widgets.pdf").count() == 0 and chat.get_by_text("4711").count() == 0
    assert stranger.locator("#ask-chat button.option", has_text="zorblax").count() == 0


def test_evaluate_and_plugins_tabs(visitors: Visitors) -> None:
    page = visitors.open()
    tab(page, "Evaluate")
    page.locator("#eval-limit input").fill("4")
    page.locator("#eval-run").click()
    expect(page.locator("#eval-status")).to_contain_text("Ran 4 questions")
    expect(page.locator("#eval-metrics")).to_contain_text("strict accuracy")
    shot(page, "tab-evaluate")
    tab(page, "Plugins")
    expect(page.locator("#plugins-components")).to_contain_text("madqa_plugins.whoosh.whoosh_bm25")
    shot(page, "tab-plugins")
