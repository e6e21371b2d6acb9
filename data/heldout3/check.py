#!/usr/bin/env python3
"""Check the blind check set heldout3: the PDFs, the scan and every question against its pages.

Usage::

    python data/heldout3/check.py [--docs DIR]

The checks of data/realdocs2/check.py's ``check_set`` (sha256 and page counts, every answer on its
evidence page, no unanswerable question's terms on any page), with data/realdocs/check.py's functions,
on this set and its scan: the scan's sha256, page count and missing text layer, and its questions'
answers checked against the source pages' text that fetch.py recorded in ``scans_truth.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("realdocs2_check", HERE.parent / "realdocs2" / "check.py")
realdocs2_check = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(realdocs2_check)  # type: ignore[union-attr]
KINDS = (*realdocs2_check.KINDS, "scan")


def check(docs: Path) -> int:
    """Check the PDFs and scans under ``docs`` and this folder's question files; 0 when all is well."""
    fetch = realdocs2_check.load_fetch("heldout3_fetch", HERE / "fetch.py")
    realdocs_check = fetch.load_module("realdocs_check", fetch.REALDOCS / "check.py")
    entries = [(s.name, s.sha256, s.pages) for s in fetch.DOCS] + [(s.name, s.sha256, len(s.pages)) for s in fetch.SCANS]
    problems = realdocs_check.check_pdfs(docs, entries)  # a ``scans/`` file must have no text layer
    truth_file = fetch.make_scans.truth_path(docs)
    if not truth_file.is_file():
        problems.append(f"{truth_file}: missing")
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} problem(s) with the files; run {HERE.name}/fetch.py")
        return 1
    texts = realdocs_check.pdf_texts(docs, [s.name for s in fetch.DOCS])
    truth = json.loads(truth_file.read_text(encoding="utf-8"))
    texts.update({s.name: [p["text"] for p in truth[s.name]["pages"]] for s in fetch.SCANS})
    print(f"files: {len(texts)} PDFs ({len(fetch.SCANS)} scan), {sum(len(t) for t in texts.values())} pages, "
          "sha256 and page counts verified")
    questions = HERE / "questions.jsonl"
    problems, kinds = realdocs_check.check_questions(questions, texts)
    problems = [p for p in problems if "is not one of" not in p]  # this set's kinds are checked here
    problems += [f"{questions.name}: kind {k!r} is not one of {', '.join(KINDS)}" for k in kinds if k not in KINDS]
    unanswerable_problems, unanswerable = realdocs_check.check_unanswerable(HERE / "unanswerable.jsonl", texts)
    problems += unanswerable_problems
    print(f"questions: {sum(kinds.values())} (" + ", ".join(f"{k} {kinds.get(k, 0)}" for k in KINDS)
          + f"); unanswerable: {unanswerable}")
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} problem(s)")
        return 1
    print("all answers found on their evidence pages (the scan's on its source text); "
          "no unanswerable question's terms on any page")
    return 0


def main(argv: list[str] | None = None) -> int:
    fetch = realdocs2_check.load_fetch("heldout3_fetch", HERE / "fetch.py")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=fetch.DEFAULT_OUT, help="docs folder (default: %(default)s)")
    return check(parser.parse_args(argv).docs)


if __name__ == "__main__":
    raise SystemExit(main())
