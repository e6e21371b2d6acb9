#!/usr/bin/env python3
"""Fetch the blind check set heldout2: PDFs from Debian documentation packages, checked by sha256.

Usage::

    python data/heldout2/fetch.py                  # into bench/.cache/heldout2/docs/
    python data/heldout2/fetch.py --out DIR
    python data/heldout2/fetch.py --any-version

Same method and code as data/realdocs/fetch.py and data/realdocs2/fetch.py, on packages no other set
uses. **Held out**: measured once, at the end, with the final code; never tuned on (README.md).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_OUT = REPO / "bench" / ".cache" / "heldout2" / "docs"

if "realdocs2_fetch" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("realdocs2_fetch", REPO / "data" / "realdocs2" / "fetch.py")
    sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
    _spec.loader.exec_module(sys.modules[_spec.name])  # type: ignore[union-attr]
realdocs2 = sys.modules["realdocs2_fetch"]
REALDOCS = realdocs2.REALDOCS
load_module = realdocs2.load_module
Source = realdocs2.Source

PACKAGES: dict[str, str] = {  # package -> pinned version (Debian 12 "bookworm"); in no other set
    "texlive-fonts-recommended-doc": "2022.20230122-3",
    "texlive-humanities-doc": "2022.20230122-4",
}

TEX = "usr/share/doc/texlive-doc"
DOCS: tuple = (
    Source("fonts/txfontsdoc.pdf", "texlive-fonts-recommended-doc", f"{TEX}/fonts/txfonts/txfontsdoc.pdf",
           "7989163b98a2d957227260d205733c0ff0584073a7c39fa818c9f9e55b68d20d", 32, "font documentation (font charts)"),
    Source("fonts/marvosym-doc.pdf", "texlive-fonts-recommended-doc", f"{TEX}/fonts/marvosym/marvosym-doc.pdf",
           "d0543fea965b4177a78d26eebb049b245fa399197690d40f9260c5ea02e301c3", 12,
           "symbol chart (position / name / German / English table)"),
    Source("fonts/euro.pdf", "texlive-fonts-recommended-doc", f"{TEX}/latex/euro/euro.pdf",
           "b7761465e45019e9c8329fce8a4711ca8c3e9003f334933bf7b7772496448b56", 15, "package doc (currency conversion)"),
    Source("humanities/covington.pdf", "texlive-humanities-doc", f"{TEX}/latex/covington/covington.pdf",
           "d196aab2a65782e1a57c7307f1dcb5a5f15ae2822c711d001256560ad8eed983", 25, "package doc (linguistics)"),
    Source("humanities/dramatist.pdf", "texlive-humanities-doc", f"{TEX}/latex/dramatist/dramatist.pdf",
           "a6d658547c8cc6ea7a3d4be5380f12ef87f657dc2dee45607d6d35227409996b", 32, "package doc with its code"),
    Source("humanities/bibleref.pdf", "texlive-humanities-doc", f"{TEX}/latex/bibleref/bibleref.pdf",
           "5597de76335eb6793e0b28530fea75bb64fc9682b6b9c435fa7e452985332627", 11, "package doc (bible references)"),
)

if __name__ == "__main__":
    raise SystemExit(realdocs2.main(docs=DOCS, versions=PACKAGES, default_out=DEFAULT_OUT, doc=__doc__))
