"""A question typed as-is into ``madqa search``: is a gold page in the top k? Per retriever, by kind.

    python bench/typed.py --docs DIR --questions Q.jsonl [--retrievers whoosh,tantivy,hybrid] [--by kind]
    python bench/typed.py --docs DIR --questions Q.jsonl --set whoosh.ranking=or   # a retriever option
    python bench/typed.py --docs DIR --questions Q.jsonl --language de   # the corpus analysed in German
    python bench/typed.py --sets realdocs,realdocs2 --retrievers naive,whoosh,tantivy   # fetched real sets

``naive`` is the baseline of issue 42 (bench/naive.py: one Whoosh document per page, the default
analyzer, the question OR-grouped, BM25F defaults). ``--sets`` names real-document sets fetched under
bench/.cache/<set>/docs with their questions in data/<set>/questions.jsonl; a summary table (top-k hit
per set and kind, and each retriever's wrong-document / wrong-page split of its misses) follows the JSON.

Ingests DIR (into ``--home``, kept between runs, or a temporary folder), then searches each
question's text exactly as written with each retriever and counts a hit when one of its evidence
pages is in the top ``-k`` (5). Groups by a question field (``--by``, default ``kind`` when the
questions have it). Also prints search latency p50/p95. Figures only; nothing here asserts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

from madqa.corpus import Corpus  # noqa: E402
from madqa.evaluation.questions import load_questions  # noqa: E402
from madqa.index import ingest  # noqa: E402
from madqa.plugins import collect, get_plugin_manager  # noqa: E402
from madqa.settings import Settings  # noqa: E402


def gold_pages(question: Any) -> set[tuple[str, int]]:
    return {(e["document"], int(e["page"])) for e in (question.get("evidence") or [])}


def make_retriever(corpus: Any, registry: Any, name: str, options: dict[str, Any]) -> tuple[Any, float]:
    """The retriever and the seconds it took to make (the naive index is built here)."""
    started = time.perf_counter()
    if name == "naive":
        from bench.naive import NaiveRetriever

        return NaiveRetriever(corpus), time.perf_counter() - started
    return registry.create("retriever", name, corpus, options), time.perf_counter() - started


def measure(corpus: Any, registry: Any, questions: list[Any], name: str, options: dict[str, Any], k: int,
            by: str) -> dict[str, Any]:
    retriever, built = make_retriever(corpus, registry, name, options)
    found: dict[str, list[int]] = defaultdict(list)
    misses = {"wrong_document": 0, "wrong_page": 0}
    times = []
    for q in questions:
        started = time.perf_counter()
        hits = retriever.search(q["question"], k).hits
        times.append((time.perf_counter() - started) * 1000)
        gold = gold_pages(q)
        ok = int(bool(gold & {(h.file, h.page) for h in hits}))
        found["all"].append(ok)
        found[str(q.get(by) or "-")].append(ok)
        if len(gold) == 1:
            found["single-page"].append(ok)
        if not ok:  # the paper's split: the top hit in another document, or the right one at the wrong page
            top = hits[0].file if hits else None
            misses["wrong_page" if top in {f for f, _ in gold} else "wrong_document"] += 1
    times.sort()
    return {"retriever": name, "options": options,
            "top_k_hit": {g: round(sum(v) / len(v), 3) for g, v in sorted(found.items())},
            "hits": {g: sum(v) for g, v in sorted(found.items())},
            "n": {g: len(v) for g, v in sorted(found.items())}, "misses": misses,
            "open_s": round(built, 2),
            "p50_ms": round(times[len(times) // 2], 1), "p95_ms": round(times[int(len(times) * 0.95)], 1)}


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: hits/n per set, retriever and kind, and the misses' wrong-document / wrong-page split."""
    kinds = sorted({g for r in rows for g in r["n"] if g not in ("all", "single-page")}) + ["single-page"]
    out = ["| set | retriever | all | " + " | ".join(kinds) + " | wrong doc / wrong page | p95 ms |",
           "|---" * (len(kinds) + 5) + "|"]
    for r in rows:
        cells = [f"{r['hits'][g]}/{r['n'][g]}" if g in r["n"] else "" for g in ["all", *kinds]]
        label = r["retriever"] + "".join(f" {k}={v}" for k, v in r["options"].items())
        out.append(f"| {r.get('set', '')} | {label} | " + " | ".join(cells)
                   + f" | {r['misses']['wrong_document']} / {r['misses']['wrong_page']} | {r['p95_ms']} |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs")
    parser.add_argument("--questions")
    parser.add_argument("--sets", help="real-document sets (bench/.cache/<set>/docs, data/<set>/questions.jsonl)")
    parser.add_argument("--retrievers", default="whoosh,tantivy")
    parser.add_argument("--set", action="append", default=[], metavar="RETRIEVER.KEY=VALUE")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--by", default="kind")
    parser.add_argument("--home", help="keep indexes here between runs")
    parser.add_argument("--language", help="the corpus language (madqa index --language; default: detected)")
    args = parser.parse_args()
    if args.sets:
        pairs = [(REPO / "bench" / ".cache" / s / "docs", REPO / "data" / s / "questions.jsonl", s)
                 for s in args.sets.split(",")]
    elif args.docs and args.questions:
        pairs = [(Path(args.docs), Path(args.questions), "")]
    else:
        parser.error("give --sets, or --docs and --questions")
    options: dict[str, dict[str, Any]] = defaultdict(dict)
    for item in args.set:
        key, _, value = item.partition("=")
        name, _, option = key.partition(".")
        options[name][option] = json.loads(value) if value[:1].isdigit() else value
    rows: list[dict[str, Any]] = []
    with (contextlib.nullcontext(args.home) if args.home else tempfile.TemporaryDirectory()) as home:
        settings = Settings.from_env(env={}, home=Path(home))
        registry = collect(get_plugin_manager())
        for docs, questions_file, set_name in pairs:
            questions, problems = load_questions(questions_file)
            if problems:
                print(f"question problems: {problems}", file=sys.stderr)
            ingest(docs, settings, registry, ocr="auto", language=args.language)
            corpus = Corpus.open(docs, settings.corpora_dir)
            print(f"{set_name or docs} language: {corpus.language_note}", file=sys.stderr)
            for name in args.retrievers.split(","):
                rows.append({"set": set_name, **measure(corpus, registry, questions, name, options.get(name, {}),
                                                         args.k, args.by)})
                print(table(rows[-1:]).splitlines()[-1], file=sys.stderr)
            corpus.close()
    print(json.dumps(rows, indent=1))
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
