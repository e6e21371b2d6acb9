#!/usr/bin/env python3
"""Check that two runs of ``bench/reader_calibration.py --json`` gave the same answers, set by set.

Usage::

    python bench/reader_rows_equal.py BEFORE_PREFIX AFTER_PREFIX SET [SET ...]

reads ``BEFORE_PREFIX-SET.json`` and ``AFTER_PREFIX-SET.json`` for each set. A question's row is equal when
every field but the timing ``s`` is (answer, confidence, features, right, quote_ok, kind, type, gold). Prints
each differing row, then per set the equal rows, answers and confidences, then the total; exits 1 when a
row differs or is missing on one side. Used to show a refactoring of the offline reader changed nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def load(path: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: {k: v for k, v in r.items() if k != "s"} for r in json.loads(path.read_text(encoding="utf-8"))}


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    before, after, sets = argv[0], argv[1], argv[2:]
    total = equal = 0
    for name in sets:
        a, b = load(Path(f"{before}-{name}.json")), load(Path(f"{after}-{name}.json"))
        ids = sorted(a.keys() | b.keys())
        same = 0
        for qid in ids:
            ra, rb = a.get(qid), b.get(qid)
            if ra is not None and ra == rb:
                same += 1
                continue
            print(f"{name} {qid}: before {(ra or {}).get('answer')!r} {(ra or {}).get('confidence')} "
                  f"after {(rb or {}).get('answer')!r} {(rb or {}).get('confidence')}")
        answers = sum(1 for i in ids if i in a and i in b and a[i]["answer"] == b[i]["answer"])
        confidences = sum(1 for i in ids if i in a and i in b and a[i]["confidence"] == b[i]["confidence"])
        print(f"{name}: {same}/{len(ids)} rows equal (answers {answers}, confidences {confidences})")
        total, equal = total + len(ids), equal + same
    print(f"all: {equal}/{total} rows equal")
    return 0 if equal == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
