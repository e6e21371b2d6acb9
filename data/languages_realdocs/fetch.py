#!/usr/bin/env python3
"""Fetch the non-English real-document set: German and French PDFs from Debian documentation packages.

Usage::

    python data/languages_realdocs/fetch.py            # into bench/.cache/languages_realdocs/docs/{de,fr}/
    python data/languages_realdocs/fetch.py --out DIR
    python data/languages_realdocs/fetch.py --any-version

Same method and code as data/realdocs/fetch.py (``apt-get download PKG=VERSION`` of pinned Debian 12
"bookworm" versions, only the needed members unpacked, sha256 checked, a second run downloads nothing).
Each language is its own corpus folder (``de/``, ``fr/``): the Debian New Maintainers' Guide and the
Debian Reference in that language. The questions (questions.de.jsonl, questions.fr.jsonl) were written
from the documents' text before any madqa search ran on them.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
REALDOCS = REPO / "data" / "realdocs"
DEFAULT_OUT = REPO / "bench" / ".cache" / "languages_realdocs" / "docs"


def load_module(name: str, path: Path) -> ModuleType:
    """Import a script by path under ``name`` (once): every set names its script fetch.py."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


realdocs = load_module("realdocs_fetch", REALDOCS / "fetch.py")
Source = realdocs.Source

PACKAGES: dict[str, str] = {  # package -> pinned version (Debian 12 "bookworm")
    "maint-guide-de": "1.2.53",
    "maint-guide-fr": "1.2.53",
    "debian-reference-de": "2.100",
    "debian-reference-fr": "2.100",
}

DOCS: tuple[Source, ...] = (
    Source("de/maint-guide.de.pdf", "maint-guide-de", "usr/share/doc/maint-guide-de/maint-guide.de.pdf",
           "903620d9dc724da835b99a8314e516596b38299a929f19f13c2096b2f0e01082", 69, "guide (German)"),
    Source("de/debian-reference.de.pdf", "debian-reference-de", "usr/share/debian-reference/debian-reference.de.pdf",
           "55ee002a9530b223ef17c0e8228a0664b92c3eaee09d82acceec782cf700095d", 276, "reference (German)"),
    Source("fr/maint-guide.fr.pdf", "maint-guide-fr", "usr/share/doc/maint-guide-fr/maint-guide.fr.pdf",
           "b955987739377d8d29451a203096dc458391f247fcc05499808d2c6af8359fcf", 64, "guide (French)"),
    Source("fr/debian-reference.fr.pdf", "debian-reference-fr", "usr/share/debian-reference/debian-reference.fr.pdf",
           "1abd3ec78ab9b8b291c943c710cbf697e949495efcd754e09970e3394920682a", 265, "reference (French)"),
)


def main(argv: list[str] | None = None) -> int:
    return realdocs.set_main(argv, DOCS, PACKAGES, DEFAULT_OUT, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
