#!/usr/bin/env python3
"""How far an answer's ✓ can be trusted, on the real-document sets: the share of right answers the check finds on
their pages, and the share of wrong ones it flags.

    python bench/answer_check.py [--sets realdocs,realdocs2,...] [--home DIR] [--threshold T]

Runs ``madqa run`` with the offline config (its own abstention, or ``--threshold T``: 0 answers every question)
on each fetched set's questions (bench/.cache/SET/docs), then ``madqa eval`` on the
rows, and prints per set: answers checked, verified, accuracy among verified and unverified answers, right
answers verified, wrong answers caught. Prints JSON, then a table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SETS = ("realdocs", "realdocs2", "realdocs3", "realdocs4", "heldout_realdocs", "heldout2", "heldout3", "heldout4",
        "heldout5")
FIELDS = ("answers_checked_n", "answers_verified", "accuracy_verified", "accuracy_unverified", "right_verified",
          "wrong_caught", "accuracy")


def measure(name: str, home: Path, threshold: float | None, out: Path) -> dict[str, object] | None:
    docs = REPO / "bench" / ".cache" / name / "docs"
    if not docs.is_dir():
        print(f"{name}: not fetched (python data/{name}/fetch.py), skipped", file=sys.stderr)
        return None
    questions = out / f"{name}.questions.jsonl"  # answerable questions only: an unanswerable one has no right answer
    questions.write_text((REPO / "data" / name / "questions.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    pred = out / f"{name}.jsonl"
    env = {**os.environ, "MADQA_HOME": str(home)}
    py = [sys.executable, "-m", "madqa"]
    at = ["--set", f"backend.abstain_threshold={threshold}"] if threshold is not None else []
    subprocess.run([*py, "run", "--corpus", str(docs), "--questions", str(questions), "-o", str(pred), "--config",
                    "offline", *at], env=env, check=False, capture_output=True)
    done = subprocess.run([*py, "eval", str(pred), "--gold", str(questions), "--json"], env=env,
                          capture_output=True, text=True, check=True)
    overall = next(iter(json.loads(done.stdout).values()))["overall"]
    return {field: overall.get(field) for field in FIELDS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--home", type=Path, default=REPO / "bench" / ".cache" / "answer-check-home")
    parser.add_argument("--threshold", type=float, default=None)
    args = parser.parse_args(argv)
    figures = {}
    with tempfile.TemporaryDirectory(prefix="madqa-answer-check-") as tmp:
        for name in args.sets.split(","):
            if (row := measure(name, args.home, args.threshold, Path(tmp))) is not None:
                figures[name] = row
    print(json.dumps(figures, indent=1))
    print(f"\n{'set':<18}" + "".join(f"{f:>22}" for f in FIELDS))
    for name, row in figures.items():
        print(f"{name:<18}" + "".join(f"{v:>22.3f}" if isinstance(v, float) else f"{v!s:>22}" for v in row.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
