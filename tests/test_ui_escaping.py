"""Every string the web app shows is shown as text, never as HTML (issue 12 item 12), in headless Chromium.

The payloads of ``tests/fixtures/xss_payloads.txt`` go in through every door a stranger has: a typed
question (Ask, Compare), what a model writes (its note, its search query, its answer, the file names
it cites — from a fake OpenAI-compatible provider the operator configured), a question file's ids and
questions (Evaluate), an uploaded file's name and text (Corpus upload, documents, search snippets) and
a corpus search. After each, the page must hold no element made from a payload (each carries the
marker ``xss``), no ``javascript:`` link, no run script (``window.__xss``), and must have asked for
nothing outside 127.0.0.1 (requests elsewhere are intercepted and aborted, so nothing leaves the
machine). The payload text itself must be visible, so escaping did not just drop it.
"""

from __future__ import annotations

import gc
import json
import os
import re
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from playwright.sync_api import expect

from madqa.settings import Settings
from tests.browser_support import TIMEOUT_MS, served
from tests.browser_support import pytestmark as browser_pytestmark
from tests.conftest import REPO, make_pdf
from tests.fake_provider import Provider, completion, text_completion
from tests.test_ui_browser import tab

PAYLOADS = [line for line in (REPO / "tests" / "fixtures" / "xss_payloads.txt").read_text(encoding="utf-8")
            .splitlines() if line.strip() and not line.startswith("#")]
pytestmark = [*browser_pytestmark, pytest.mark.slow]
INJECTED = """() => {
  const made = [...document.querySelectorAll('[id*="xss" i], [class*="xss" i], [title="xss-md"]')]
    .map(e => e.outerHTML.slice(0, 120));
  const links = [...document.querySelectorAll('a[href], [src], [href], [action], [formaction]')]
    .map(e => e.getAttribute('href') || e.getAttribute('src') || e.getAttribute('action') || e.getAttribute('formaction') || '')
    .filter(u => /^\\s*(javascript|vbscript|data:text\\/html)/i.test(u) || /xss\\.invalid/i.test(u));
  const fixed = [...document.querySelectorAll('body *')].filter(e => {
    const s = getComputedStyle(e); const r = e.getBoundingClientRect();
    return s.position === 'fixed' && r.width > innerWidth * 0.8 && r.height > innerHeight * 0.8;
  }).map(e => e.outerHTML.slice(0, 120));
  return {made, links, fixed, ran: window.__xss === undefined ? null : window.__xss};
}"""


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    """The app on the operator's OpenAI-compatible endpoint (OPENAI_API_BASE): the fake provider."""
    import litellm  # noqa: F401 - imported once here (seconds), not during the first question

    provider = Provider()
    saved = {k: os.environ.get(k) for k in ("OPENAI_API_BASE", "OPENAI_API_KEY")}
    os.environ.update(OPENAI_API_BASE=provider.url, OPENAI_API_KEY="sk-operator-test")
    settings = Settings.from_env(env={}, home=tmp_path_factory.mktemp("xss-home"), config="local-openai-compatible",
                                 web_calls_budget=100_000)  # the evaluation runs every payload question
    try:
        with served(settings) as url:
            yield SimpleNamespace(url=url, provider=provider, files=tmp_path_factory.mktemp("xss-files"))
    finally:
        provider.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        gc.collect()


@pytest.fixture(scope="module")
def page(app: SimpleNamespace, browser: Any) -> Iterator[Any]:
    """One page of this module's app, in the session's shared Chromium (one Playwright per process)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        outside: list[str] = []

        def route(r: Any) -> None:
            if r.request.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")):
                r.continue_()
            else:  # stopped in the browser: nothing leaves the machine
                outside.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        pg = context.new_page()
        pg.set_default_timeout(TIMEOUT_MS)
        pg.outside = outside
        pg.dialogs = []
        pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
        pg.goto(app.url)
        pg.wait_for_selector("#status >> text=Demo corpus ready")
        yield pg
    finally:
        context.close()


def assert_inert(page: Any, where: str) -> None:
    page.wait_for_timeout(500)  # let the last update paint (and any injected image try to load)
    found = page.evaluate(INJECTED)
    assert found == {"made": [], "links": [], "fixed": [], "ran": None}, where
    assert page.outside == [] and page.dialogs == [], where


def shown(page: Any, selector: str) -> str:
    return page.locator(selector).inner_text()


def test_questions_and_model_output_are_shown_as_text(page: Any, app: SimpleNamespace) -> None:
    joined = " ".join(PAYLOADS)
    search = completion("search_documents", {"query": joined[:600]})
    search["choices"][0]["message"]["content"] = "\n".join(PAYLOADS)
    answer = completion("submit_answer", {
        "answer": PAYLOADS[:6], "citations": [{"file": p, "page": 1} for p in PAYLOADS[:4]]
        + [{"file": "finance/annual_report_2024.pdf", "page": 6}]})
    app.provider.answer(search, answer, answer)  # the same again on the repair turn: the payloads are on no page
    box = page.locator("#ask-question textarea")
    box.fill(joined[:1990])
    box.press("Enter")
    expect(page.locator("#ask-chat")).to_contain_text("Answer:")
    expect(page.locator("#ask-stop")).to_be_disabled()  # the run is over: the chat no longer re-renders
    chat = page.locator("#ask-chat")
    chat.get_by_text(re.compile(r"^Searched \d+× · \d+ pages? read")).first.click()  # the answer-first fold
    for title in ("Model · step 1", "Search 1:"):  # the steps inside: open them so their content renders
        expect(chat.get_by_text(title).first).to_be_visible()
        for n in range(chat.get_by_text(title).count()):
            chat.get_by_text(title).nth(n).click()
    assert_inert(page, "Ask")
    chat = shown(page, "#ask-chat")
    for needle in ("<script>window.__xss = 1</script>", "javascript:window.__xss=4", "id=xss-overlay"):
        assert needle in chat, needle  # the payloads are there, as text


def test_compare_shows_questions_and_tables_as_text(page: Any, app: SimpleNamespace) -> None:
    app.provider.answer(*[text_completion(json.dumps({"answer": PAYLOADS[:3], "citations": []}))] * 2)
    tab(page, "Compare")
    page.locator("#compare-question textarea").fill(" ".join(PAYLOADS[:8]))
    page.locator("#compare-run").click()
    expect(page.locator("#compare-summary")).to_contain_text("query drift")
    assert_inert(page, "Compare")
    assert "<script>" in shown(page, "#compare-chat-a")


def test_question_files_ids_and_names_are_shown_as_text(page: Any, app: SimpleNamespace) -> None:
    rows = [{"id": p, "question": p} for p in PAYLOADS] + [{"id": PAYLOADS[1], "question": "a duplicate id"}]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    app.provider.answer()  # every model call is rejected: error rows are shown too
    tab(page, "Evaluate")
    page.locator("#eval-file input[type=file]").set_input_files(
        {"name": "<img src=x onerror=window.__xss=20 id=xss-qfile>.jsonl", "mimeType": "application/json",
         "buffer": data})
    page.locator("#eval-run").click()
    expect(page.locator("#eval-status")).to_contain_text("Ran ")
    assert_inert(page, "Evaluate")
    assert "onerror" in shown(page, "#eval-status")
    # a file with no usable question: its name comes back in an error notification
    page.reload()  # a fresh file box (one holding a file has no file input)
    page.wait_for_selector("#status >> text=Demo corpus ready")
    tab(page, "Evaluate")
    page.locator("#eval-file input[type=file]").set_input_files(
        {"name": "![x](http://xss.invalid/toast.png)<img src=x onerror=window.__xss=23 id=xss-toast>.jsonl",
         "mimeType": "application/json", "buffer": b"{broken\n"})
    page.locator("#eval-run").click()
    expect(page.get_by_text("no usable questions")).to_be_visible()
    assert_inert(page, "Evaluate error")


def test_uploaded_names_texts_and_searches_are_shown_as_text(page: Any, app: SimpleNamespace) -> None:
    pdf = make_pdf(app.files / "x.pdf", ["zanzibar " + " ".join(PAYLOADS)], fontsize=6)
    tab(page, "Corpus")
    page.locator("#corpus-files input[type=file]").set_input_files(
        {"name": "<img src=x onerror=window.__xss=21 id=xss-upload> [a](javascript:x).pdf",
         "mimeType": "application/pdf", "buffer": pdf.read_bytes()})
    page.locator("#corpus-add").click()
    expect(page.locator("#corpus-results")).to_contain_text("indexed")
    page.locator("#corpus-query textarea").fill("zanzibar")
    page.locator("#corpus-search").click()
    expect(page.locator("#corpus-hits")).to_contain_text("zanzibar")
    assert_inert(page, "Corpus")
    page.locator("#corpus-query textarea").fill('<img src=x onerror=window.__xss=22 id=xss-query> "*a*')
    page.locator("#corpus-search").click()
    page.wait_for_timeout(1500)
    assert_inert(page, "Corpus search")
