"""Worst-case wildcard searches: seconds and peak memory per query, each in its own child process.

    python bench/wildcards.py                          # 3,000 generated pages, whoosh and tantivy
    python bench/wildcards.py --pages 600 --docs 30 --retrievers whoosh --kill-after 120
    python bench/wildcards.py --repo /path/to/other/checkout   # the same attack on another checkout

The corpus is the generated benchmark corpus (bench/corpus.py), ingested into a temporary MADQA_HOME
by the checkout under test. Each query runs in a fresh child (so its peak RSS is its own), killed after
``--kill-after`` seconds; "four at once" runs the first four queries together in threads of one child.
Prints one JSON object per measurement, then a table. Figures only: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.corpus import cached_corpus  # noqa: E402

ATTACKS = ["*a* *b* *c* *d* *e* *f* *g* *h*", "*e*", "a* b* c* d* e* f*", "[a TO zzzz]", "*ing",
           "?????*", "s* OR t* OR p* OR r*"]

CHILD = r"""
import json, resource, sys, threading, time
sys.path.insert(0, sys.argv[1])
from madqa.corpus import Corpus
from madqa.plugins import collect, get_plugin_manager
from madqa.settings import Settings
settings = Settings.from_env(env={}, home=sys.argv[2])
corpus = Corpus.open(sys.argv[3], settings.corpora_dir)
retriever = collect(get_plugin_manager(entry_points=False)).create("retriever", sys.argv[4], corpus, {})
queries = json.loads(sys.argv[5])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out = {}
def one(q):
    t = time.perf_counter()
    try:
        r = retriever.search(q, 5)
        out[q] = {"hits": len(r.hits), "note": r.note}
    except Exception as exc:
        out[q] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    out[q]["seconds"] = round(time.perf_counter() - t, 3)
started = time.perf_counter()
threads = [threading.Thread(target=one, args=(q,)) for q in queries]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps({"seconds": round(time.perf_counter() - started, 3), "rss_before_mb": round(base),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024), "results": out}))
"""


def ingest(repo: Path, root: Path, home: Path) -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "from madqa.index import ingest\nfrom madqa.plugins import collect, get_plugin_manager\n"
            "from madqa.settings import Settings\n"
            "r = ingest(sys.argv[3], Settings.from_env(env={}, home=sys.argv[2]), "
            "collect(get_plugin_manager(entry_points=False)), ocr='never')\nprint(r.pages, 'pages')")
    subprocess.run([sys.executable, "-c", code, str(repo), str(home), str(root)], check=True,
                   stdout=sys.stderr, cwd=tempfile.gettempdir())


def measure(repo: Path, home: Path, root: Path, retriever: str, queries: list[str], kill_after: float) -> dict:
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(repo), str(home), str(root), retriever,
                               json.dumps(queries)], capture_output=True, text=True, timeout=kill_after,
                              cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"killed_after_s": kill_after}
    if done.returncode:
        return {"failed": done.stderr[-500:], "seconds": round(time.perf_counter() - started, 1)}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--docs", type=int, default=150)
    ap.add_argument("--retrievers", default="whoosh,tantivy")
    ap.add_argument("--kill-after", type=float, default=300)
    ap.add_argument("--repo", type=Path, default=REPO, help="checkout whose madqa is measured")
    ap.add_argument("--cache", type=Path, default=REPO / "bench" / ".cache")
    args = ap.parse_args()
    root = cached_corpus(args.cache, args.pages, args.docs)
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        ingest(args.repo.resolve(), root, home)
        for retriever in args.retrievers.split(","):
            cases = [[q] for q in ATTACKS] + [ATTACKS[:4]]
            for queries in cases:
                result = measure(args.repo.resolve(), home, root, retriever, queries, args.kill_after)
                row = {"retriever": retriever, "queries": queries, **result}
                print(json.dumps(row), flush=True)
                rows.append(row)
    print(f"\n{'retriever':9} {'query':40} {'seconds':>9} {'peak RSS MB':>11}  note")
    for row in rows:
        label = row["queries"][0] if len(row["queries"]) == 1 else "four at once"
        seconds = row.get("seconds", f">{row.get('killed_after_s')}")
        notes = "; ".join(str(r.get("note") or r.get("error") or "") for r in row.get("results", {}).values())
        print(f"{row['retriever']:9} {label[:40]:40} {seconds!s:>9} {row.get('peak_rss_mb', '?')!s:>11}  {notes[:140]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
