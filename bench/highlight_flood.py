"""Do citation picks with made-up quotes fill the disk? (issue 39, break 2)

    python -m bench.highlight_flood                          # 300 picks, each with a new made-up quote
    python -m bench.highlight_flood --calls 800 --repo /path/to/other/checkout   # before/after

Starts ``app.py`` of ``--repo`` on a free 127.0.0.1 port with a fresh ``MADQA_HOME``/``TMPDIR``/
``GRADIO_TEMP_DIR`` and a request limit high enough not to stop the flood, then sends the Ask tab's citation-pick
event (``on_option``, private but reachable through ``/gradio_api/queue/join``) ``--calls`` times, each with a
new quote for the same demo page, as the red team did. Meanwhile another client polls ``/gradio_api/info``.
Prints one JSON object: the bytes and files under ``TMPDIR/madqa-pages-*`` and Gradio's cache before and after,
how the picks ended, the probe latencies and the server tree's peak RSS. Figures only; 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.first_visit import KEYS, free_port, wait_http  # noqa: E402
from bench.page_bomb import heartbeat, spread  # noqa: E402
from bench.pdf_bomb import rss_mb, tree  # noqa: E402

PAGE = {"corpus": "demo", "file": "sales/q4_2024_sales_review.pdf", "page": 1}


def usage(folder: Path, pattern: str) -> dict[str, int]:
    files = [p for d in folder.glob(pattern) for p in d.rglob("*") if p.is_file()]
    return {"files": len(files), "bytes": sum(p.stat().st_size for p in files)}


def pick(url: str, fn_index: int, trigger: int, n: int) -> str:
    """One citation pick with a made-up quote; how it ended (ok, error, or the HTTP status)."""
    value = json.dumps({**PAGE, "quote": f"made-up quote number {n} {uuid.uuid4().hex}", "answer": ["x"]})
    session = uuid.uuid4().hex[:12]
    body = json.dumps({"data": [None], "event_data": {"index": 0, "value": value}, "fn_index": fn_index,
                       "trigger_id": trigger, "session_hash": session}).encode()
    request = urllib.request.Request(url + "gradio_api/queue/join", body, {"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(request, timeout=30).read()  # noqa: S310 - 127.0.0.1 only
    except OSError as exc:
        return f"join {getattr(exc, 'code', type(exc).__name__)}"
    with urllib.request.urlopen(url + f"gradio_api/queue/data?session_hash={session}", timeout=60) as stream:  # noqa: S310
        for line in stream:
            if line.startswith(b"data:"):
                message = json.loads(line[5:])
                if message.get("msg") == "process_completed":
                    return "ok" if message.get("success") else "error"
    return "no answer"


def endpoint(url: str, name: str) -> tuple[int, int]:
    with urllib.request.urlopen(url + "config", timeout=10) as r:  # noqa: S310
        config = json.loads(r.read())
    for index, dep in enumerate(config["dependencies"]):
        if dep.get("api_name") == name:
            return index, dep["targets"][0][0]
    raise SystemExit(f"no event {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, default=REPO)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="madqa-bench-flood-"))
    (base / "tmp").mkdir()
    (base / "gradio").mkdir()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env.update(MADQA_HOME=str(base / "home"), TMPDIR=str(base / "tmp"), GRADIO_TEMP_DIR=str(base / "gradio"),
               MADQA_HOST="127.0.0.1", MADQA_PORT=str(port), MADQA_OCR="never", PYTHONPATH=str(args.repo),
               MADQA_WEB_REQUESTS_PER_MINUTE="100000", GRADIO_ANALYTICS_ENABLED="False")
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=args.repo, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_http(url + "config", 180)
        fn_index, trigger = endpoint(url, "on_option")
        before = {"pages": usage(base / "tmp", "madqa-pages-*"), "gradio": usage(base, "gradio")}
        stop, latencies, peak = threading.Event(), list[float](), 0.0
        probe = threading.Thread(target=heartbeat, args=(url + "gradio_api/info", stop, latencies, 0.2), daemon=True)
        probe.start()
        ended: dict[str, int] = {}
        started = time.perf_counter()
        for n in range(args.calls):
            outcome = pick(url, fn_index, trigger, n)
            ended[outcome] = ended.get(outcome, 0) + 1
            if n % 20 == 0:
                peak = max(peak, rss_mb(tree(proc.pid)))
        took = time.perf_counter() - started
        stop.set()
        probe.join(70)
        after = {"pages": usage(base / "tmp", "madqa-pages-*"), "gradio": usage(base, "gradio")}
        result: dict[str, Any] = {"repo": str(args.repo), "calls": args.calls, "seconds": round(took, 1),
                                  "ended": ended, "before": before, "after": after,
                                  "probe_s": spread(latencies), "peak_rss_mb": round(peak)}
        print(json.dumps(result))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
