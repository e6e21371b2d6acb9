#!/usr/bin/env python3
"""Check the fourth development set realdocs4: the PDFs and every question against its pages.

Usage::

    python data/realdocs4/check.py [--docs DIR]

The checks of data/realdocs2/check.py (sha256 and page counts, every answer on its evidence page, no
unanswerable question's terms on any page), on this set.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("realdocs2_check", HERE.parent / "realdocs2" / "check.py")
realdocs2_check = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(realdocs2_check)  # type: ignore[union-attr]


def main(argv: list[str] | None = None) -> int:
    fetch = realdocs2_check.load_fetch("realdocs4_fetch", HERE / "fetch.py")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=fetch.DEFAULT_OUT, help="docs folder (default: %(default)s)")
    return realdocs2_check.check_set(HERE, fetch, parser.parse_args(argv).docs)


if __name__ == "__main__":
    raise SystemExit(main())
