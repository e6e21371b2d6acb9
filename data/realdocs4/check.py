#!/usr/bin/env python3
"""Check the fourth development set realdocs4: the PDFs and every question against its pages.

Usage::

    python data/realdocs4/check.py [--docs DIR]

The checks of data/realdocs2/check.py (sha256 and page counts, every answer on its evidence page, no
unanswerable question's terms on any page), on this set.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("realdocs2_check", HERE.parent / "realdocs2" / "check.py")
realdocs2_check = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(realdocs2_check)  # type: ignore[union-attr]


def main(argv: list[str] | None = None) -> int:
    return realdocs2_check.set_main(HERE, __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
