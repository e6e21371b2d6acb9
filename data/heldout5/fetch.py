#!/usr/bin/env python3
"""Fetch the blind check set heldout5: PDFs from Debian documentation packages, checked by sha256.

Usage::

    python data/heldout5/fetch.py                  # into bench/.cache/heldout5/docs/
    python data/heldout5/fetch.py --out DIR
    python data/heldout5/fetch.py --any-version

Same method and code as data/heldout4/fetch.py (data/heldout3's, through a private instance: pinned
Debian 12 "bookworm" packages through ``apt-get download``, only the needed members unpacked, sha256
checked, a second run downloads nothing), on packages no other set uses. This set has no scan: its
scan list is empty, so the scan step only writes an empty ``scans_truth.json`` (heldout3's check reads it).
**Held out**: measured once, at the end, with the final code; never tuned on (README.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_OUT = REPO / "bench" / ".cache" / "heldout5" / "docs"

if "heldout5_fetcher" not in sys.modules:
    import importlib.util

    # A private instance of data/heldout3/fetch.py: its make_scan and scans_ready read the module's SCANS,
    # which this set empties below (heldout3's own instance is left as it is).
    _spec = importlib.util.spec_from_file_location("heldout5_fetcher", REPO / "data" / "heldout3" / "fetch.py")
    sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
    _spec.loader.exec_module(sys.modules[_spec.name])  # type: ignore[union-attr]
heldout3 = sys.modules["heldout5_fetcher"]
REALDOCS = heldout3.REALDOCS
load_module = heldout3.load_module
Source = heldout3.Source
realdocs = heldout3.realdocs
make_scans = heldout3.make_scans

PACKAGES: dict[str, str] = {  # package -> pinned version (Debian 12 "bookworm"); in no other set
    "bash-doc": "5.2.15-2",
    "xmlstarlet": "1.6.1-3",
    "freefem-doc": "3.5.8-7",
    "ubuntu-packaging-guide-pdf": "1.0.4",
    "docbook-xsl-doc-pdf": "1.79.1-1",
    "sbcl-doc": "2:2.2.9-1",
}

DOC = "usr/share/doc"
DOCS: tuple = (
    Source("bash/bash.pdf", "bash-doc", f"{DOC}/bash/bash.pdf",
           "ebd1361fe662e7e6b7386da02986bda05a434f85667939f72356fa86de19dd6d", 87,
           "shell manual page (options, variables, builtins)"),
    Source("xmlstarlet/xmlstarlet-ug.pdf", "xmlstarlet", f"{DOC}/xmlstarlet/xmlstarlet-ug.pdf.gz",
           "115a5979383fdbdad3d0b35b84be32d003571c71aba7d8090440b572c3205f39", 32,
           "command-line tool user's guide (commands, options, examples)"),
    Source("freefem/freefem.pdf", "freefem-doc", f"{DOC}/freefem-doc/freefem.pdf",
           "9ac5d2e38e36ea00b73d568242a7018f90e4d3e665fcd0fa3e459c2e829aa206", 50,
           "program manual (language, functions, examples)"),
    Source("ubuntu-packaging-guide/ubuntu-packaging-guide.pdf", "ubuntu-packaging-guide-pdf",
           f"{DOC}/ubuntu-packaging-guide-pdf/ubuntu-packaging-guide.pdf.gz",
           "53406441f5208193a1bd6fe8fcdf0003ca3e1f66e15e105cd36388cf9a59a892", 51,
           "how-to guide (packaging steps, commands)"),
    Source("docbook-xsl/reference.pdf", "docbook-xsl-doc-pdf", f"{DOC}/docbook-xsl-doc-pdf/doc/reference.pdf.gz",
           "ce478311b60c093c84791007d6cd81f42736433a34f37a146b3bb99e88911db6", 95,
           "stylesheet parameter reference (parameters and their default values)"),
    Source("sbcl/sbcl-internals.pdf", "sbcl-doc", f"{DOC}/sbcl/sbcl-internals.pdf.gz",
           "7492cccdb778714244bda5665c1231984794de1e7652283d9b0606466b5ac85b", 32,
           "compiler internals manual (developer notes)"),
)
heldout3.SCANS = ()
SCANS = heldout3.SCANS


def main(argv: list[str] | None = None) -> int:
    return heldout3.main_with_scans(argv, DOCS, PACKAGES, DEFAULT_OUT, __doc__, None)


if __name__ == "__main__":
    raise SystemExit(main())
