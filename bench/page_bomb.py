"""Is the web app answering other visitors while a visitor's image-bomb PDF is drawn? (issue 25, break 1)

    python -m bench.page_bomb                                  # the red team's file: 8 pages of 20000² images
    python -m bench.page_bomb --side 28000 --bits 16           # heavier pages (~7 s of CPU each to draw here)
    python -m bench.page_bomb --repo /path/to/other/checkout   # the same against another checkout (before/after)
    python -m bench.page_bomb --env MADQA_RENDER_MAX_IMAGE_MP=100000   # the pages drawn, not refused unseen

Starts ``app.py`` of ``--repo`` on a free 127.0.0.1 port with a fresh ``MADQA_HOME`` and no provider key,
uploads the image bomb (``tests.attacks.image_bomb_pdf``, ~20 KB) as a visitor, and asks one question with
the offline config, whose search returns the bomb's pages: their thumbnails are drawn. Meanwhile another
client polls ``/gradio_api/info`` one request after another and records how long each took. Prints one
JSON object: those latencies (worst, p95, median; idle before the question, and while it ran), the seconds
the upload and the question took, and the peak RSS of the server's process tree. Figures only: nothing
here asserts. Bounded: at most ``--max-s`` seconds for the question, 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.first_visit import KEYS, free_port, wait_http  # noqa: E402
from bench.pdf_bomb import rss_mb, tree  # noqa: E402
from tests.attacks import image_bomb_pdf  # noqa: E402

QUESTION = "How many animals did the capybara census count?"
POLL_TIMEOUT_S = 60.0


def heartbeat(url: str, stop: threading.Event, out: list[float], interval: float) -> None:
    """Request ``url`` one after another until ``stop``; each latency in seconds (a timeout counts as its limit)."""
    while not stop.is_set():
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(url, timeout=POLL_TIMEOUT_S) as r:  # noqa: S310 - 127.0.0.1 only
                r.read()
        except OSError:
            pass  # refused or timed out: its latency is what it cost
        out.append(time.perf_counter() - started)
        stop.wait(interval)


def spread(latencies: list[float]) -> dict[str, Any]:
    """Worst, p95 and median of ``latencies`` in seconds, and how many."""
    if not latencies:
        return {"polls": 0}
    ordered = sorted(latencies)
    return {"polls": len(ordered), "worst_s": round(ordered[-1], 3),
            "p95_s": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
            "median_s": round(statistics.median(ordered), 3),
            "over_2s": sum(v > 2 for v in ordered)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=REPO, help="the checkout whose app.py is measured")
    ap.add_argument("--pages", type=int, default=8)
    ap.add_argument("--side", type=int, default=20_000, help="each page image is side x side pixels")
    ap.add_argument("--bits", type=int, default=8, choices=(8, 16), help="bits per colour component")
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between two heartbeat requests")
    ap.add_argument("--max-s", type=float, default=600, help="the question is abandoned after this long")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="a setting for the server")
    args = ap.parse_args()
    from gradio_client import Client, handle_file

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    figures: dict[str, Any] = {"repo": str(args.repo), "load_average_before": [round(v, 1) for v in os.getloadavg()]}
    with tempfile.TemporaryDirectory(prefix="madqa-page-bomb-") as tmp:
        bomb = image_bomb_pdf(Path(tmp) / "census.pdf", args.pages, args.side, args.bits)
        figures |= {"bomb_kb": round(bomb.stat().st_size / 1024, 1), "pages": args.pages,
                    "image": f"{args.side}x{args.side} RGB, {args.bits} bits, deflated twice"}
        env = {k: v for k, v in os.environ.items() if k not in KEYS} | {
            "MADQA_HOME": str(Path(tmp) / "home"), "MADQA_HOST": "127.0.0.1", "MADQA_PORT": str(port),
            "GRADIO_ANALYTICS_ENABLED": "False", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OMP_THREAD_LIMIT": "1",
            "PYTHONDONTWRITEBYTECODE": "1", "GRADIO_TEMP_DIR": str(Path(tmp) / "gradio")} | dict(
            item.split("=", 1) for item in args.env)
        figures["env"] = args.env
        server = subprocess.Popen([sys.executable, str(args.repo / "app.py")], env=env, cwd=args.repo,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        peak = [0.0]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.1):
                peak[0] = max(peak[0], rss_mb(tree(server.pid)))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            figures["server_ready_s"] = round(wait_http(url, 120), 2)
            visitor = Client(url, verbose=False, download_files=False, analytics_enabled=False)
            started = time.perf_counter()
            visitor.predict(paths=[handle_file(str(bomb))], api_name="/add_documents")
            figures["upload_s"] = round(time.perf_counter() - started, 2)
            idle: list[float] = []
            stop = threading.Event()
            beat = threading.Thread(target=heartbeat, args=(url + "gradio_api/info", stop, idle, args.interval))
            beat.start()
            time.sleep(3)
            stop.set()
            beat.join()
            figures["heartbeat_idle"] = spread(idle)
            busy: list[float] = []
            stop = threading.Event()
            beat = threading.Thread(target=heartbeat, args=(url + "gradio_api/info", stop, busy, args.interval))
            beat.start()
            started = time.perf_counter()
            job = visitor.submit(question=QUESTION, history=[], api_name="/ask")
            try:
                result = job.result(timeout=args.max_s)
                figures["question_s"] = round(time.perf_counter() - started, 2)
                figures["thumbnails_shown"] = len(result[2] or []) if isinstance(result, (list, tuple)) else None
            except Exception as exc:  # abandoned (past --max-s) or failed: the heartbeat figures still count
                figures["question_s"] = round(time.perf_counter() - started, 2)
                figures["question_error"] = f"{type(exc).__name__}: {exc}"[:300]
            stop.set()
            beat.join()
            figures["heartbeat_during_question"] = spread(busy)
        finally:
            done.set()
            sampler.join()
            figures["peak_server_tree_rss_mb"] = round(peak[0])
            try:
                os.killpg(server.pid, signal.SIGKILL)  # the server and its workers (a Ctrl-C may be ignored)
            except ProcessLookupError:
                pass
            server.wait(timeout=30)
    figures["load_average_after"] = [round(v, 1) for v in os.getloadavg()]
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
