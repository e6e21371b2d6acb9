#!/usr/bin/env python3
"""Check the blind check set heldout3: the PDFs, the scan and every question against its pages.

Usage::

    python data/heldout3/check.py [--docs DIR]

data/realdocs2/check.py's ``check_set`` (sha256 and page counts, every answer on its evidence page, no
unanswerable question's terms on any page) on this set, with its scan added: the scan's sha256 and page
count, no text layer, and its answers checked against the source pages' text recorded by fetch.py in
``scans_truth.json`` (as data/realdocs/check.py does).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("realdocs2_check", HERE.parent / "realdocs2" / "check.py")
realdocs2_check = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(realdocs2_check)  # type: ignore[union-attr]
KINDS = (*realdocs2_check.KINDS, "scan")


class _WithScans:
    """The fetch module as check_set sees it: its DOCS plus the scans (checked like any PDF, and by the
    realdocs checks as image-only because their names start with ``scans/``)."""

    def __init__(self, fetch: ModuleType) -> None:
        self.REALDOCS, self.load_module = fetch.REALDOCS, fetch.load_module
        self.DOCS = (*fetch.DOCS, *(fetch.Source(s.name, s.source, "", s.sha256, len(s.pages), "scan")
                                    for s in fetch.SCANS))


def main(argv: list[str] | None = None) -> int:
    fetch = realdocs2_check.load_fetch("heldout3_fetch", HERE / "fetch.py")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=fetch.DEFAULT_OUT, help="docs folder (default: %(default)s)")
    docs = parser.parse_args(argv).docs
    realdocs_check = fetch.load_module("realdocs_check", fetch.REALDOCS / "check.py")
    truth_file = fetch.make_scans.truth_path(docs)
    if not truth_file.is_file():
        print(f"{truth_file}: missing; run {HERE.name}/fetch.py")
        return 1
    truth = json.loads(truth_file.read_text(encoding="utf-8"))
    pdf_texts = realdocs_check.pdf_texts

    def texts_with_scans(folder: Path, names: list[str]) -> dict[str, list[str]]:
        """Page texts; a scan's are its source pages' (it has no text layer)."""
        scans = {s.name for s in fetch.SCANS}
        texts = pdf_texts(folder, [n for n in names if n not in scans])
        texts.update({n: [p["text"] for p in truth[n]["pages"]] for n in names if n in scans})
        return texts

    realdocs_check.pdf_texts = texts_with_scans
    realdocs2_check.KINDS = KINDS
    try:
        return realdocs2_check.check_set(HERE, _WithScans(fetch), docs)
    finally:
        realdocs_check.pdf_texts = pdf_texts


if __name__ == "__main__":
    raise SystemExit(main())
