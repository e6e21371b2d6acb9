#!/usr/bin/env python3
"""Fetch the second development set of real documents: PDFs from Debian documentation packages, by sha256.

Usage::

    python data/realdocs2/fetch.py                  # into bench/.cache/realdocs2/docs/
    python data/realdocs2/fetch.py --out DIR
    python data/realdocs2/fetch.py --any-version    # accept another package version (sha256 still checked)

Same method and code as data/realdocs/fetch.py (``apt-get download PKG=VERSION`` of pinned Debian 12
"bookworm" versions, only the needed members unpacked, sha256 checked, a second run downloads nothing),
on packages that no other real-document set uses (data/realdocs, data/heldout_realdocs,
data/languages_realdocs, data/heldout2). A development set: the offline reader is calibrated on it
together with data/realdocs (see README.md).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
REALDOCS = REPO / "data" / "realdocs"
DEFAULT_OUT = REPO / "bench" / ".cache" / "realdocs2" / "docs"


def load_module(name: str, path: Path) -> ModuleType:
    """Import a script by path under ``name`` (once): every set names its scripts fetch.py and check.py."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


realdocs = load_module("realdocs_fetch", REALDOCS / "fetch.py")
Source = realdocs.Source

PACKAGES: dict[str, str] = {  # package -> pinned version (Debian 12 "bookworm"); in no other set
    "pari-doc": "2.15.2-1",
    "texlive-metapost-doc": "2022.20230122-3",
}

PARI = "usr/share/pari/doc"
MP = "usr/share/doc/texlive-doc/metapost/base"
DOCS: tuple[Source, ...] = (
    Source("pari/INSTALL.pdf", "pari-doc", f"{PARI}/INSTALL.pdf",
           "88f6a0830414854fda2dbb4ce9fe3eb7511590a31368d83d2d7bc258e6fcc98b", 11, "installation guide"),
    Source("pari/tutorial.pdf", "pari-doc", f"{PARI}/tutorial.pdf",
           "39adef47fe7c5c5b2137dd2a6f0d29900e740889db7bcedfb70ffe4481cb4a1b", 60, "tutorial"),
    Source("pari/refcard.pdf", "pari-doc", f"{PARI}/refcard.pdf",
           "b65dfacf2317b8022f9c650bfe19c5095547dc525d85304b8f310bdc86ed3404", 4,
           "reference card (three columns of label / command rows)"),
    Source("pari/parallel.pdf", "pari-doc", f"{PARI}/parallel.pdf",
           "183120fadf00e19babe7972cf3da6e0b6b6cda2cf7271fd39f1502ab5d3e9f6a", 13, "introduction to parallel GP"),
    Source("metapost/mpman.pdf", "texlive-metapost-doc", f"{MP}/mpman.pdf",
           "c3b83ab35548dbde80eac38727d2eb826c14780441c0d308190ee72bf306d9d3", 114,
           "user's manual (reference tables of variables, constants, operators)"),
    Source("metapost/mpintro.pdf", "texlive-metapost-doc", f"{MP}/mpintro.pdf",
           "2492ee6a38e47d2295294c8039b990f16b2d80863cdf21ff6ec99189a2420f1b", 13, "beginner's guide"),
    Source("metapost/mpgraph.pdf", "texlive-metapost-doc", f"{MP}/mpgraph.pdf",
           "8b02ec1e46cfd9225ad64778d996d7bbb8d6921c2e385e18e63a1502af9b85f1", 17, "graph package paper"),
)


def main(argv: list[str] | None = None, docs: tuple = DOCS, versions: dict[str, str] = PACKAGES,
         default_out: Path = DEFAULT_OUT, doc: str | None = __doc__) -> int:
    """This set's command; data/heldout2 runs it with its own ``docs``, ``versions``, ``default_out`` and ``doc``."""
    return realdocs.set_main(argv, docs, versions, default_out, doc)


if __name__ == "__main__":
    raise SystemExit(main())
