"""The web app as a first-time visitor meets it, in headless Chromium at 1440×900 and 390×844.

Honest answers (a badge naming the backend, keyless configs said up front), the answer first,
citation chips beside the answer, the empty state, the Compare summary fitting the screen and
the phone layout. Screenshots go to ``test-artifacts/visitor-<what>-<width>.png``; the time
from ``goto`` to a visible question box goes to ``test-artifacts/ui-first-visit.json``
(recorded, never asserted).
"""

from __future__ import annotations

import gc
import json
import re
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from madqa.plugins import collect, get_plugin_manager
from madqa.settings import Settings
from madqa.ui import build_app, launch_options
from tests.test_ui_browser import ARGS, ARTIFACTS, CHROMIUM, EBIT_QUESTION, TIMEOUT_MS, pytestmark  # noqa: F401

KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
FIRST_VISIT: dict[str, float] = {}


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with pytest.MonkeyPatch.context() as mp:
        for name in KEY_VARIABLES:  # a server without any provider key, as on a fresh Space
            mp.delenv(name, raising=False)
        settings = Settings.from_env(env={}, home=tmp_path_factory.mktemp("visitor-home"))
        app = build_app(settings, collect(get_plugin_manager(entry_points=False)))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        app.launch(**{**launch_options(settings), "server_name": "127.0.0.1", "server_port": port,
                      "prevent_thread_lock": True, "quiet": True})
        gc.collect()
        try:
            yield f"http://127.0.0.1:{port}/"
        finally:
            app.close()
            gc.collect()
            if FIRST_VISIT:
                ARTIFACTS.mkdir(exist_ok=True)
                (ARTIFACTS / "ui-first-visit.json").write_text(json.dumps(
                    {"ms_goto_to_question_box": FIRST_VISIT}, indent=1))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def visit(browser: Any, url: str, width: int, height: int) -> Any:
    """A fresh visitor's page; records goto -> question box visible (ms) for this width."""
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.set_default_timeout(TIMEOUT_MS)
    started = time.perf_counter()
    page.goto(url)
    page.locator("#ask-question textarea").wait_for(state="visible")
    FIRST_VISIT.setdefault(str(width), round((time.perf_counter() - started) * 1000))
    page.wait_for_selector("#status >> text=Demo corpus ready")
    return page


def shot(page: Any, what: str, width: int) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(400)  # let the last update paint
    page.screenshot(path=str(ARTIFACTS / f"visitor-{what}-{width}.png"), full_page=True)


def ask(page: Any, question: str) -> None:
    box = page.locator("#ask-question textarea")
    box.fill(question)
    box.press("Enter")
    expect(page.locator("#ask-stop")).to_be_disabled()  # idle again: the answer is in


def pick_config(page: Any, index: int, label: str) -> None:
    """Pick a named config in the ``index``-th visible config panel by (the start of) its menu label."""
    field = page.get_by_label("Named config").filter(visible=True).nth(index)
    field.click()
    page.get_by_role("option", name=re.compile(re.escape(label))).click()


def test_an_answer_names_its_backend_and_its_citations_sit_with_it(browser: Any, app_url: str) -> None:
    page = visit(browser, app_url, 1440, 900)
    assert page.locator("h1").count() >= 1
    expect(page.locator("#ask-stop")).to_be_disabled()  # nothing to stop yet
    page.locator("#ask-question textarea").fill("How much?")
    expect(page.locator("#ask-counter")).to_contain_text("9 / 2,000")
    shot(page, "empty", 1440)
    ask(page, EBIT_QUESTION)
    chat = page.locator("#ask-chat")
    expect(chat).to_contain_text("offline extractive baseline — no language model")
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
    shot(page, "answer", 1440)


def test_an_example_chip_asks(browser: Any, app_url: str) -> None:
    page = visit(browser, app_url, 1440, 900)
    example = page.locator("#ask-chat").get_by_role("button").first
    text = example.inner_text().strip()
    assert text
    example.click()
    expect(page.locator("#ask-chat")).to_contain_text("Answered by", timeout=TIMEOUT_MS)


def test_a_keyless_config_says_so_in_ask_and_compare(browser: Any, app_url: str) -> None:
    page = visit(browser, app_url, 1440, 900)
    page.get_by_text("Settings: config, model, retrieval").click()
    pick_config(page, 0, "gpt-4.1-mini (needs OPENAI_API_KEY")
    ask(page, EBIT_QUESTION)
    chat = page.locator("#ask-chat")
    expect(chat).to_contain_text("The model cannot be reached")
    expect(chat).to_contain_text("OpenAI API key")
    assert chat.get_by_text("did not find an answer").count() == 0
    page.get_by_role("tab", name="Compare").click()
    page.get_by_text("Config B").click()
    pick_config(page, 1, "gpt-4.1-mini (needs OPENAI_API_KEY")
    page.locator("#compare-question textarea").fill(EBIT_QUESTION)
    page.locator("#compare-run").click()
    summary = page.locator("#compare-summary")
    expect(summary).to_contain_text("time (s)")
    expect(page.locator("#compare-chat-a, #compare-chat-b")).to_contain_text(["OpenAI API key"])
    expect(summary).to_contain_text("not run: needs an API key")
    shot(page, "compare-keyless", 1440)


def test_the_compare_summary_fits_at_1440(browser: Any, app_url: str) -> None:
    page = visit(browser, app_url, 1440, 900)
    page.get_by_role("tab", name="Compare").click()
    picker = page.locator("#compare-example input")
    picker.click()
    picker.fill("demo-002")
    page.get_by_role("option", name=re.compile("^demo-002")).click()
    expect(page.locator("#compare-question textarea")).to_have_value(EBIT_QUESTION)
    page.locator("#compare-run").click()
    summary = page.locator("#compare-summary")
    expect(summary).to_contain_text("ANLS*")
    expect(summary).to_contain_text("gold answer: 15,005")
    expect(page.locator("#compare-drift-note")).to_contain_text("Query drift")
    overflow = summary.evaluate("""el => [...el.querySelectorAll('*')].filter(e => e.scrollWidth > e.clientWidth + 1
                                          && getComputedStyle(e).overflowX !== 'visible').length""")
    box = summary.bounding_box()
    assert box["x"] + box["width"] <= 1440 and overflow == 0
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert summary.get_by_text("B: offline[top_k=3]").count() == 1
    shot(page, "compare", 1440)
    page.locator("#compare-question textarea").fill(EBIT_QUESTION + " Really?")  # edited: the pick no longer applies
    expect(page.locator("#compare-example input")).to_have_value("")


def test_the_phone_shows_the_question_box_first(browser: Any, app_url: str) -> None:
    page = visit(browser, app_url, 390, 844)
    box = page.locator("#ask-question textarea").bounding_box()
    assert box["y"] < 844, box
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert page.locator("h1").count() >= 1
    shot(page, "empty", 390)
    ask(page, EBIT_QUESTION)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    shot(page, "answer", 390)
