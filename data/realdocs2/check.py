#!/usr/bin/env python3
"""Check the second development set: the PDFs and every question against its pages.

Usage::

    python data/realdocs2/check.py               # the default docs folder (run fetch.py first)
    python data/realdocs2/check.py --docs DIR

Prints one line per problem (exit 1 when there is any): every PDF's sha256 and page count as pinned in
``fetch.py``; ``questions.jsonl`` loads with madqa's own loader, a known ``kind``, evidence pages exist
and each answer variant appears on one of its evidence pages; ``unanswerable.jsonl`` names terms no
page holds (data/realdocs/check.py's checks, reused). data/heldout2/check.py runs the same on its set.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
KINDS = ("ordinary", "synonym", "table", "twopage")


def load_fetch(name: str, path: Path) -> ModuleType:
    """A set's fetch.py, imported once under ``name``."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(sys.modules[name])  # type: ignore[union-attr]
    return sys.modules[name]


def check_set(folder: Path, fetch: ModuleType, docs: Path) -> int:
    """Check the PDFs of ``fetch.DOCS`` in ``docs`` and ``folder``'s question files; 0 when all is well."""
    realdocs_check = fetch.load_module("realdocs_check", fetch.REALDOCS / "check.py")
    problems = realdocs_check.check_pdfs(docs, [(s.name, s.sha256, s.pages) for s in fetch.DOCS])
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} problem(s) with the files; run {folder.name}/fetch.py")
        return 1
    texts = realdocs_check.pdf_texts(docs, [s.name for s in fetch.DOCS])
    print(f"files: {len(texts)} PDFs, {sum(len(t) for t in texts.values())} pages, sha256 and page counts verified")
    questions = folder / "questions.jsonl"
    problems, kinds = realdocs_check.check_questions(questions, texts)
    problems = [p for p in problems if "is not one of" not in p]  # this set's kinds are checked here
    problems += [f"{questions.name}: kind {k!r} is not one of {', '.join(KINDS)}" for k in kinds if k not in KINDS]
    unanswerable_problems, unanswerable = realdocs_check.check_unanswerable(folder / "unanswerable.jsonl", texts)
    problems += unanswerable_problems
    print(f"questions: {sum(kinds.values())} (" + ", ".join(f"{k} {kinds.get(k, 0)}" for k in KINDS)
          + f"); unanswerable: {unanswerable}")
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} problem(s)")
        return 1
    print("all answers found on their evidence pages; no unanswerable question's terms on any page")
    return 0


def set_main(folder: Path, doc: str | None, argv: list[str] | None) -> int:
    """The command line of a set's check.py (``--docs DIR``), checking the set in ``folder`` with its fetch.py."""
    fetch = load_fetch(f"{folder.name}_fetch", folder / "fetch.py")
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=fetch.DEFAULT_OUT, help="docs folder (default: %(default)s)")
    return check_set(folder, fetch, parser.parse_args(argv).docs)


def main(argv: list[str] | None = None) -> int:
    return set_main(HERE, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
