"""Stop, in headless Chromium: a question stopped while it waits for a collection's first files (a scan being read
by OCR, so there is time to press Stop) no longer says "Working…", says nothing was answered, and stays stopped: an
example chip's question is cancelled too (Stop cancelled only a typed one). Screenshot: ``test-artifacts/stop-*.png``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from playwright.sync_api import expect

from madqa.settings import Settings
from madqa.ui.messages import STOPPED
from tests.browser_support import TIMEOUT_MS, pytestmark, served, shot  # noqa: F401 - pytestmark marks the module

QUESTION = "What is the delivery deadline for order PO-7731?"


def make_scan(path: Path, pages: int) -> Path:
    """A PDF of ``pages`` page images and no text layer: indexing it means an OCR of every page (seconds each)."""
    out = pymupdf.open()
    for n in range(pages):
        src = pymupdf.open()
        page = src.new_page()
        page.insert_textbox(pymupdf.Rect(54, 54, 558, 788), f"Order PO-77{n:02d}. The delivery deadline for order "
                            f"PO-77{n:02d} is {n + 1} October 2025. " * 12, fontsize=12)
        pix = page.get_pixmap(dpi=150)
        scan = out.new_page(width=page.rect.width, height=page.rect.height)
        scan.insert_image(scan.rect, stream=pix.tobytes("png"))
    path.parent.mkdir(parents=True, exist_ok=True)
    out.save(path)
    return path


@pytest.fixture(scope="module")
def slow_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("scans")
    make_scan(folder / "orders.pdf", 8)
    row = {"id": "s1", "question": QUESTION, "answer_variants": [["31 October 2025"]],
           "evidence": [{"document": "orders.pdf", "page": 1}]}
    (folder / "questions.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    settings = Settings.from_env(env={}, home=tmp_path_factory.mktemp("stop-home"), collections=f"scans={folder}",
                                 demo=False, web_requests_per_minute=100_000, web_jobs_per_client=100)
    with served(settings) as url:
        yield url


def test_a_stopped_chip_question_says_so_and_stays_stopped(browser: Any, slow_url: str) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(slow_url, wait_until="domcontentloaded")
        chat = page.locator("#ask-chat")
        chip = chat.locator(".examples button").first
        expect(chip).to_contain_text("PO-7731")
        expect(page.locator("#status")).to_contain_text("Indexing scans")  # the scan is still being read
        chip.click()
        expect(chat).to_contain_text("Waiting for the collection's first files to be indexed")
        expect(page.locator("#ask-stop")).to_be_enabled()
        page.locator("#ask-stop").click()
        expect(chat).to_contain_text(STOPPED.replace("**", ""))
        expect(chat).not_to_contain_text("Working…")
        expect(page.locator("#ask-stop")).to_be_disabled()
        shot(page, "stop-while-waiting-1440")
        expect(page.locator("#status")).to_contain_text("scans ready", timeout=240_000)  # the wait is over ...
        page.wait_for_timeout(3000)
        expect(chat).not_to_contain_text("Answer:")  # ... and no answer came in after all: it was cancelled
        expect(chat).not_to_contain_text("No answer")
        expect(chat).to_contain_text(STOPPED.replace("**", ""))
    finally:
        context.close()
