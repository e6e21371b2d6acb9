#!/usr/bin/env python3
"""Check the held-out real-document set: the PDFs and every question against its pages.

Usage::

    python data/heldout_realdocs/check.py               # the default docs folder (run fetch.py first)
    python data/heldout_realdocs/check.py --docs DIR

Prints one line per problem (exit 1 when there is any): every PDF's sha256 and page count as pinned in
``fetch.py``; ``questions.jsonl`` loads with madqa's own loader, a known ``kind``, evidence pages exist
and each answer variant appears (normalised as in data/realdocs/check.py, whose checks are reused) on one
of its evidence pages. Ends with the counts by kind.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
if "heldout_realdocs_fetch" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("heldout_realdocs_fetch", HERE / "fetch.py")
    sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
    _spec.loader.exec_module(sys.modules[_spec.name])  # type: ignore[union-attr]
fetch = sys.modules["heldout_realdocs_fetch"]
realdocs_check = fetch.load_module("realdocs_check", fetch.REALDOCS / "check.py")

QUESTIONS = HERE / "questions.jsonl"
KINDS = ("ordinary", "synonym", "abbreviation", "lookalike")


def page_texts(docs: Path) -> dict[str, list[str]]:
    """Every document's page texts (1-based page i is item i-1)."""
    return realdocs_check.pdf_texts(docs, [source.name for source in fetch.DOCS])


def check_files(docs: Path) -> list[str]:
    """Problems with the PDFs themselves: sha256, page count."""
    return realdocs_check.check_pdfs(docs, [(s.name, s.sha256, s.pages) for s in fetch.DOCS])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=fetch.DEFAULT_OUT, help="docs folder (default: %(default)s)")
    args = parser.parse_args(argv)
    problems = check_files(args.docs)
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} problem(s) with the files; run data/heldout_realdocs/fetch.py")
        return 1
    texts = page_texts(args.docs)
    print(f"files: {len(texts)} PDFs, {sum(len(t) for t in texts.values())} pages, sha256 and page counts verified")
    problems, kinds = realdocs_check.check_questions(QUESTIONS, texts)
    problems += [f"{QUESTIONS.name}: kind {k!r} is not one of {', '.join(KINDS)}" for k in kinds if k not in KINDS]
    print(f"questions: {sum(kinds.values())} (" + ", ".join(f"{k} {kinds.get(k, 0)}" for k in KINDS) + ")")
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} problem(s)")
        return 1
    print("all answers found on their evidence pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
