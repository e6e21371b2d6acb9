#!/usr/bin/env python3
"""Fetch the held-out real-document set: PDFs from Debian documentation packages, checked by sha256.

Usage::

    python data/heldout_realdocs/fetch.py                  # into bench/.cache/heldout_realdocs/docs/
    python data/heldout_realdocs/fetch.py --out DIR
    python data/heldout_realdocs/fetch.py --any-version    # accept another package version (sha256 still checked)

Same method and code as data/realdocs/fetch.py (``apt-get download PKG=VERSION`` of pinned Debian 12
"bookworm" versions, only the needed members unpacked, sha256 checked, a second run downloads nothing),
on packages that data/realdocs does not use. Nothing was tuned on these documents: see README.md.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
REALDOCS = REPO / "data" / "realdocs"
DEFAULT_OUT = REPO / "bench" / ".cache" / "heldout_realdocs" / "docs"


def load_module(name: str, path: Path) -> ModuleType:
    """Import a script by path under ``name`` (once): both sets name their scripts fetch.py and check.py."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


realdocs = load_module("realdocs_fetch", REALDOCS / "fetch.py")
Source = realdocs.Source

PACKAGES: dict[str, str] = {  # package -> pinned version (Debian 12 "bookworm"); none is in data/realdocs
    "r-doc-pdf": "4.2.2.20221110-2",
    "glpk-doc": "5.0-1",
    "texlive-latex-recommended-doc": "2022.20230122-3",
}

R = "usr/share/R/doc/manual"  # the files themselves (usr/share/doc/r-doc-pdf/manual/ holds symlinks to them)
GLPK = "usr/share/doc/glpk-doc"
TEX = "usr/share/doc/texlive-doc/latex"
DOCS: tuple[Source, ...] = (
    Source("r/R-admin.pdf", "r-doc-pdf", f"{R}/R-admin.pdf",
           "50e256b5f873bbee4c8482df3754fa8654f02ef693409fe5e30b2f114e3efe9f", 85, "installation manual"),
    Source("r/R-data.pdf", "r-doc-pdf", f"{R}/R-data.pdf",
           "9381a39ffeb8545a745c2618ba955b4ae4e10b9c8373cd5bc1984fff8318f8ca", 41, "data import/export manual"),
    Source("r/R-FAQ.pdf", "r-doc-pdf", f"{R}/R-FAQ.pdf",
           "de8768520d4fb90dad64c28483ffb92dca7dd9d8dc8556905b35c2e62a939255", 52, "FAQ"),
    Source("glpk/gmpl.pdf", "glpk-doc", f"{GLPK}/gmpl.pdf",
           "df54ba811d1fe3c041447b575997298d63b0a6366e39454ef2efc382f08203c2", 74,
           "modelling language reference (GNU MathProg)"),
    Source("glpk/graphs.pdf", "glpk-doc", f"{GLPK}/graphs.pdf",
           "14ba079a0ae34b6a8717b090851ad5248aa1a4ea34ac9430fdcf547c70ff305b", 61,
           "C API reference (graph and network routines: look-alike routine pages)"),
    Source("latex/pdfpages.pdf", "texlive-latex-recommended-doc", f"{TEX}/pdfpages/pdfpages.pdf",
           "f5b96b3ebbefe27d54d2a5022179028b0ba98e527dd5488bf67d94fa73134b52", 12, "package doc (option list)"),
    Source("latex/booktabs.pdf", "texlive-latex-recommended-doc", f"{TEX}/booktabs/booktabs.pdf",
           "7052d0760750c97a9fa3ae6e00942768a809f84a05466d36dc9e38f906d98dfe", 18, "package doc (essay-like)"),
    Source("latex/microtype.pdf", "texlive-latex-recommended-doc", f"{TEX}/microtype/microtype.pdf",
           "87d5dea67dac255eddac75106b3b382e7dc20cf91e493888357664c93a9308f4", 37,
           "package doc (options in margins, feature tables)"),
    Source("latex/listings.pdf", "texlive-latex-recommended-doc", f"{TEX}/listings/listings.pdf",
           "9a6e55d925a56c2e84f131242b1d0aa607e22ea2c385539f5561b00bc2e94839", 63,
           "package doc (key reference with defaults)"),
)


def main(argv: list[str] | None = None) -> int:
    return realdocs.set_main(argv, DOCS, PACKAGES, DEFAULT_OUT, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
