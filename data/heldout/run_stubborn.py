#!/usr/bin/env python3
"""A searcher that keeps repeating itself, to see what a query strategy adds on its own.

The MADQA paper's weak agents (GPT-4.1 Nano, query drift 0.10) repeat nearly the same query. This
plays that model with the scripted backend: for every question it searches the question's
content words ``--searches`` times, identically, then gives an empty answer. Accuracy is
therefore 0; what the rows measure is retrieval: evidence recall, first-query success and drift
of the queries as run. Writes prediction rows for ``madqa eval``.

Usage::

    python data/heldout/run_stubborn.py --corpus DIR --questions Q.jsonl --strategy drift -o OUT.jsonl \
        [--top-k 1] [--searches 4]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from madqa.agent import Agent  # noqa: E402
from madqa.evaluation.questions import read_jsonl  # noqa: E402
from madqa.index import open_or_build  # noqa: E402
from madqa.plugins import collect, get_plugin_manager  # noqa: E402
from madqa.settings import Settings, load_config  # noqa: E402
from madqa.trace import Trace  # noqa: E402
from madqa_plugins.offline.offline_question import STOPWORDS  # noqa: E402


def content_words(question: str) -> str:
    return " ".join(w for w in re.findall(r"[\w\-]+", question) if w.lower() not in STOPWORDS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--questions", required=True)
    ap.add_argument("--strategy", default="passthrough")
    ap.add_argument("--top-k", type=int, default=1)
    ap.add_argument("--searches", type=int, default=4)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    settings = Settings.from_env()
    registry = collect(get_plugin_manager())
    corpus, _ = open_or_build(args.corpus, settings, registry)
    config = load_config("offline").with_overrides(backend="scripted", query_strategy=args.strategy,
                                                  top_k=args.top_k, max_steps=args.searches + 1)
    config = config.with_overrides(name=f"stubborn-{args.strategy}-k{args.top_k}")
    rows, _ = read_jsonl(args.questions, ValueError)
    with open(args.output, "w", encoding="utf-8") as out:
        for _, q in rows:
            script = [{"search": content_words(q["question"])}] * args.searches + [{"answer": [], "citations": []}]
            agent = Agent(corpus, config, registry, settings, {"script": script})
            trace = Trace(q["question"], config, q.get("id")).consume(agent.run(q["question"]))
            out.write(json.dumps(trace.row(), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
