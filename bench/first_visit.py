"""A first-time visitor of the demo: how long until the question box can be used, and what the page weighs.

    python -m bench.first_visit [--loads 7] [--sizes 1440x900,390x844] [--repo CHECKOUT]

Starts ``app.py`` on a free 127.0.0.1 port with a fresh ``MADQA_HOME`` and no provider key, then prints
one JSON object: seconds from starting the process to the server answering (``server_ready_s``) and to
the demo corpus being indexed, then per viewport the ms from navigation to the question box being visible
and enabled in headless Chromium (median and all loads, each in a fresh browser context on the already
started server), the bytes and requests the first load fetched, requests that left 127.0.0.1 (must be
none), the ms a tab not opened yet takes to show on its first click, and the size of the app's config (components and events of the first render). For scale, the same
for a one-textbox Gradio page (``floor_*``: what any Gradio page costs on this machine at that moment) and the
machine's load average (other work on a shared machine stretches every figure).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY",
        "GROQ_API_KEY", "OPENROUTER_API_KEY")
READY_JS = """() => { const t = document.querySelector('#ask-question textarea');
  return !!t && !t.disabled && t.offsetParent !== null && t.getBoundingClientRect().height > 0; }"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, deadline_s: float) -> float:
    """Seconds until ``url`` answers 200 (RuntimeError past the deadline)."""
    started = time.perf_counter()
    while time.perf_counter() - started < deadline_s:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:  # noqa: S310 - 127.0.0.1 only
                if r.status == 200:
                    return time.perf_counter() - started
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer within {deadline_s} s")


def config_figures(url: str) -> dict[str, Any]:
    """Components, events and bytes of the app's config: what the browser must build before first paint."""
    with urllib.request.urlopen(url + "config", timeout=10) as r:  # noqa: S310 - 127.0.0.1 only
        raw = r.read()
    config = json.loads(raw)
    return {"config_kb": round(len(raw) / 1024, 1), "components": len(config.get("components", [])),
            "events": len(config.get("dependencies", []))}


def load_once(browser: Any, url: str, width: int, height: int, record: bool) -> dict[str, Any]:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    fetched: list[tuple[str, int]] = []
    outside: list[str] = []

    def on_response(response: Any) -> None:
        host = response.url.split("/")[2] if "://" in response.url else ""
        if not host.startswith("127.0.0.1"):
            outside.append(response.url)
        try:
            size = int(response.headers.get("content-length") or 0) or len(response.body())
        except Exception:  # a streamed response (the queue's event stream) has no body to read
            size = 0
        fetched.append((response.url, size))

    page.on("requestfailed", lambda r: None if r.url.startswith("http://127.0.0.1") else outside.append(r.url))
    if record:
        page.on("response", on_response)
    started = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_function(READY_JS, polling="raf", timeout=60_000)
    ms = (time.perf_counter() - started) * 1000
    out: dict[str, Any] = {"ms": round(ms)}
    if record:
        page.wait_for_timeout(1500)  # what arrives just after (lazy chunks) counts to the page's weight
        out |= {"requests": len(fetched), "kb": round(sum(s for _, s in fetched) / 1024, 1), "outside": outside}
    context.close()
    return out


def tab_open_ms(browser: Any, url: str, tab: str, selector: str) -> int:
    """ms from clicking a tab not opened before to its main control being visible (its code fetched then)."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="commit")
    page.wait_for_function(READY_JS, polling="raf", timeout=60_000)
    started = time.perf_counter()
    page.get_by_role("tab", name=tab).click()
    page.locator(selector).wait_for(state="visible", timeout=60_000)
    ms = round((time.perf_counter() - started) * 1000)
    context.close()
    return ms


def floor_app() -> Any:
    """A one-textbox Gradio page: what any Gradio app costs on this machine at this moment (the floor)."""
    import gradio as gr

    with gr.Blocks(analytics_enabled=False) as app:
        gr.Markdown("# floor")
        gr.Textbox(label="Question", elem_id="ask-question")
    port = free_port()
    app.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, ssr_mode=False)
    return app, f"http://127.0.0.1:{port}/"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loads", type=int, default=7)
    parser.add_argument("--sizes", default="1440x900,390x844")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout whose app.py to start (before/after)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with tempfile.TemporaryDirectory(prefix="madqa-first-visit-") as home:
        env = {k: v for k, v in os.environ.items() if k not in KEYS} | {
            "MADQA_HOME": home, "MADQA_HOST": "127.0.0.1", "MADQA_PORT": str(port),
            "GRADIO_ANALYTICS_ENABLED": "False", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OMP_THREAD_LIMIT": "1",
            "PYTHONDONTWRITEBYTECODE": "1"}
        started = time.perf_counter()
        server = subprocess.Popen([sys.executable, str(args.repo / "app.py")], env=env, cwd=args.repo,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ready = wait_http(url, 120)
            figures: dict[str, Any] = {"server_ready_s": round(ready, 2)}
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                first = load_once(browser, url, 1440, 900, record=False)  # the very first visitor, cold server
                figures["first_load_after_start_ms"] = first["ms"]
                figures["start_to_question_box_s"] = round(time.perf_counter() - started, 2)
                figures |= config_figures(url)
                for size in args.sizes.split(","):
                    width, height = (int(v) for v in size.split("x"))
                    weight = load_once(browser, url, width, height, record=True)
                    loads = [load_once(browser, url, width, height, record=False)["ms"] for _ in range(args.loads)]
                    figures[size] = {"median_ms": round(statistics.median(loads)), "loads_ms": loads,
                                     "requests": weight["requests"], "kb": weight["kb"], "outside": weight["outside"]}
                for tab, selector in (("Compare", "#compare-run"), ("Evaluate", "#eval-run")):
                    opens = [tab_open_ms(browser, url, tab, selector) for _ in range(3)]
                    figures[f"first_open_{tab.lower()}_tab_ms"] = {"median_ms": round(statistics.median(opens)),
                                                                   "loads_ms": opens}
                floor, floor_url = floor_app()
                try:
                    load_once(browser, floor_url, 1440, 900, record=False)
                    loads = [load_once(browser, floor_url, 1440, 900, record=False)["ms"] for _ in range(args.loads)]
                    figures["floor_one_textbox_1440x900"] = {"median_ms": round(statistics.median(loads)),
                                                             "loads_ms": loads}
                finally:
                    with contextlib.redirect_stdout(sys.stderr):  # Gradio says "Closing server": stdout is the JSON
                        floor.close()
                browser.close()
            figures["load_average_1min"] = round(os.getloadavg()[0], 1)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
