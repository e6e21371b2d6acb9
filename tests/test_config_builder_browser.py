"""A visitor builds plugin configs in Evaluate, runs them side by side and downloads one as a config file.

Headless Chromium on the shared demo app (no provider key): two configs built from the parts (whoosh
top_k 3 and tantivy top_k 5 on the offline backend), their scores in one table a row each, and the
downloaded TOML accepted by ``madqa run --config``. Screenshots: ``test-artifacts/builder-*.png``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from madqa.cli import main
from tests.browser_support import (  # noqa: F401 - pytestmark applies to this module's tests
    ARTIFACTS,
    REPO,
    Visitors,
    pytestmark,
    shot,
)


def choose(page: Any, elem_id: str, option: str) -> None:
    """Pick ``option`` in the builder's dropdown ``elem_id`` as a visitor does: open it, click the option."""
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=option, exact=True).click()


def set_slider(page: Any, elem_id: str, value: int) -> None:
    field = page.locator(f"#{elem_id} input[type=number]")
    field.fill(str(value))
    field.press("Enter")


def test_a_visitor_builds_two_configs_runs_them_side_by_side_and_downloads_one(
        visitors: Visitors, tmp_path: Path, monkeypatch: Any) -> None:
    page = visitors.open(1440, 900)
    page.get_by_role("tab", name="Evaluate").click()
    expect(page.locator("#eval-add")).to_be_visible()
    backends = page.locator("#eval-backend input")
    backends.click()
    expect(page.get_by_role("option", name="offline", exact=True)).to_be_visible()
    assert page.get_by_role("option", name="litellm", exact=True).count() == 0  # no key given: not offered
    page.keyboard.press("Escape")

    choose(page, "eval-retriever", "whoosh")
    set_slider(page, "eval-top-k", 3)
    page.locator("#eval-add").click()
    expect(page.locator("#eval-builder-note")).to_contain_text("Added offline[top_k=3]")
    choose(page, "eval-retriever", "tantivy")
    set_slider(page, "eval-top-k", 5)
    page.locator("#eval-add").click()
    expect(page.locator("#eval-builder-note")).to_contain_text("Added offline[retriever=tantivy]")
    built = page.locator("#eval-built")
    expect(built).to_contain_text("offline[top_k=3]")
    expect(built).to_contain_text("offline[retriever=tantivy]")

    page.locator("#eval-configs").get_by_label("offline", exact=True).uncheck()  # only the built two run
    page.locator("#eval-limit input").fill("4")
    page.locator("#eval-run").click()
    expect(page.locator("#eval-status")).to_contain_text("through 2 configs", timeout=240_000)
    scores = page.locator("#eval-scores")
    for header in ("accuracy", "ANLS* (answer similarity)", "page F1"):
        expect(scores.get_by_role("columnheader", name=header, exact=True)).to_be_visible()
    scores.scroll_into_view_if_needed()
    assert scores.evaluate(WORDS_WHOLE_JS.replace("'li'", "'th'"))  # the glossary's labels, words whole, none cut:
    assert scores.evaluate("el => [...el.querySelectorAll('th span')].every(s => s.scrollWidth <= s.clientWidth + 1)")
    for name in ("offline[top_k=3]", "offline[retriever=tantivy]"):  # a row each, with a score: both ran
        row = scores.get_by_role("row").filter(has_text=name)
        expect(row).to_have_count(1)
        assert re.search(r"\b(0|1)(\.\d+)?\b", row.inner_text().replace(name, "")), row.inner_text()
    shot(page, "builder-evaluate-1440")

    files = page.locator("#eval-config-files tr")
    expect(files).to_have_count(2)  # the two configs run, a file each
    link = files.filter(has_text="tantivy").locator("a")
    with page.expect_download() as info:
        link.click()
    path = tmp_path / "built.toml"
    info.value.save_as(path)
    text = path.read_text(encoding="utf-8")
    assert 'retriever = "tantivy"' in text and "top_k = 5" in text, text

    page.locator("#eval-access").get_by_text("Model access").click()
    page.locator("#eval-api-key input").fill("sk-only-in-this-browser")  # a key given: its backend is offered
    backends.click()
    page.get_by_role("option", name="litellm", exact=True).click()
    page.locator("#eval-add").click()  # the key is this browser's: the config is added, never stored with it
    expect(page.locator("#eval-builder-note")).to_contain_text("Added litellm:")
    expect(page.locator("#eval-config-files tr")).to_have_count(3)

    questions = tmp_path / "one.jsonl"
    first = (REPO / "data" / "demo" / "questions.jsonl").read_text(encoding="utf-8").splitlines()[0]
    questions.write_text(first + "\n", encoding="utf-8")
    out = tmp_path / "pred.jsonl"
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    assert main(["run", "--corpus", str(REPO / "data" / "demo" / "docs"), "--questions", str(questions),
                 "--config", str(path), "-o", str(out)]) == 0
    row = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert row["config"] == "offline[retriever=tantivy]" and row["error"] is None, row


def test_compare_offers_its_two_configs_as_files(visitors: Visitors, tmp_path: Path) -> None:
    page = visitors.open(1440, 900)
    page.get_by_role("tab", name="Compare").click()
    page.locator("#compare-question textarea").fill("What was the operating income (EBIT) in 2023?")
    page.locator("#compare-run").click()
    expect(page.locator("#compare-summary")).to_contain_text("B: offline[top_k=3]")
    files = page.locator("#compare-config-files tr")
    expect(files).to_have_count(2)  # A (the preset) and B (top_k 3), a file each
    with page.expect_download() as info:
        files.filter(has_text="top_k").locator("a").click()
    path = tmp_path / "b.toml"
    info.value.save_as(path)
    from madqa.settings import load_config

    assert load_config(str(path)).top_k == 3


# each line's words laid out in no more lines than it has words: a word is never broken across lines
WORDS_WHOLE_JS = """el => [...el.querySelectorAll('li')].every(th => {
  const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const words = node.textContent.trim().split(/\\s+/).filter(Boolean).length;
    if (!words) continue;
    const range = document.createRange(); range.selectNodeContents(node);
    const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
    if (lines.size > words) return false;
  }
  return true; })"""


def test_the_builder_on_a_phone_keeps_words_whole_and_the_page_from_scrolling_sideways(visitors: Visitors) -> None:
    page = visitors.open(390, 844)
    page.get_by_role("button", name="More tabs").click()
    page.locator(".overflow-dropdown button", has_text="Evaluate").click()
    page.locator("#eval-add").click()
    built = page.locator("#eval-built")
    expect(built.locator("li")).to_have_count(1)
    assert built.evaluate(WORDS_WHOLE_JS)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    built.screenshot(path=str(ARTIFACTS / "builder-built-390.png"))
