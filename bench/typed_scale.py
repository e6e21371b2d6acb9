"""Costs at the MADQA scale (issue 42): index time and size per 1,000 pages, and the search latency of
typed questions, per BM25 retriever, over 18,619 pages.

    python bench/typed_scale.py [--pages 18619] [--retrievers naive,whoosh,tantivy]

The pages are the real-document sets' own page texts (bench/.cache/<set>/docs, read with the ingest's
text layer through an ingested corpus in a temporary home), repeated under renamed files until there are
``--pages``; the queries are every set's questions as typed. Each retriever indexes them with its own
``update_index`` (naive: bench/naive.py) and answers every question with k=5. Prints JSON. Timings are
the machine's at the time (a shared 2-core machine: noisy); nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

import madqa  # noqa: E402
from bench.naive import NaiveRetriever  # noqa: E402
from bench.retrievers import FakeCorpus  # noqa: E402
from madqa.corpus import Corpus, PageText  # noqa: E402
from madqa.evaluation.questions import load_questions  # noqa: E402
from madqa.index import ingest  # noqa: E402
from madqa.plugins import collect, get_plugin_manager  # noqa: E402
from madqa.settings import Settings  # noqa: E402

SETS = ("realdocs", "realdocs2", "realdocs3", "realdocs4", "heldout_realdocs", "heldout2", "heldout3",
        "heldout4", "heldout5")


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=18_619)
    parser.add_argument("--retrievers", default="naive,whoosh,tantivy")
    parser.add_argument("--home", help="the ingested sets' home (kept between runs); default a temporary folder")
    args = parser.parse_args()
    registry = collect(get_plugin_manager(entry_points=False))
    real: list[PageText] = []
    questions: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env(env={}, home=Path(args.home or tmp))
        for name in SETS:
            docs = REPO / "bench" / ".cache" / name / "docs"
            ingest(docs, settings, registry, ocr="auto")
            corpus = Corpus.open(docs, settings.corpora_dir)
            real += [PageText(f"{name}/{p.file}", p.page, p.text, "text") for p in corpus.iter_pages()]
            corpus.close()
            questions += [q["question"] for q in load_questions(REPO / "data" / name / "questions.jsonl")[0]]
    pages = [PageText(f"copy{i // len(real)}/{p.file}", p.page, p.text, "text")
             for i, p in ((i, real[i % len(real)]) for i in range(args.pages))]
    out: dict = {"pages": len(pages), "distinct_pages": len(real), "queries": len(questions),
                 "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 1)}
    with tempfile.TemporaryDirectory() as tmp:
        fake = FakeCorpus(Path(tmp), pages)
        setattr(fake, "language", madqa.DEFAULT_LANGUAGE)  # noqa: B010  # the sets are English
        for name in args.retrievers.split(","):
            folder = fake.retriever_dir(name)
            started = time.perf_counter()
            retriever: Any
            if name == "naive":
                retriever = NaiveRetriever(fake, folder)
            else:
                factory: Any = registry.get("retriever", name).factory
                factory.update_index(folder, None, pages, set(), madqa.Host())
            seconds = time.perf_counter() - started
            if name != "naive":
                retriever = registry.create("retriever", name, fake, {})
            retriever.search(questions[0], 5)
            times = []
            for q in questions:
                t = time.perf_counter()
                retriever.search(q, 5)
                times.append((time.perf_counter() - t) * 1000)
            times.sort()
            out[name] = {"index_s_per_1000_pages": round(seconds * 1000 / len(pages), 2),
                         "index_mb_per_1000_pages": round(size_mb(folder) * 1000 / len(pages), 2),
                         "p50_ms": round(times[len(times) // 2], 1), "p95_ms": round(times[int(len(times) * 0.95)], 1)}
            print(name, out[name], file=sys.stderr, flush=True)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
