#!/usr/bin/env python3
"""Per-query wall and CPU time of the BM25 retrievers on an already ingested corpus.

Usage::

    python -m bench.search_cpu CORPUS_DIR MADQA_HOME [--queries 300] [--passes 2]

``bench/run.py`` times each retriever once, right after opening it; on a shared machine its wall
times mostly measure waiting for a core, and its first pass reads cold postings. This reuses the
index an earlier ingest wrote under ``MADQA_HOME``, draws the same kind of queries as ``bench/run.py``
(``make_queries``), and prints for each retriever and proximity setting, per pass, the p50/p95/p99
of wall time and of the searching thread's CPU time (``time.thread_time``), which load inflates
far less. Later passes run with the postings warm (the opened index is shared per version).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.run import make_queries  # noqa: E402
from madqa.corpus import Corpus  # noqa: E402
from madqa.plugins import collect, get_plugin_manager  # noqa: E402
from madqa.settings import Settings  # noqa: E402

VARIANTS = (("whoosh", {"proximity": 0}), ("whoosh", {}), ("tantivy", {"proximity": 0}), ("tantivy", {}))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def measure(root: Path, home: Path, n_queries: int, passes: int) -> dict:
    """Figures per ``retriever[options] (pass N)``, with the load average before and after."""
    settings = Settings.from_env(env={}, home=home)
    registry = collect(get_plugin_manager(entry_points=False))
    corpus = Corpus.open(root, settings.corpora_dir)
    queries = make_queries([p.text for p in corpus.iter_pages()], n_queries)
    out: dict = {"pages": sum(d.pages for d in corpus.documents.values()), "queries": len(queries),
                 "load_avg_1m_start": round(os.getloadavg()[0], 2)}
    for n in range(1, passes + 1):
        for name, options in VARIANTS:
            retriever = registry.create("retriever", name, corpus, dict(options))
            wall, cpu = [], []
            for q in queries:
                w, c = time.perf_counter(), time.thread_time()
                retriever.search(q)
                cpu.append((time.thread_time() - c) * 1000)
                wall.append((time.perf_counter() - w) * 1000)
            label = name + "".join(f"[{k}={v}]" for k, v in options.items()) + f" (pass {n})"
            out[label] = {"wall_p50_ms": _pct(wall, 0.5), "wall_p95_ms": _pct(wall, 0.95),
                          "cpu_p50_ms": _pct(cpu, 0.5), "cpu_p95_ms": _pct(cpu, 0.95), "cpu_p99_ms": _pct(cpu, 0.99)}
    out["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path, help="the folder of PDFs that was ingested")
    parser.add_argument("home", type=Path, help="the MADQA_HOME holding its indexes")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.corpus, args.home, args.queries, args.passes), indent=1))


if __name__ == "__main__":
    main()
