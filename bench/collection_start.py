"""Cold start to first answer of an operator collection whose index already exists (issue 28), on a generated corpus
the size of MADQA's: ``app.py --corpus NAME=DIR --no-demo`` in a child process, timed from its start to the first
answered question (offline config, through ``gradio_client``), and the same from scratch (no index: the first
answer comes from the first round's files while the rest is indexed).

    nice python -m bench.collection_start                     # 800 PDFs / 18,619 pages (generated once, cached)
    python -m bench.collection_start --pages 2000 --docs 90   # smaller
    python -m bench.collection_start --skip-scratch           # only the start with an existing index

Prints JSON; nothing is asserted. The index is built first with ``madqa index DIR --ocr never`` (timed too).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.corpus import cached_corpus

REPO = Path(__file__).resolve().parent.parent
ENV_KEYS = ("PATH", "HOME", "LANG", "OMP_THREAD_LIMIT")
QUESTION = "What does the report say about revenue?"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_answer(corpus: Path, home: Path, budget_s: float) -> dict[str, Any]:
    """Start ``app.py`` on ``corpus`` and time: the server answering HTTP, the first question answered."""
    from gradio_client import Client

    port = free_port()
    env = {**{k: os.environ[k] for k in ENV_KEYS if k in os.environ}, "MADQA_HOME": str(home),
           "MADQA_PORT": str(port), "MADQA_HOST": "127.0.0.1", "GRADIO_ANALYTICS_ENABLED": "False",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONUNBUFFERED": "1"}
    err = home / "app.err"
    started = time.perf_counter()
    with open(err, "wb") as log:
        proc = subprocess.Popen([sys.executable, "app.py", "--corpus", f"bench={corpus}", "--no-demo"], cwd=REPO,
                                env=env, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
        try:
            import httpx

            url = f"http://127.0.0.1:{port}/"
            while True:
                if proc.poll() is not None or time.perf_counter() - started > budget_s:
                    return {"error": f"no server within {budget_s:.0f}s: {err.read_text()[-500:]}"}
                try:
                    if httpx.get(url + "gradio_api/info", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
            serving = time.perf_counter() - started
            client = Client(url, verbose=False, download_files=False, analytics_enabled=False)
            chat = client.predict(question=QUESTION, history=[], api_name="/ask")[1]
            answered = time.perf_counter() - started
            last = chat[-1]
            content = last["content"] if isinstance(last["content"], str) else json.dumps(last["content"])
            return {"server_up_s": round(serving, 2), "first_answer_s": round(answered, 2),
                    "answer_excerpt": content[:160], "cited": [o.get("label") for o in last.get("options") or []][:3]}
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=18_619)
    parser.add_argument("--docs", type=int, default=800)
    parser.add_argument("--workers", type=int, default=2, help="processes generating the corpus")
    parser.add_argument("--budget-s", type=float, default=900)
    parser.add_argument("--skip-scratch", action="store_true", help="leave out the start with no index")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"pages": args.pages, "docs": args.docs, "cpus": os.cpu_count(),
                               "load_before": os.getloadavg()[0]}
    began = time.perf_counter()
    corpus = cached_corpus(REPO / "bench" / ".cache", args.pages, args.docs, workers=args.workers)
    results["corpus"], results["generate_s"] = str(corpus), round(time.perf_counter() - began, 1)
    work = Path(tempfile.mkdtemp(prefix="madqa-collection-start-"))
    try:
        home = work / "home"
        home.mkdir()
        env = {**os.environ, "MADQA_HOME": str(home), "OMP_THREAD_LIMIT": "1"}
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "madqa", "index", str(corpus), "--ocr", "never", "--json"], cwd=REPO,
                       env=env, check=True, stdout=subprocess.DEVNULL, timeout=args.budget_s * 4)
        results["index_s"] = round(time.perf_counter() - began, 1)
        results["with_index"] = first_answer(corpus, home, args.budget_s)
        if not args.skip_scratch:
            fresh = work / "fresh"
            fresh.mkdir()
            results["from_scratch"] = first_answer(corpus, fresh, args.budget_s)
        results["load_after"] = os.getloadavg()[0]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
