#!/usr/bin/env python3
"""Check the blind check set heldout5: the PDFs and every question against its pages.

Usage::

    python data/heldout5/check.py [--docs DIR]

data/heldout3/check.py's checks, run by its own code on this folder: sha256 and page counts, every
answer on its evidence page, no unanswerable question's terms on any page. This set has no scan (its
fetch.py writes an empty ``scans_truth.json``, which heldout3's check reads).
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import pymupdf

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("heldout5_checker", HERE.parent / "heldout3" / "check.py")
checker = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(checker)  # type: ignore[union-attr]
# This private instance (and the realdocs2 check it loaded for itself) reads this folder and its fetch.py.
fetch = checker.realdocs2_check.load_fetch("heldout5_fetch", HERE / "fetch.py")
checker.HERE = HERE
checker.realdocs2_check.load_fetch = lambda name, path: fetch


def main(argv: list[str] | None = None) -> int:
    pymupdf.TOOLS.mupdf_display_errors(False)  # as heldout4's: MuPDF's warnings are not this check's findings
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=fetch.DEFAULT_OUT, help="docs folder (default: %(default)s)")
    return checker.check(parser.parse_args(argv).docs)


if __name__ == "__main__":
    raise SystemExit(main())
