"""A first-time visitor of the demo: how long until the question can be typed and sent, and what the page weighs.

    python -m bench.first_visit [--loads 7] [--sizes 1440x900,390x844] [--repo CHECKOUT]

Starts ``app.py`` on a free 127.0.0.1 port with a fresh ``MADQA_HOME`` and no provider key, and beside it a
bare Gradio page (a Blocks with a heading, one Textbox and one Button, in its own process: what any Gradio
page costs on this machine at that moment). Per viewport, loads of the two alternate (each in a fresh
browser context, so nothing cached, on the already started servers), so a machine busy with other work
stretches both alike: compare ``ours_minus_bare_ms`` more than the absolute times.

"Interactive" (TTI) is: from navigation to the question box being visible, laid out and not disabled AND
the Ask button visible and not disabled (a box that accepts a question that cannot be sent is not ready);
the first recorded load also types into the box at that moment and checks the text arrived.

Prints one JSON object on stdout: seconds from starting the process to the server answering and to the
first question box; the size of the page's HTML (what the browser parses before anything shows) and of the
app's config (components and events); per viewport the median/p90/all TTI of ours and of the bare page,
the requests and bytes of a first load (and the bare page's), requests that left 127.0.0.1 (must be none),
and where that load's time went (``phases``: first byte, DOMContentLoaded, first paint, interactive, the main
thread's long tasks before it);
the ms a tab not opened yet takes to show on its first click; the load average before and after. Then, on
stderr, one summary line per viewport.
"""

from __future__ import annotations

import argparse
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
QUESTION = "#ask-question textarea"
READY_JS = """() => { const t = document.querySelector('#ask-question textarea');
  const b = document.querySelector('#ask-button');
  const shown = (e) => !!e && !e.disabled && e.offsetParent !== null && e.getBoundingClientRect().height > 0;
  return shown(t) && shown(b); }"""


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


# where a recorded load's time went, read in the page: phases from navigation start (ms) and the main thread's
# long tasks (> 50 ms) before it was interactive
PROBE_JS = """(() => { window.__madqa = {longtasks: []};
  try { new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__madqa.longtasks.push([e.startTime, e.duration])))
        .observe({type: 'longtask', buffered: true}); } catch (e) {}
  const poll = () => { const t = document.querySelector('#ask-question textarea'), b = document.querySelector('#ask-button');
    const shown = (e) => !!e && !e.disabled && e.offsetParent !== null && e.getBoundingClientRect().height > 0;
    if (shown(t) && shown(b)) { window.__madqa.interactive = performance.now(); return; }
    requestAnimationFrame(poll); };
  requestAnimationFrame(poll); })()"""
PHASES_JS = """() => { const n = performance.getEntriesByType('navigation')[0], m = window.__madqa, at = m.interactive ?? performance.now();
  const paint = performance.getEntriesByType('paint').find((e) => e.name === 'first-contentful-paint');
  const before = performance.getEntriesByType('resource').filter((e) => e.startTime < at);
  const long = m.longtasks.filter(([s]) => s < at);
  return {first_byte_ms: n.responseStart, dom_content_loaded_ms: n.domContentLoadedEventEnd,
          first_contentful_paint_ms: paint ? paint.startTime : null, interactive_ms: at,
          requests_before_interactive: before.length,
          long_tasks_before_interactive: long.length, long_task_ms_before_interactive: long.reduce((a, [, d]) => a + d, 0)}; }"""


def page_kb(url: str) -> float:
    """KB of the page's HTML as served (Gradio embeds its config in it: the browser parses all of it first)."""
    with urllib.request.urlopen(url, timeout=10) as r:  # noqa: S310 - 127.0.0.1 only
        return round(len(r.read()) / 1024, 1)


def spread(loads: list[int]) -> dict[str, Any]:
    """Median, p90 and every load (ms)."""
    p90 = statistics.quantiles(loads, n=10, method="inclusive")[-1] if len(loads) > 1 else loads[0]
    return {"median_ms": round(statistics.median(loads)), "p90_ms": round(p90), "loads_ms": loads}


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
        page.add_init_script(PROBE_JS)
    started = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_function(READY_JS, polling="raf", timeout=60_000)
    ms = (time.perf_counter() - started) * 1000
    out: dict[str, Any] = {"ms": round(ms)}
    if record:
        page.locator(QUESTION).fill("typed at first paint")
        out["typed_at_ready"] = page.locator(QUESTION).input_value() == "typed at first paint"
        out["phases"] = {k: round(v) if isinstance(v, float) else v for k, v in page.evaluate(PHASES_JS).items()}
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


FLOOR = """
import sys
import gradio as gr
with gr.Blocks(analytics_enabled=False) as app:
    gr.Markdown("# floor")
    gr.Textbox(label="Question", elem_id="ask-question")
    gr.Button("Ask", variant="primary", elem_id="ask-button")
app.launch(server_name="127.0.0.1", server_port=int(sys.argv[1]), quiet=True, ssr_mode=False)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loads", type=int, default=7)
    parser.add_argument("--sizes", default="1440x900,390x844")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout whose app.py to start (before/after)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    port, floor_port = free_port(), free_port()
    url, floor_url = f"http://127.0.0.1:{port}/", f"http://127.0.0.1:{floor_port}/"
    figures: dict[str, Any] = {"load_average_before": [round(v, 1) for v in os.getloadavg()]}
    with tempfile.TemporaryDirectory(prefix="madqa-first-visit-") as home:
        env = {k: v for k, v in os.environ.items() if k not in KEYS} | {
            "MADQA_HOME": home, "MADQA_HOST": "127.0.0.1", "MADQA_PORT": str(port),
            "GRADIO_ANALYTICS_ENABLED": "False", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OMP_THREAD_LIMIT": "1",
            "PYTHONDONTWRITEBYTECODE": "1"}
        started = time.perf_counter()
        server = subprocess.Popen([sys.executable, str(args.repo / "app.py")], env=env, cwd=args.repo,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        floor = subprocess.Popen([sys.executable, "-c", FLOOR, str(floor_port)], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            figures["server_ready_s"] = round(wait_http(url, 120), 2)
            wait_http(floor_url, 120)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                first = load_once(browser, url, 1440, 900, record=False)  # the very first visitor, cold server
                figures["first_load_after_start_ms"] = first["ms"]
                figures["start_to_question_box_s"] = round(time.perf_counter() - started, 2)
                figures |= {"page_kb": page_kb(url), "bare_page_kb": page_kb(floor_url)} | config_figures(url)
                load_once(browser, floor_url, 1440, 900, record=False)  # the bare server's first visitor too
                for size in args.sizes.split(","):
                    width, height = (int(v) for v in size.split("x"))
                    weight = load_once(browser, url, width, height, record=True)
                    bare_weight = load_once(browser, floor_url, width, height, record=True)
                    ours: list[int] = []
                    bare: list[int] = []
                    for _ in range(args.loads):  # alternating, so both see the same machine
                        ours.append(load_once(browser, url, width, height, record=False)["ms"])
                        bare.append(load_once(browser, floor_url, width, height, record=False)["ms"])
                    figures[size] = {
                        "ours": spread(ours) | weight, "bare": spread(bare) | bare_weight,
                        "ours_minus_bare_ms": round(statistics.median(ours) - statistics.median(bare))}
                for tab, selector in (("Compare", "#compare-run"), ("Evaluate", "#eval-run")):
                    opens = [tab_open_ms(browser, url, tab, selector) for _ in range(3)]
                    figures[f"first_open_{tab.lower()}_tab_ms"] = spread(opens)
                browser.close()
            figures["load_average_after"] = [round(v, 1) for v in os.getloadavg()]
        finally:
            for process in (server, floor):
                process.terminate()
                process.wait(timeout=30)
    print(json.dumps(figures, indent=1))
    for size in args.sizes.split(","):
        ours, bare = figures[size]["ours"], figures[size]["bare"]
        print(f"first visit {size}: TTI median/p90 ours {ours['median_ms']}/{ours['p90_ms']} ms, bare Gradio page "
              f"{bare['median_ms']}/{bare['p90_ms']} ms, ours-bare {figures[size]['ours_minus_bare_ms']:+d} ms "
              f"({args.loads} loads each; {ours['requests']} requests, {ours['kb']} KB, page {figures['page_kb']} KB); "
              f"load average before {figures['load_average_before'][0]}, after {figures['load_average_after'][0]}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
