#!/usr/bin/env python3
"""Fetch the third development set of real documents: PDFs from Debian documentation packages, by sha256.

Usage::

    python data/realdocs3/fetch.py                  # into bench/.cache/realdocs3/docs/
    python data/realdocs3/fetch.py --out DIR
    python data/realdocs3/fetch.py --any-version    # accept another package version (sha256 still checked)

Same method and code as data/realdocs/fetch.py and data/realdocs2/fetch.py (``apt-get download
PKG=VERSION`` of pinned Debian 12 "bookworm" versions, only the needed members unpacked, ``.pdf.gz``
decompressed, sha256 checked, a second run downloads nothing), on packages that no other real-document
set uses. A development set: the offline reader may be calibrated on it (see README.md).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_OUT = REPO / "bench" / ".cache" / "realdocs3" / "docs"

if "realdocs2_fetch" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("realdocs2_fetch", REPO / "data" / "realdocs2" / "fetch.py")
    sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
    _spec.loader.exec_module(sys.modules[_spec.name])  # type: ignore[union-attr]
realdocs2 = sys.modules["realdocs2_fetch"]
REALDOCS = realdocs2.REALDOCS
load_module = realdocs2.load_module
Source = realdocs2.Source

PACKAGES: dict[str, str] = {  # package -> pinned version (Debian 12 "bookworm"); in no other set
    "texlive-music": "2022.20230122-4",  # bookworm has no texlive-music-doc: the PDFs ship in the package
    "debian-history": "2.28",
    "developers-reference": "12.18",
    "doxygen-doc": "1.9.4-4",
    "groff": "1.22.4-10",
}

MUSIC = "usr/share/doc/texlive-doc"
GROFF = "usr/share/doc/groff-base"
DOCS: tuple = (
    Source("music/musixtex-install.pdf", "texlive-music", f"{MUSIC}/generic/musixtex/musixtex-install.pdf",
           "1ac2b71b76448441dec52a9ab3b33ae4194948f5303b77ef7d5a2da48c3e960b", 3, "short installation how-to"),
    Source("music/pmx-ref298.pdf", "texlive-music", f"{MUSIC}/generic/pmx/ref298.pdf",
           "70c7fb65b8659680953a559f71cbaae61baf12cc190613757509d8a6f1477145", 6,
           "quick reference table (command / option / meaning rows in columns)"),
    Source("music/pmx298.pdf", "texlive-music", f"{MUSIC}/generic/pmx/pmx298.pdf",
           "693ed3f792f73121ea277261594889edf81a948877d519232fce9ccf5b09e275", 38,
           "program manual (lists of limits, MIDI instrument table)"),
    Source("music/latex4musicians.pdf", "texlive-music", f"{MUSIC}/latex/latex4musicians/latex4musicians.pdf",
           "497fa68f955ebfbe61a81255e332dd083dc446d7bdcd2186dfff4a1493aa9cd6", 66,
           "guide (music snippets, list of packages with versions)"),
    Source("debian/project-history.pdf", "debian-history", "usr/share/doc/debian-history/docs/project-history.en.pdf",
           "d3d263affc69ec9c994fe1d06b3cf7dddb78f84e24849d87a4aefe3a4ed15e77", 27,
           "history (dates, people, counts of packages and developers)"),
    Source("debian/developers-reference.pdf", "developers-reference",
           "usr/share/developers-reference/developers-reference.pdf",
           "88e5ac4d15444fd3adb821dc863bd91b820e99a27e65728e74975ab1752652f5", 114, "procedures manual"),
    Source("doxygen/doxygen_manual.pdf", "doxygen-doc", "usr/share/doc/doxygen/doxygen_manual.pdf",
           "2418ce24a0ceeeea04b48a68a2ae59973e38b924f6100f9ac8e8ca90e710e2da", 336,
           "user manual and configuration reference (extension table, option defaults and ranges)"),
    Source("groff/pdfmark.pdf", "groff", f"{GROFF}/pdf/pdfmark.pdf.gz",
           "71321248980549345b78e5afa16798d0c266634984bc3130d62b07601ea36c60", 17, "how-to (PDF with groff)"),
    Source("groff/slide-demo.pdf", "groff", f"{GROFF}/examples/mom/slide-demo.pdf.gz",
           "6837874806edb4660cc8b9e300284fa4a104507b810674799bc8b37c130ab0d6", 27,
           "slides (pauses: each slide's text repeated over near-identical pages; a tbl table)"),
)

if __name__ == "__main__":
    raise SystemExit(realdocs2.main(docs=DOCS, versions=PACKAGES, default_out=DEFAULT_OUT, doc=__doc__))
