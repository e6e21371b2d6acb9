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

import argparse
import fcntl
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
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="docs folder (default: %(default)s)")
    parser.add_argument("--any-version", action="store_true",
                        help="download the packages' current versions instead of the pinned ones")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        with (out.parent / f".{out.name}.fetch.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # two runs at once take turns
            realdocs.fetch(out, args.any_version, docs=DOCS, versions=PACKAGES)
    except realdocs.FetchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{out}: {len(DOCS)} PDFs, {sum(s.pages for s in DOCS)} pages, verified")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
