#!/usr/bin/env python3
"""Fetch the blind check set heldout4: PDFs from Debian documentation packages, checked by sha256, and one scan.

Usage::

    python data/heldout4/fetch.py                  # into bench/.cache/heldout4/docs/
    python data/heldout4/fetch.py --out DIR        # scan source text goes to DIR/../scans_truth.json
    python data/heldout4/fetch.py --any-version

Same method and code as data/heldout3/fetch.py (pinned Debian 12 "bookworm" packages through
``apt-get download``, only the needed members unpacked, sha256 checked, a second run downloads nothing;
the scan made by data/realdocs/make_scans.py's ``scan_page``, seeded), on packages no other set uses; its
one image-only scan is made from three pages of the GLE manual (not otherwise in the set).
**Held out**: measured once, at the end, with the final code; never tuned on (README.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_OUT = REPO / "bench" / ".cache" / "heldout4" / "docs"

if "heldout4_scan_maker" not in sys.modules:
    import importlib.util

    # A private instance of data/heldout3/fetch.py: its make_scan and scans_ready read the module's SCANS
    # and SEED, which this set sets to its own below (heldout3's own instance is left as it is).
    _spec = importlib.util.spec_from_file_location("heldout4_scan_maker", REPO / "data" / "heldout3" / "fetch.py")
    sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
    _spec.loader.exec_module(sys.modules[_spec.name])  # type: ignore[union-attr]
heldout3 = sys.modules["heldout4_scan_maker"]
REALDOCS = heldout3.REALDOCS
load_module = heldout3.load_module
Source = heldout3.Source
realdocs = heldout3.realdocs
make_scans = heldout3.make_scans

PACKAGES: dict[str, str] = {  # package -> pinned version (Debian 12 "bookworm"); in no other set
    "auto-multiple-choice-doc-pdf": "1.6.0-1",
    "debian-refcard": "12.0",
    "auctex": "12.2-1",
    "cd-hit": "4.8.1-4",
    "infernal-doc": "1.1.4-1",
    "4ti2-doc": "1.6.9+ds-8",
    "camlidl-doc": "1.04-5",
    "eyes17-manuals-en": "5.1.2+repack-1",
    "gle-graphics-manual": "0~20221108-3",
}

DOC = "usr/share/doc"
DOCS: tuple = (
    Source("amc/auto-multiple-choice.en.pdf", "auto-multiple-choice-doc-pdf",
           f"{DOC}/auto-multiple-choice/auto-multiple-choice.en.pdf",
           "dc69b1bcd7b2b601ae05d84cd52f155d12eb8d340407c7e2eb469ce4647ef0f8", 101,
           "application user manual (options, file formats, scoring strategies)"),
    Source("debian-refcard/refcard-en-a4.pdf", "debian-refcard", f"{DOC}/debian-refcard/refcard-en-a4.pdf.gz",
           "e876ef5e889cc82835b96a1b32df6a295e41534a1adae69def6d4ad981e38f61", 2,
           "reference card (command / meaning columns)"),
    Source("auctex/tex-ref.pdf", "auctex", f"{DOC}/auctex/tex-ref.pdf",
           "4a222dd489b97b1f2214b8f321f7f4afdbc685ff568953bfe6f598c545a52175", 2,
           "reference card (action / key binding columns)"),
    Source("cd-hit/cdhit-user-guide.pdf", "cd-hit", f"{DOC}/cd-hit/cdhit-user-guide.pdf",
           "a5d8d8c8e4c892f28fcc425c29334e3c62afc7c46ceded08fbbbe5b043290cf5", 35,
           "program user's guide (options, defaults, word-size tables)"),
    Source("infernal/Userguide.pdf", "infernal-doc", f"{DOC}/infernal/Userguide.pdf",
           "752605bf4a8bb9bbd487a791a7f6122c024915bdf9911d076f84878a0fee2843", 117,
           "program user's guide (tutorial, tables of numbers, options)"),
    Source("4ti2/4ti2_manual.pdf", "4ti2-doc", f"{DOC}/4ti2/4ti2_manual.pdf",
           "97c8bd1c8283687112470bfbafea1debdda1134ba8c4026a5d16828a1fb1b4f6", 59,
           "software manual (input file formats, command options)"),
    Source("camlidl/camlidl-1.04.doc.pdf", "camlidl-doc", f"{DOC}/camlidl/camlidl-1.04.doc.pdf",
           "29df28a0ebbf3677ccc1b20ff36cf66a0a2b32ca61525f48df6da7f31c600e6f", 26,
           "tool manual (IDL type mapping tables)"),
    Source("eyes17/eyes17.pdf", "eyes17-manuals-en", f"{DOC}/eyes17/en/eyes17.pdf.gz",
           "387f709bd28de20f9b0862b7cad8b98b62af7c14342f1bae285bad95ce9e7d8d", 107,
           "hardware / experiments user manual (tables of measurements)"),
)

# Not in the set: three of its pages become the scan.
SCAN_SOURCE = Source("gle-manual.pdf", "gle-graphics-manual", "usr/share/gle-graphics/doc/gle-manual.pdf",
                     "4e1b6199017e3f85520635f17d9b52322f3e5409676be0fdcfa890015c46004a", 116, "scan source")
SEED = 20261204
SCANS: tuple = (
    make_scans.Scan("scans/scan_gle.pdf", SCAN_SOURCE.name, (9, 10, 12), "GLE manual, tutorial and primitives (scanned)",
                    "f6b9f1a2d385660d758c289fb8d63981743be119db32cccab70461353d19417a"),
)
heldout3.SCANS, heldout3.SEED = SCANS, SEED


def main(argv: list[str] | None = None) -> int:
    return heldout3.main_with_scans(argv, DOCS, PACKAGES, DEFAULT_OUT, __doc__, SCAN_SOURCE)


if __name__ == "__main__":
    raise SystemExit(main())
