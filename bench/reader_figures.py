#!/usr/bin/env python3
"""Figures of a prediction file on the real-document development set, by kind of question.

Usage::

    python bench/reader_figures.py PRED.jsonl [UNANSWERABLE_PRED.jsonl]

Accuracy (ANLS* >= 0.5, the official metric) of ordinary and hard (every other kind) questions,
the precision of the answers given, the refusal rate on unanswerable questions, and the share of
non-empty answers carrying a quote verified on a cited page.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from madqa.evaluation.metrics import anls_star  # noqa: E402
from madqa.evaluation.questions import load_questions  # noqa: E402


def main() -> int:
    gold = {}
    for name in ("questions.jsonl", "unanswerable.jsonl"):
        loaded, _ = load_questions(REPO / "data" / "realdocs" / name)
        gold.update({q["id"]: q for q in loaded})
    groups: dict[str, list[tuple[bool, bool, bool]]] = defaultdict(list)
    for path in sys.argv[1:]:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            q = gold.get(row["id"])
            if q is None:
                continue
            answered = any(a.strip() for a in row.get("answer") or [])
            right = bool(q["answer_variants"]) and answered and anls_star(row["answer"], q["answer_variants"]) >= 0.5
            quoted = bool((row.get("quote_check") or {}).get("verified"))
            kind = q.get("kind", "ordinary")
            groups[kind].append((right, answered, quoted))
            if kind not in ("ordinary", "unanswerable"):
                groups["hard"].append((right, answered, quoted))
    out = {}
    for kind, items in sorted(groups.items()):
        n, right = len(items), sum(r for r, _, _ in items)
        given = sum(a for _, a, _ in items)
        out[kind] = {"n": n, "accuracy": round(right / n, 3), "answered": given,
                     "precision": round(right / given, 3) if given else None,
                     "refused": n - given, "answers_with_verified_quote": sum(q for _, a, q in items if a)}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
