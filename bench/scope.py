"""Searching one document on real PDFs: a scope filtered inside the engine against the core's post-filter.

    python bench/scope.py [--docs bench/.cache/realdocs/docs] [--questions data/realdocs/questions.jsonl]
                          [--retrievers whoosh,tantivy] [--k 5]

Each question with evidence is searched (its text as the query) three ways: over the whole collection;
within its evidence document, filtered by the retriever (``files=``, ``filters_files``); and within it
as ``madqa.scope.search_scoped`` does for a retriever that cannot filter (the best k * 10 pages of the
collection, those of the document kept). Prints JSON: how often a gold page is in the top k each way,
how often the post-filter found fewer than k pages of the document (or none), and the median time of a
search. Figures only; nothing here asserts. Indexes into a temporary MADQA_HOME (OCR off: the two scans
of the set have no text there, so their questions find nothing either way).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from madqa.corpus import Corpus  # noqa: E402
from madqa.evaluation.questions import load_questions  # noqa: E402
from madqa.index import ingest  # noqa: E402
from madqa.plugins import collect, get_plugin_manager  # noqa: E402
from madqa.scope import POST_FILTER_DEPTH  # noqa: E402
from madqa.settings import Settings  # noqa: E402


def measure(retriever: object, questions: list[dict], k: int) -> dict:
    counts = {"global": 0, "in_engine": 0, "post_filter": 0, "post_filter_short": 0, "post_filter_none": 0}
    times: dict[str, list[float]] = {"global": [], "in_engine": []}
    for q in questions:
        doc = q["evidence"][0]["document"]
        gold = {(e["document"], e["page"]) for e in q["evidence"]}

        def hit(hits: object, gold: set = gold) -> bool:
            return bool(gold & {(h.file, h.page) for h in hits})

        started = time.perf_counter()
        everywhere = retriever.search(q["question"], k).hits  # type: ignore[attr-defined]
        times["global"].append(time.perf_counter() - started)
        started = time.perf_counter()
        scoped = retriever.search(q["question"], k, files=frozenset({doc})).hits  # type: ignore[attr-defined]
        times["in_engine"].append(time.perf_counter() - started)
        deep = retriever.search(q["question"], k * POST_FILTER_DEPTH).hits  # type: ignore[attr-defined]
        filtered = [h for h in deep if h.file == doc][:k]
        counts["global"] += hit(everywhere)
        counts["in_engine"] += hit(scoped)
        counts["post_filter"] += hit(filtered)
        counts["post_filter_short"] += len(filtered) < min(k, len(scoped))
        counts["post_filter_none"] += not filtered and bool(scoped)
    return {"questions": len(questions), f"gold_in_top{k}": counts,
            "median_ms": {name: round(statistics.median(t) * 1000, 2) for name, t in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", default=str(REPO / "bench/.cache/realdocs/docs"))
    parser.add_argument("--questions", default=str(REPO / "data/realdocs/questions.jsonl"))
    parser.add_argument("--retrievers", default="whoosh,tantivy")
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    questions, _ = load_questions(args.questions)
    questions = [q for q in questions if q.get("evidence")]
    with tempfile.TemporaryDirectory(prefix="madqa-scope-bench-") as home:
        settings = Settings.from_env(env={}, home=Path(home))
        registry = collect(get_plugin_manager(entry_points=False))
        ingest(args.docs, settings, registry, ocr="never")
        corpus = Corpus.open(Path(args.docs), settings.corpora_dir)
        out = {"pages": corpus.page_count, "documents": len(corpus.documents), "k": args.k}
        for name in args.retrievers.split(","):
            out[name] = measure(registry.create("retriever", name, corpus, {}), questions, args.k)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
