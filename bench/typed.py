"""A question typed as-is into ``madqa search``: is a gold page in the top k? Per retriever, by kind.

    python bench/typed.py --docs DIR --questions Q.jsonl [--retrievers whoosh,tantivy,hybrid] [--by kind]
    python bench/typed.py --docs DIR --questions Q.jsonl --set whoosh.ranking=or   # a retriever option
    python bench/typed.py --docs DIR --questions Q.jsonl --language de   # the corpus analysed in German

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


def measure(corpus: Any, registry: Any, questions: list[Any], name: str, options: dict[str, Any], k: int,
            by: str) -> dict[str, Any]:
    retriever = registry.create("retriever", name, corpus, options)
    found: dict[str, list[int]] = defaultdict(list)
    times = []
    for q in questions:
        started = time.perf_counter()
        hits = retriever.search(q["question"], k).hits
        times.append((time.perf_counter() - started) * 1000)
        ok = int(bool(gold_pages(q) & {(h.file, h.page) for h in hits}))
        found["all"].append(ok)
        found[str(q.get(by) or "-")].append(ok)
    times.sort()
    return {"retriever": name, "options": options,
            "top_k_hit": {g: round(sum(v) / len(v), 3) for g, v in sorted(found.items())},
            "n": {g: len(v) for g, v in sorted(found.items())},
            "p50_ms": round(times[len(times) // 2], 1), "p95_ms": round(times[int(len(times) * 0.95)], 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--retrievers", default="whoosh,tantivy")
    parser.add_argument("--set", action="append", default=[], metavar="RETRIEVER.KEY=VALUE")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--by", default="kind")
    parser.add_argument("--home", help="keep indexes here between runs")
    parser.add_argument("--language", help="the corpus language (madqa index --language; default: detected)")
    args = parser.parse_args()
    questions, problems = load_questions(Path(args.questions))
    if problems:
        print(f"question problems: {problems}", file=sys.stderr)
    options: dict[str, dict[str, Any]] = defaultdict(dict)
    for item in args.set:
        key, _, value = item.partition("=")
        name, _, option = key.partition(".")
        options[name][option] = json.loads(value) if value[:1].isdigit() else value
    with (contextlib.nullcontext(args.home) if args.home else tempfile.TemporaryDirectory()) as home:
        settings = Settings.from_env(env={}, home=Path(home))
        registry = collect(get_plugin_manager())
        ingest(Path(args.docs), settings, registry, ocr="auto", language=args.language)
        corpus = Corpus.open(Path(args.docs), settings.corpora_dir)
        print(f"language: {corpus.language_note}", file=sys.stderr)
        rows = [measure(corpus, registry, questions, name, options.get(name, {}), args.k, args.by)
                for name in args.retrievers.split(",")]
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
