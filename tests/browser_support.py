"""What the browser tests share: one web app and one headless Chromium for the whole test session.

The app serves the demo corpus like a fresh Space: no provider key in its environment (so the
keyless configs are keyless whatever the developer's shell holds). Fixtures are re-exported by
``tests/conftest.py``; the constants and ``pytestmark`` are imported by the browser test files.
"""

from __future__ import annotations

import gc
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from madqa.plugins import collect, get_plugin_manager
from madqa.settings import Settings

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = REPO / "test-artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
EBIT_QUESTION = "What was the operating income (EBIT) in 2023, in EUR thousand?"
TIMEOUT_MS = 90_000  # generous for a loaded 2-core machine, still bounded
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY",
                 "GROQ_API_KEY", "OPENROUTER_API_KEY")

# Two Gradio quirks: Gradio makes a fresh asyncio event loop for every lock it creates outside a running
# loop (gradio.utils.safe_get_lock, from Blocks() and queue()) and never closes the ones it replaces, so the
# garbage collector reports them; and the sockets of the closed server. Only those reports are ignored.
GRADIO_QUIRKS = [  # for any test module that runs the app's server (served() below)
    pytest.mark.filterwarnings("ignore:unclosed event loop <_UnixSelectorEventLoop:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket fd=[0-9]+, family=1:ResourceWarning"),
    pytest.mark.filterwarnings(r"ignore:Exception ignored in. (<socket\.socket fd=[0-9]+, family=1|<function "
                               r"BaseEventLoop\.__del__):pytest.PytestUnraisableExceptionWarning"),
]
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM} (scripts/install --dev)"),
    *GRADIO_QUIRKS,
]
os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(10**9))


def close_app(app: Any) -> None:
    """``app.close()`` without Gradio's race: it sets the server's asyncio stop event from this thread while
    the server's loop may be removing one of its waiters (the heartbeat streams), and the event's deque
    then "mutated during iteration" (a teardown error seen on loaded machines). Set on its own loop
    first, the event is already set when ``close`` sets it again, which then does nothing."""
    event = getattr(getattr(app, "app", None), "stop_event", None)
    loop = getattr(event, "_loop", None)  # asyncio binds the event to its loop at the first wait
    if event is not None and loop is not None and loop.is_running() and not event.is_set():
        done = threading.Event()
        loop.call_soon_threadsafe(lambda: (event.set(), done.set()))
        done.wait(10)
    app.close()


@contextmanager
def served(settings: Settings) -> Iterator[str]:
    """The web app of ``settings`` on a free 127.0.0.1 port, closed on exit; yields its URL."""
    from madqa.ui import build_app, launch_options

    app = build_app(settings, collect(get_plugin_manager(entry_points=False)))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app.launch(**{**launch_options(settings, app), "server_name": "127.0.0.1", "server_port": port,
                  "prevent_thread_lock": True, "quiet": True})
    gc.collect()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        close_app(app)
        gc.collect()


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The web app on a free 127.0.0.1 port, without provider keys, for every browser test."""
    with pytest.MonkeyPatch.context() as mp:
        for name in KEY_VARIABLES:
            mp.delenv(name, raising=False)
        # every visitor here comes from 127.0.0.1: the per-address limits are tested in test_ui_limits.py
        settings = Settings.from_env(env={}, home=tmp_path_factory.mktemp("browser-home"),
                                     web_requests_per_minute=100_000, web_jobs_per_client=100)
        with served(settings) as url:
            yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class Visitors:
    """Opens fresh visitors (each its own browser context, so its own session) and closes them after."""

    def __init__(self, browser: Any, url: str) -> None:
        self.browser, self.url, self.contexts = browser, url, []
        self.first_visit_ms: dict[int, int] = {}  # viewport width -> goto until the question box shows

    def open(self, width: int = 1400, height: int = 1000) -> Any:
        """A page with the app loaded and the demo corpus ready."""
        context = self.browser.new_context(viewport={"width": width, "height": height})
        self.contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        started = time.perf_counter()
        page.goto(self.url, wait_until="domcontentloaded")
        page.locator("#ask-question textarea").wait_for(state="visible")
        self.first_visit_ms.setdefault(width, round((time.perf_counter() - started) * 1000))
        page.wait_for_selector("#status >> text=Demo corpus ready")
        return page

    def close(self) -> None:
        for context in self.contexts:
            context.close()
        self.contexts = []


@pytest.fixture
def visitors(browser: Any, app_url: str) -> Iterator[Visitors]:
    """``visitors.open(width, height)``: a fresh visitor of the shared app; closed after the test."""
    opened = Visitors(browser, app_url)
    try:
        yield opened
    finally:
        opened.close()


def ask_and_wait(page: Any, question: str) -> None:
    """Ask in the Ask tab and wait until the app is idle again (the Stop button enabled, then disabled)."""
    from playwright.sync_api import expect

    box = page.locator("#ask-question textarea")
    box.fill(question)
    box.press("Enter")
    expect(page.locator("#ask-stop")).to_be_enabled()
    expect(page.locator("#ask-stop")).to_be_disabled()  # idle again: the answer is in


def shot(page: Any, name: str) -> None:
    """A full-page screenshot ``test-artifacts/<name>.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(400)  # let the last update paint
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
