#!/usr/bin/env python3
"""Load test: launch the web app on 127.0.0.1 and drive it with many concurrent sessions.

    .venv/bin/python scripts/load_test.py [--sessions 12] [--questions 3] [--time-limit 120]

Starts ``app.py`` on a free port with a fresh MADQA_HOME (and Gradio/temp folders) in a temporary
folder, waits for the demo corpus, then runs every session at once, each with its own
``gradio_client.Client`` (its own server-side session): it asks demo questions through the offline
backend (/ask), uploads a small generated PDF holding a word only it knows (/add_documents), finds
that word in its own uploads (/search_corpus) and asks about it (/ask). At the end every session
searches for another session's word, which must find nothing.

Bounded: at most 50 sessions and 10 questions each, and the whole run is stopped after
``--time-limit`` seconds (default 120). Talks to 127.0.0.1 only. Prints throughput and p50/p95
latency per operation (JSON with --json); exits 1 on any error or wrong result.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MAX_SESSIONS = 50
MAX_QUESTIONS = 10


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def make_pdf(path: Path, text: str) -> Path:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_textbox(pymupdf.Rect(54, 54, 558, 788), text, fontsize=11)
    doc.save(path)
    doc.close()
    return path


def demo_questions() -> list[str]:
    path = REPO / "data" / "demo" / "questions.jsonl"
    return [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def last_text(chat: list[dict[str, Any]]) -> str:
    content = chat[-1]["content"] if chat else ""
    if isinstance(content, list):  # a message's parts, as Gradio sends them
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = {}
        self.errors: list[str] = []

    def time(self, op: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        result = fn(*args, **kwargs)
        with self.lock:
            self.latencies.setdefault(op, []).append(time.perf_counter() - started)
        return result

    def error(self, message: str) -> None:
        with self.lock:
            self.errors.append(message)


def session(n: int, url: str, questions: list[str], per_session: int, word: str, folder: Path,
            rec: Recorder, start: threading.Barrier, timeout: float, clients: dict[int, Any]) -> None:
    """One visitor: demo questions, an upload, a search of it and a question about it."""
    from gradio_client import Client, handle_file

    try:
        client = Client(url, verbose=False, download_files=False, analytics_enabled=False)
        pdf = make_pdf(folder / f"session {n} notes.pdf", f"Session {n} memo. The {word} tally was {1000 + n} units.")
        start.wait(timeout=timeout)
        for k in range(per_session):
            question = questions[(n * per_session + k) % len(questions)]
            job = client.submit(question=question, history=[], api_name="/ask")
            chat = rec.time("ask (demo corpus)", job.result, timeout=timeout)[1]
            ended = last_text(chat).startswith(("**Answer:**", "**No answer.**"))  # a refusal is an outcome too
            if not ended or "⚠" in json.dumps(chat, ensure_ascii=False):
                rec.error(f"session {n}: demo question {question!r} ended with {last_text(chat)[:200]!r}")
        added = rec.time("upload 1 PDF", client.predict, paths=[handle_file(str(pdf))], api_name="/add_documents")
        if [row[1] for row in added[0]["data"]] != ["indexed"]:
            rec.error(f"session {n}: upload gave {added[0]['data']}")
        hits = rec.time("search own upload", client.predict, text=word, api_name="/search_corpus")["data"]
        if [h[0] for h in hits] != [pdf.name]:
            rec.error(f"session {n}: searching its own word found {hits}")
        job = client.submit(question=f"What was the {word} tally?", history=[], api_name="/ask")
        chat = rec.time("ask (own upload)", job.result, timeout=timeout)[1]
        if str(1000 + n) not in last_text(chat):
            rec.error(f"session {n}: the answer about its upload was {last_text(chat)[:200]!r}")
        clients[n] = client  # kept for the isolation check at the end
    except Exception as exc:  # reported, counted, and the exit status says so
        rec.error(f"session {n}: {type(exc).__name__}: {exc}")


def wait_ready(url: str, proc: subprocess.Popen, deadline: float) -> None:
    import httpx

    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the app exited with status {proc.returncode}")
        try:
            if httpx.get(url + "config", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("the app did not start in time")
        time.sleep(0.2)


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=12, help=f"concurrent sessions (1..{MAX_SESSIONS})")
    parser.add_argument("--questions", type=int, default=3, help=f"demo questions per session (1..{MAX_QUESTIONS})")
    parser.add_argument("--time-limit", type=float, default=120, help="stop everything after this many seconds")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.sessions <= MAX_SESSIONS or not 1 <= args.questions <= MAX_QUESTIONS:
        parser.error(f"--sessions must be 1..{MAX_SESSIONS} and --questions 1..{MAX_QUESTIONS}")
    if not 1 <= args.time_limit <= 600:
        parser.error("--time-limit must be 1..600 seconds")
    limit_at = time.monotonic() + args.time_limit

    work = Path(tempfile.mkdtemp(prefix="madqa-load-"))
    for name in ("gradio", "tmp", "files"):
        (work / name).mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = {**os.environ, "MADQA_HOME": str(work / "home"), "GRADIO_TEMP_DIR": str(work / "gradio"),
           "TMPDIR": str(work / "tmp"), "MADQA_HOST": "127.0.0.1", "MADQA_PORT": str(port),
           "MADQA_CONFIG": "offline", "GRADIO_ANALYTICS_ENABLED": "False", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONUNBUFFERED": "1",
           # every simulated visitor connects from 127.0.0.1: the per-address limits would count them as one
           "MADQA_WEB_JOBS_PER_CLIENT": "1000", "MADQA_WEB_REQUESTS_PER_MINUTE": "100000",
           "MADQA_UPLOAD_MB_PER_HOUR": "100000"}
    log = open(work / "app.log", "wb")  # noqa: SIM115 - closed in finally
    launched = time.monotonic()
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    rec = Recorder()
    summary: dict[str, Any] = {}
    try:
        wait_ready(url, proc, limit_at)
        listening = time.monotonic() - launched
        from gradio_client import Client

        warm = Client(url, verbose=False, download_files=False, analytics_enabled=False)
        warm.predict(text="revenue", api_name="/search_corpus")  # waits for the demo corpus's index
        ready = time.monotonic() - launched
        questions = demo_questions()
        words = [f"zq{secrets.token_hex(4)}" for _ in range(args.sessions)]
        start = threading.Barrier(args.sessions + 1)
        clients: dict[int, Any] = {}
        remaining = max(1.0, limit_at - time.monotonic())
        threads = [threading.Thread(target=session, daemon=True, name=f"load-{n}",
                                    args=(n, url, questions, args.questions, words[n], work / "files", rec, start,
                                          remaining, clients))
                   for n in range(args.sessions)]
        for t in threads:
            t.start()
        start.wait(timeout=remaining)
        began = time.perf_counter()
        for t in threads:
            t.join(timeout=max(0.0, limit_at - time.monotonic()))
        wall = time.perf_counter() - began
        if any(t.is_alive() for t in threads):
            rec.error(f"time limit of {args.time_limit:.0f} s reached with sessions still running")
        for n, client in clients.items():  # nobody finds anybody else's upload
            other = words[(n + 1) % args.sessions]
            if args.sessions > 1 and client.predict(text=other, api_name="/search_corpus")["data"]:
                rec.error(f"session {n} found session {(n + 1) % args.sessions}'s upload")
        ops = {op: len(v) for op, v in rec.latencies.items()}
        questions_done = ops.get("ask (demo corpus)", 0) + ops.get("ask (own upload)", 0)
        summary = {
            "date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} CPUs, {sys.platform}",
            "sessions": args.sessions, "questions_per_session": args.questions, "errors": rec.errors,
            "app_listening_s": round(listening, 2), "demo_corpus_ready_s": round(ready, 2),
            "wall_s": round(wall, 2), "operations": sum(ops.values()),
            "throughput_ops_per_s": round(sum(ops.values()) / wall, 2),
            "questions_per_s": round(questions_done / wall, 2),
            "latency_s": {op: {"n": len(v), "p50": round(percentile(v, 50), 3), "p95": round(percentile(v, 95), 3),
                               "max": round(max(v), 3), "mean": round(statistics.fmean(v), 3)}
                          for op, v in sorted(rec.latencies.items())},
            "server_peak_rss_mb": peak_rss_mb(proc.pid),
        }
    except Exception as exc:
        rec.error(f"{type(exc).__name__}: {exc}")
        summary = {"errors": rec.errors}
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    tracebacks = (work / "app.log").read_text(errors="replace").count("Traceback")
    summary["server_tracebacks"] = tracebacks
    if tracebacks:
        rec.error(f"the server logged {tracebacks} tracebacks (see {work / 'app.log'})")
        summary["errors"] = rec.errors
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print_summary(summary)
    if not rec.errors:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 1 if rec.errors else 0


def print_summary(s: dict[str, Any]) -> None:
    if "latency_s" in s:
        print(f"{s['sessions']} concurrent sessions x ({s['questions_per_session']} demo questions + 1 upload + "
              f"1 search + 1 question on the upload), offline backend, {s['machine']}")
        print(f"app listening after {s['app_listening_s']} s, demo corpus ready after {s['demo_corpus_ready_s']} s")
        print(f"{s['operations']} operations in {s['wall_s']} s: {s['throughput_ops_per_s']} ops/s, "
              f"{s['questions_per_s']} questions/s; server peak RSS {s['server_peak_rss_mb']:.0f} MB")
        print(f"{'operation':22} {'n':>4} {'p50 s':>7} {'p95 s':>7} {'max s':>7}")
        for op, v in s["latency_s"].items():
            print(f"{op:22} {v['n']:>4} {v['p50']:>7.3f} {v['p95']:>7.3f} {v['max']:>7.3f}")
    print(f"errors: {len(s['errors'])}" + "".join(f"\n  {e}" for e in s["errors"]))


if __name__ == "__main__":
    sys.exit(main())
