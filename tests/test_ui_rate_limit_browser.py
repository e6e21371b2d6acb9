"""When the per-address request limit trips, the page says so in words (issue 25, item 7): it showed "Could not
parse server response: SyntaxError: Unexpected token 'o', "too many re"..." in a raw toast."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from madqa.settings import Settings
from tests.browser_support import TIMEOUT_MS, pytestmark, served  # noqa: F401 - the browser tests' marks

pytestmark = [*pytestmark, pytest.mark.slow]


@pytest.fixture(scope="module")
def limited_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = Settings.from_env(env={}, home=tmp_path_factory.mktemp("rate-home"), web_requests_per_minute=3)
    with served(settings) as url:
        yield url


def test_a_visitor_over_the_request_limit_reads_why(browser: Any, limited_url: str, tmp_path: Path) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(limited_url, wait_until="domcontentloaded")
        page.wait_for_selector("#status >> text=Demo corpus ready")
        page.locator("#ask-question textarea").fill("What was the revenue in 2024?")
        for _ in range(5):  # the 4th event within the minute is refused before it reaches the queue
            page.locator("#ask-button").click()
            page.wait_for_timeout(1500)
        toasts = page.locator("[data-testid='toast-body']")
        toasts.filter(has_text="too many requests: try again in").first.wait_for(state="attached")
        shown = " ".join(toasts.all_inner_texts())
        assert "too many requests: try again in" in shown and "Could not parse" not in page.content()
    finally:
        context.close()
