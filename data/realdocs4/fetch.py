#!/usr/bin/env python3
"""Fetch the fourth development set of real documents: PDFs from Debian documentation packages, by sha256.

Usage::

    python data/realdocs4/fetch.py                  # into bench/.cache/realdocs4/docs/
    python data/realdocs4/fetch.py --out DIR
    python data/realdocs4/fetch.py --any-version    # accept another package version (sha256 still checked)

Same method and code as data/realdocs/fetch.py, data/realdocs2/fetch.py and data/realdocs3/fetch.py
(``apt-get download PKG=VERSION`` of pinned Debian 12 "bookworm" versions, only the needed members
unpacked, ``.pdf.gz`` decompressed, sha256 checked, a second run downloads nothing), on packages that no
other real-document set uses. A development set: the offline reader may be calibrated on it (see README.md).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_OUT = REPO / "bench" / ".cache" / "realdocs4" / "docs"

if "realdocs2_fetch" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("realdocs2_fetch", REPO / "data" / "realdocs2" / "fetch.py")
    sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
    _spec.loader.exec_module(sys.modules[_spec.name])  # type: ignore[union-attr]
realdocs2 = sys.modules["realdocs2_fetch"]
REALDOCS = realdocs2.REALDOCS
load_module = realdocs2.load_module
Source = realdocs2.Source

PACKAGES: dict[str, str] = {  # package -> pinned version (Debian 12 "bookworm"); in no other set
    "rasmol-doc": "2.7.6.0-3",
    "pspp": "1.6.2-2",  # architecture-dependent package: the PDF is the same in every build
    "r-cran-zoo": "1.8-11-1",  # architecture-dependent too; the vignettes ship inside it
    "xorg-docs": "1:1.7.1-1.2",
    "texlive-plain-generic": "2022.20230122-4",  # bookworm has no -doc package for it: the PDFs ship inside
}

RASMOL = "usr/share/doc/rasmol-doc"
ZOO = "usr/lib/R/site-library/zoo/doc"
XORG = "usr/share/doc/xorg-docs"
DOCS: tuple = (
    Source("rasmol/manual.pdf", "rasmol-doc", f"{RASMOL}/manualA4.pdf",
           "cd82d6deb95216e1268cb9bf7ac64f02252e868958a9b30a9eb999c707ed2dd2", 91,
           "user manual and command reference (made with Word; author / version / date and colour tables)"),
    Source("rasmol/refcard.pdf", "rasmol-doc", f"{RASMOL}/refcardA4.pdf",
           "2a8915818029d551786f7019c61997cf8b6c563b45e5f9675fb5f041493d9a06", 2,
           "quick reference card (command / meaning rows in columns, RGB colour tables)"),
    Source("pspp/pspp.pdf", "pspp", "usr/share/doc/pspp/pspp.pdf",
           "49237f17f60e91124127e89dc8f3cb3beaa3d31181cafddee7e814ce8cf2ce15", 293,
           "users' guide (option lists with defaults, ASCII-drawn output tables of numbers)"),
    Source("zoo/zoo-quickref.pdf", "r-cran-zoo", f"{ZOO}/zoo-quickref.pdf",
           "927cc6fafad499068f1cb59a565c2105f92e6dca1bef8586c079f1d034336b4e", 11,
           "short how-to (R session: printed series, tables of dates and numbers)"),
    Source("zoo/zoo-faq.pdf", "r-cran-zoo", f"{ZOO}/zoo-faq.pdf",
           "10441a849d6dcd7901cdeca635d798ac6171e005a1530693d0228c6550fb6087", 15, "FAQ"),
    Source("xorg/Versions.pdf", "xorg-docs", f"{XORG}/Versions.pdf.gz",
           "a39bae8153c7cc24c0794b805dc965f42ececc5787603511c279f2dd927d5759", 5, "short policy note (version numbers)"),
    Source("xorg/XKB-Config.pdf", "xorg-docs", f"{XORG}/input/XKB-Config.pdf.gz",
           "d0c3b6eaff5fa58fec3a2162353c504d574eca6555c669f36fc341da28027201", 5, "short configuration how-to"),
    Source("xorg/ReleaseNotes.pdf", "xorg-docs", f"{XORG}/ReleaseNotes.pdf.gz",
           "7c64ad6a0bf17470439cbb87f999e4a8301820b2480357cf67bb1d09d109a639", 21,
           "release notes (driver tables, configure options, a two-column list of names)"),
    Source("xorg/fonts.pdf", "xorg-docs", f"{XORG}/fonts/fonts.pdf.gz",
           "0f76ed5cf335e095404eba1245e3384705c2ce8f25709602e48ffcd56d7bf3c3", 20, "guide (installing fonts)"),
    Source("present/HowToTalkTeX.pdf", "texlive-plain-generic",
           "usr/share/doc/texlive-doc/plain/present/HowToTalkTeX.pdf",
           "b97dd53d687c711c461d885942dae91835eed1b7708fc1b2b505fb8a2e080808", 51,
           "slides (20 slides over 51 pages: incremental frames repeat a slide's text; a font table)"),
)

if __name__ == "__main__":
    raise SystemExit(realdocs2.main(docs=DOCS, versions=PACKAGES, default_out=DEFAULT_OUT, doc=__doc__))
