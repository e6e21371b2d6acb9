"""The web app as a first-time visitor meets it, in headless Chromium at 1440×900 and 390×844.

Honest answers (a badge naming the backend, keyless configs said up front), the answer first,
citation chips beside the answer, the empty state, the Compare summary fitting the screen and
the phone layout. Screenshots go to ``test-artifacts/visitor-<what>-<width>.png``; the time
from ``goto`` to a visible question box goes to ``test-artifacts/ui-first-visit.json``
(recorded, never asserted).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from madqa.plugins import collect, get_plugin_manager
from tests.browser_support import (  # noqa: F401 - pytestmark applies to this module's tests
    ARTIFACTS,
    EBIT_QUESTION,
    TIMEOUT_MS,
    Visitors,
    pytestmark,
    shot,
)

FIRST_VISIT: dict[str, int] = {}
OFFLINE_LABEL = collect(get_plugin_manager(entry_points=False)).get("backend", "offline").description  # viewport width -> ms from goto until the question box is visible


@pytest.fixture(scope="module", autouse=True)
def first_visit_record() -> Iterator[None]:
    """Writes the first-visit timings of this module's visitors to test-artifacts/ui-first-visit.json."""
    yield
    if FIRST_VISIT:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "ui-first-visit.json").write_text(json.dumps({"ms_goto_to_question_box": FIRST_VISIT}, indent=1))


def visit(visitors: Visitors, width: int, height: int) -> Any:
    """A fresh visitor's page at this size; its first-visit time is recorded."""
    page = visitors.open(width, height)
    FIRST_VISIT.setdefault(str(width), visitors.first_visit_ms[width])
    return page


def ask(page: Any, question: str) -> None:
    box = page.locator("#ask-question textarea")
    box.fill(question)
    box.press("Enter")
    expect(page.locator("#ask-stop")).to_be_disabled()  # idle again: the answer is in


def pick_config(page: Any, panel: str, label: str) -> None:
    """Pick a named config in the config panel ``panel`` (its elem_id) by (the start of) its menu label."""
    field = page.locator(f"#{panel}").get_by_label("Named config")
    field.click()
    page.get_by_role("option", name=re.compile(re.escape(label))).click()


def test_an_answer_names_its_backend_and_its_citations_sit_with_it(visitors: Visitors) -> None:
    page = visit(visitors, 1440, 900)
    assert page.locator("h1").count() >= 1
    expect(page.locator("#ask-stop")).to_be_disabled()  # nothing to stop yet
    page.locator("#ask-question textarea").fill("How much?")
    expect(page.locator("#ask-counter")).to_contain_text("9 / 2,000")
    shot(page, "visitor-empty-1440")
    ask(page, EBIT_QUESTION)
    chat = page.locator("#ask-chat")
    expect(chat).to_contain_text(OFFLINE_LABEL)  # the backend's own label, its measured precision in it
    summary = chat.get_by_text(re.compile(r"^Searched \d+×"))
    summary.first.click()
    expect(chat.get_by_text("Search 1:").first).to_be_visible()
    chip = chat.locator("button.option").first
    bubble = chat.locator(".message.bot, .bot").filter(has_text="Answer").last
    chip_x, bubble_x = chip.bounding_box()["x"], bubble.bounding_box()["x"]
    assert abs(chip_x - bubble_x) < 60, (chip_x, bubble_x)  # under the answer, not right like a user's message
    chip.click()
    expect(page.locator("#ask-page-caption")).to_contain_text("page")
    page.locator("#ask-page img").wait_for()
    # the page comes into view (at 900 px the viewer starts near the screen's bottom edge)
    page.wait_for_function("() => { const r = document.getElementById('ask-page-viewer').getBoundingClientRect();"
                           " return r.top >= 0 && r.top <= innerHeight / 2; }", timeout=10_000)
    shot(page, "visitor-answer-1440")


def test_an_example_chip_asks(visitors: Visitors) -> None:
    page = visit(visitors, 1440, 900)
    example = page.locator("#ask-chat").get_by_role("button").first
    text = example.inner_text().strip()
    assert text
    example.click()
    expect(page.locator("#ask-chat")).to_contain_text("Answered by", timeout=TIMEOUT_MS)


def test_a_keyless_config_says_so_in_ask_and_compare(visitors: Visitors) -> None:
    page = visit(visitors, 1440, 900)
    page.get_by_text("Settings: config, model, retrieval").click()
    pick_config(page, "ask-config", "gpt-4.1-mini (needs OPENAI_API_KEY")
    ask(page, EBIT_QUESTION)
    chat = page.locator("#ask-chat")
    expect(chat).to_contain_text("The model cannot be reached")
    expect(chat).to_contain_text("OpenAI API key")
    assert chat.get_by_text("did not find an answer").count() == 0
    page.get_by_role("tab", name="Compare").click()
    page.get_by_text("Config B").click()
    pick_config(page, "compare-config-b", "gpt-4.1-mini (needs OPENAI_API_KEY")
    page.locator("#compare-question textarea").fill(EBIT_QUESTION)
    page.locator("#compare-run").click()
    summary = page.locator("#compare-summary")
    expect(summary).to_contain_text("time (s)")
    expect(page.locator("#compare-chat-a, #compare-chat-b")).to_contain_text(["OpenAI API key"])
    expect(summary).to_contain_text("not run: needs an API key")
    shot(page, "visitor-compare-keyless-1440")


def test_the_compare_summary_fits_at_1440(visitors: Visitors) -> None:
    page = visit(visitors, 1440, 900)
    page.get_by_role("tab", name="Compare").click()
    picker = page.locator("#compare-example input")
    picker.click()
    picker.fill("demo-002")
    page.get_by_role("option", name=re.compile("^demo-002")).click()
    expect(page.locator("#compare-question textarea")).to_have_value(EBIT_QUESTION)
    expect(page.locator("#compare-stop")).to_be_disabled()  # nothing to stop yet
    page.locator("#compare-run").click()
    summary = page.locator("#compare-summary")
    expect(summary).to_contain_text("ANLS*")
    expect(page.locator("#compare-stop")).to_be_disabled()  # idle again
    for pane in ("#compare-chat-a", "#compare-chat-b"):  # answer first, and who answered
        expect(page.locator(pane)).to_contain_text(OFFLINE_LABEL)
        expect(page.locator(pane).get_by_text(re.compile(r"^Searched \d+×")).first).to_be_visible()
    chats_right = page.locator("#compare-chat-b").bounding_box()
    viewer = page.locator("#compare-page-viewer").bounding_box()
    assert viewer["x"] >= chats_right["x"] + chats_right["width"] - 1, (viewer, chats_right)  # beside the chats
    page.locator("#compare-chat-b button.option").first.click()
    expect(page.locator("#compare-page-caption")).to_contain_text("page 6 of")
    expect(summary).to_contain_text("gold answer: 15,005")
    expect(page.locator("#compare-drift-note")).to_contain_text("Query drift")
    overflow = summary.evaluate("""el => [...el.querySelectorAll('*')].filter(e => e.scrollWidth > e.clientWidth + 1
                                          && getComputedStyle(e).overflowX !== 'visible').length""")
    box = summary.bounding_box()
    assert box["x"] + box["width"] <= 1440 and overflow == 0
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert summary.get_by_text("B: offline[top_k=3]").count() == 1
    shot(page, "visitor-compare-1440")
    box = page.locator("#compare-question textarea")
    box.press("End")
    box.press_sequentially(" Really?")  # typed (Gradio's input event needs keys, not fill): the pick no longer applies
    expect(page.locator("#compare-example input")).to_have_value("")


def test_the_phone_shows_the_question_box_first(visitors: Visitors) -> None:
    page = visit(visitors, 390, 844)
    box = page.locator("#ask-question textarea").bounding_box()
    assert box["y"] < 844 and box["width"] >= 280, box  # in the first screen, a whole line wide (204 px beside the buttons)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert page.locator("h1").count() >= 1
    shot(page, "visitor-empty-390")
    ask(page, EBIT_QUESTION)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    shot(page, "visitor-answer-390")


def test_evaluate_leads_with_cards_and_shows_every_number(visitors: Visitors) -> None:
    page = visit(visitors, 1440, 900)
    page.get_by_role("tab", name="Evaluate").click()
    page.locator("#eval-limit input").fill("3")
    page.locator("#eval-run").click()
    expect(page.locator("#eval-status")).to_contain_text("on the demo corpus")
    cards = page.locator("#eval-cards .eval-card")
    expect(cards).to_have_count(3)
    tops = {round(cards.nth(i).bounding_box()["y"]) for i in range(3)}
    assert len(tops) == 1, tops  # three cards in one row, not a stack of text
    expect(cards.first).to_contain_text("Accuracy")
    metrics = page.locator("#eval-metrics")
    expect(metrics).to_contain_text("strict accuracy")
    column = metrics.get_by_role("columnheader", name="offline").first.bounding_box()
    table = metrics.bounding_box()
    assert column["x"] + column["width"] <= table["x"] + table["width"] + 1, (column, table)  # the numbers in view
    assert page.get_by_text("needs OPENAI_API_KEY or your key").count() >= 1  # keyless configs marked in the menu
    shot(page, "visitor-evaluate-1440")


SCRIPTS_JS = "() => performance.getEntriesByType('resource').filter(e => e.name.endsWith('.js')).length"


def test_tabs_not_opened_yet_fetch_their_code_on_the_first_click(visitors: Visitors) -> None:
    page = visit(visitors, 1440, 900)
    page.wait_for_timeout(500)  # whatever the first paint still fetches
    before = page.evaluate(SCRIPTS_JS)
    assert page.locator("#eval-run").count() == 0 and page.locator("#ask-seen").count() == 0  # not drawn yet
    for name, control in (("Compare", "#compare-run"), ("Corpus", "#corpus-docs"), ("Evaluate", "#eval-run"),
                          ("You search", "#human-pick"), ("Plugins", "#plugins-components")):
        page.get_by_role("tab", name=name).click()
        expect(page.locator(control)).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), name
    assert page.evaluate(SCRIPTS_JS) > before  # data frames, plots, file pickers: fetched when first needed
    page.get_by_role("tab", name="Evaluate").click()
    expect(page.locator("#eval-run")).to_be_visible()  # a second opening shows it as well
    ask_page = visit(visitors, 390, 844)
    ask(ask_page, EBIT_QUESTION)
    expect(ask_page.locator("#ask-seen img").first).to_be_visible()  # the galleries appear with their first page


INSIDE_JS = "() => document.getElementById('ask-page-viewer').contains(document.activeElement)"


def test_a_citation_on_a_phone_opens_the_page_in_a_modal(visitors: Visitors) -> None:
    page = visit(visitors, 390, 844)
    ask(page, EBIT_QUESTION)
    chip = page.locator("#ask-chat button.option").first
    chip.click()
    viewer = page.locator("#ask-page-viewer")
    expect(viewer).to_have_attribute("role", "dialog")
    expect(page.locator("#ask-page-caption")).to_contain_text("the quote is marked in yellow")
    expect(page.locator("#ask-page img")).to_be_visible()
    box = viewer.bounding_box()
    assert box["x"] <= 1 and box["y"] <= 1 and box["width"] >= 385, box  # over the page, not below the chat
    close = viewer.get_by_role("button", name="Close the page")
    expect(close).to_be_focused()
    for _ in range(6):  # the focus stays in the dialog
        page.keyboard.press("Tab")
        assert page.evaluate(INSIDE_JS)
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(INSIDE_JS)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    page.wait_for_timeout(400)
    page.screenshot(path=str(ARTIFACTS / "visitor-citation-modal-390.png"))
    page.keyboard.press("Escape")
    expect(viewer).not_to_have_attribute("role", "dialog")
    expect(chip).to_be_focused()  # back where the visitor was
    chip.click()
    expect(viewer).to_have_attribute("role", "dialog")
    close.click()
    expect(viewer).not_to_have_attribute("role", "dialog")
    wide = visit(visitors, 1440, 900)
    ask(wide, EBIT_QUESTION)
    wide.locator("#ask-chat button.option").first.click()
    expect(wide.locator("#ask-page-caption")).to_contain_text("the quote is marked in yellow")
    expect(wide.locator("#ask-page-viewer")).not_to_have_attribute("role", "dialog")  # the side viewer, as before
    chat, side = wide.locator("#ask-chat").bounding_box(), wide.locator("#ask-page-viewer").bounding_box()
    assert side["x"] >= chat["x"] + chat["width"] - 1, (chat, side)


# greyed by a colour that still reads (gray-500, 4.8:1 on white; axe's colour contrast), in italics
GREYED_JS = ("el => getComputedStyle(el).fontStyle === 'italic' && [el, ...el.querySelectorAll('span')]"
             ".some((e) => getComputedStyle(e).color === 'rgb(107, 114, 128)')")


def test_keyless_configs_are_greyed_with_the_reason_and_still_say_why_when_chosen(visitors: Visitors) -> None:
    page = visit(visitors, 1440, 900)
    page.get_by_text("Settings: config, model, retrieval").click()
    expect(page.locator("#ask-config")).to_contain_text("greyed: needs a provider key")
    page.locator("#ask-config").get_by_label("Named config").click()
    keyless = page.get_by_role("option", name=re.compile(r"^gpt-4\.1-mini \(needs OPENAI_API_KEY"))
    expect(keyless).to_have_class(re.compile("keyless-config"))
    assert keyless.evaluate(GREYED_JS)
    assert "OPENAI_API_KEY" in (keyless.get_attribute("title") or "")
    runnable = page.get_by_role("option", name="offline", exact=True)
    assert not runnable.evaluate(GREYED_JS)
    shot(page, "visitor-keyless-greyed-1440")
    page.keyboard.press("Escape")
    page.get_by_role("tab", name="Evaluate").click()
    label = page.locator("#eval-configs label").filter(has_text="gpt-4.1-mini")
    expect(label).to_have_class(re.compile("keyless-config"))
    assert label.evaluate(GREYED_JS)
    label.click()  # still choosable: the run says why it is not scored
    page.locator("#eval-limit input").fill("2")
    page.locator("#eval-run").click()
    status = page.locator("#eval-status")
    expect(status).to_contain_text("gpt-4.1-mini: not run, needs a key")
    expect(status).to_contain_text("OPENAI_API_KEY")
    expect(page.locator("#eval-cards .eval-card")).to_have_count(3)  # offline's cards only: no 0.0 for the keyless
    assert page.locator("#eval-metrics").get_by_role("columnheader", name="gpt-4.1-mini").count() == 0


def test_captions_wrap_at_separators_and_keep_the_full_name_as_title(visitors: Visitors) -> None:
    page = visit(visitors, 1440, 900)
    ask(page, "travel expense claim TEC-2024-0342 total")
    name = "travel_expense_claim_tec_2024_0342.pdf"
    caption = page.locator(f'#ask-seen .caption-label[title*="{name}"]').first
    expect(caption).to_have_attribute("data-shown", re.compile("…"))
    shown = caption.get_attribute("data-shown") or ""
    assert shown.startswith("p.") and "travel_\u200bexpense" in shown and "…" in shown, shown  # cut in the middle
    assert re.search(r"\.\u200bpdf( \(search \d+\))?$", shown), shown  # the end of the name is kept
    fits = caption.evaluate("el => el.getBoundingClientRect().right <= el.closest('.thumbnail-item')"
                            ".getBoundingClientRect().right + 1")
    assert fits
    shot(page, "visitor-captions-1440")


def test_a_plot_with_nothing_to_show_says_so_instead_of_an_empty_frame(visitors: Visitors) -> None:
    page = visit(visitors, 1440, 900)
    page.get_by_role("tab", name="Evaluate").click()
    page.locator("#eval-limit input").fill("1")  # one question: never both right and wrong answers
    page.locator("#eval-run").click()
    note = page.locator("#eval-nothing-to-plot")
    expect(note).to_contain_text("Kuiper curve — nothing to plot")
    assert page.get_by_text("Kuiper cumulative deviation").count() == 0  # no empty frame drawn
    shot(page, "visitor-evaluate-nothing-to-plot-1440")


def test_the_api_page_still_lists_the_endpoints_without_the_schemas_in_the_page_config(visitors: Visitors) -> None:
    page = visit(visitors, 1440, 900)
    assert page.evaluate("() => window.gradio_config.components.filter(c => 'api_info' in c).length") == 0
    page.get_by_text("Use via API").click()
    snippet = page.locator("code, pre").filter(has_text='api_name="/ask"').first
    expect(snippet).to_contain_text('question="Hello!!"')  # parameters and examples from the endpoints' schemas
    for name in ("/compare", "/evaluate", "/add_documents", "/search_corpus", "/diff"):
        expect(page.get_by_text(name, exact=True).first).to_be_attached()
