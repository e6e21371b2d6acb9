#!/usr/bin/env python3
"""Fetch the blind check set heldout3: PDFs from Debian documentation packages, checked by sha256, and one scan.

Usage::

    python data/heldout3/fetch.py                  # into bench/.cache/heldout3/docs/
    python data/heldout3/fetch.py --out DIR        # scan source text goes to DIR/../scans_truth.json
    python data/heldout3/fetch.py --any-version

Same method and code as data/realdocs/fetch.py (pinned Debian 12 "bookworm" packages through
``apt-get download``, only the needed members unpacked, sha256 checked, a second run downloads nothing)
on packages no other set uses; its one image-only scan is made from three pages of the Yorick manual
(not otherwise in the set) by data/realdocs/make_scans.py's ``scan_page``, seeded the same way.
**Held out**: measured once, at the end, with the final code; never tuned on (README.md).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import numpy
import pymupdf

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_OUT = REPO / "bench" / ".cache" / "heldout3" / "docs"

if "realdocs2_fetch" not in sys.modules:
    import importlib.util

    _spec = importlib.util.spec_from_file_location("realdocs2_fetch", REPO / "data" / "realdocs2" / "fetch.py")
    sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
    _spec.loader.exec_module(sys.modules[_spec.name])  # type: ignore[union-attr]
realdocs2 = sys.modules["realdocs2_fetch"]
REALDOCS = realdocs2.REALDOCS
load_module = realdocs2.load_module
Source = realdocs2.Source
realdocs = realdocs2.realdocs
make_scans = load_module("realdocs_make_scans", REALDOCS / "make_scans.py")

PACKAGES: dict[str, str] = {  # package -> pinned version (Debian 12 "bookworm"); in no other set
    "sdcc-doc": "4.2.0+dfsg-1",
    "nauty-doc": "2.8.6+ds-2",
    "music-doc": "1.1.16-1.1",
    "surf-alggeo-doc": "1.0.6+ds-6",
    "tachyon-doc": "0.99~b6+dsx-10",
    "python-reportlab-doc": "3.6.12-1+deb12u1",
    "xfig-doc": "1:3.2.8b-2",
    "yorick-doc": "2.2.04+dfsg1-12",
}

DOC = "usr/share/doc"
DOCS: tuple = (
    Source("sdcc/sdccman.pdf", "sdcc-doc", f"{DOC}/sdcc-doc/sdccman.pdf.gz",
           "8887f9fd940ee8aabe9429c28b53f264669f5c2c406688baf4b3d6c49438b2fb", 134,
           "compiler user manual (tables of options, data types, memory)"),
    Source("nauty/nug28.pdf", "nauty-doc", f"{DOC}/nauty/nug28.pdf",
           "3ba8c8723a163283db7cd4ca583d33573b4194b07c9b6fa71c92ed95cd4a70e5", 109,
           "program and library user guide (tables of graph counts)"),
    Source("music/music-manual.pdf", "music-doc", f"{DOC}/music-doc/music-manual.pdf.gz",
           "071a7328d11b172ef3357b5032e895bfa8e407ac1c69f5214d71c9bd64827391", 46, "library manual (MPI)"),
    Source("surf/surf-alggeo.pdf", "surf-alggeo-doc", f"{DOC}/surf-alggeo/surf-alggeo.pdf",
           "3c1cdbe926fe5a9d1b99d2a5e5369796f11811bc170d5db9c0806b576fbd5dbf", 25,
           "program manual (script language, variables and defaults)"),
    Source("tachyon/tachyon.pdf", "tachyon-doc", f"{DOC}/tachyon/tachyon.pdf",
           "60d1be0e965a0d42ade7351bc255ca67f9801a87f759f683b6a3fae4ba6ee661", 24,
           "user's guide (command-line options, scene file format)"),
    Source("reportlab/reportlab-userguide.pdf", "python-reportlab-doc",
           f"{DOC}/python-reportlab-doc/reportlab-userguide.pdf",
           "91ad5429d7b2907b8efefd7b95facfe2fb01ec31b8cefb024e47b0a7ac713420", 134,
           "library user guide (tables of attributes)"),
    Source("xfig/xfig-howto.pdf", "xfig-doc", f"{DOC}/xfig/xfig-howto.pdf",
           "807fa165ab27848bcf29b7869729af400d5fa8e669f8ce92c34be8a0532cddb5", 24, "short how-to"),
    Source("yorick/refs.pdf", "yorick-doc", f"{DOC}/yorick-doc/refs.pdf.gz",
           "3cc58cb0807b5594baa68b226745cb1e1f0b892e6627ba38bdb261798cfd70f7", 6,
           "reference card (dense columns of function / meaning)"),
)

# Not in the set: three of its pages become the scan.
SCAN_SOURCE = Source("yorick.pdf", "yorick-doc", f"{DOC}/yorick-doc/yorick.pdf.gz",
                     "a386c4e3517eee9c27dd411062755df007b75f5fbd99920990ffb202e5aeb73b", 85, "scan source")
SEED = 20261202
SCANS: tuple = (
    make_scans.Scan("scans/scan_yorick.pdf", SCAN_SOURCE.name, (9, 10, 19), "Yorick manual, basic ideas (scanned)",
                    "f5b0747750dc331a305cf1b971219e15578a57a2ebef542b4b2333340a1a6dec"),
)


def make_scan(sources: Path, docs: Path) -> dict[str, dict]:
    """Write the scans into ``docs`` and their source text beside it (``make_scans.truth_path``), made
    like data/realdocs's (make_scans.scan_page, seeded); raise make_scans.ScanError on other bytes."""
    rng = numpy.random.default_rng(SEED)
    angles = random.Random(SEED)
    truth: dict[str, dict] = {}


    for scan in SCANS:
        out = pymupdf.open()
        pages = []
        with pymupdf.open(sources / scan.source) as src:
            for number in scan.pages:
                page = src[number - 1]
                angle = round(angles.uniform(0.2, 1.0) * angles.choice((-1, 1)), 2)
                new = out.new_page(width=page.rect.width, height=page.rect.height)
                new.insert_image(new.rect, stream=make_scans.scan_page(page, angle, rng))
                pages.append({"page": len(pages) + 1, "source": scan.source, "source_page": number,
                              "skew_degrees": angle, "text": page.get_text("text")})
        out.set_metadata({"title": scan.title, "author": "", "subject": "", "keywords": "",
                          "creator": "madqa heldout3 fetch.py", "producer": "PyMuPDF",
                          "creationDate": "D:20261202000000Z", "modDate": "D:20261202000000Z"})
        data = out.tobytes(garbage=4, deflate=True, no_new_id=True)
        out.close()
        digest = hashlib.sha256(data).hexdigest()
        if digest != scan.sha256:
            raise make_scans.ScanError(f"{scan.name}: sha256 mismatch: expected {scan.sha256}, got {digest}; "
                                       "made with other pymupdf/pillow/numpy versions than requirements.txt pins")
        target = docs / scan.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        truth[scan.name] = {"sha256": digest, "dpi": make_scans.DPI, "seed": SEED, "pages": pages}
    make_scans.truth_path(docs).write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return truth


def scans_ready(docs: Path) -> bool:
    """True when every scan and the truth file exist with the pinned sha256."""
    try:
        truth = json.loads(make_scans.truth_path(docs).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return all((docs / s.name).is_file() and realdocs.sha256_of(docs / s.name) == s.sha256
               and truth.get(s.name, {}).get("sha256") == s.sha256 for s in SCANS)


def main_with_scans(argv: list[str] | None, docs: tuple, versions: dict[str, str], default_out: Path, doc: str | None,
                    scan_source: Source | None) -> int:
    """A set's command with its scans: ``realdocs.set_main``, then, under its lock, this module's ``SCANS`` made
    from ``scan_source`` (fetched into a temporary folder) unless they are there already. heldout4 and heldout5
    run it on a private instance of this module whose ``SCANS`` and ``SEED`` are their own (heldout5 has none:
    the step writes an empty ``scans_truth.json``, which the check reads)."""
    def scan_step(out: Path, any_version: bool, tmp: Path) -> None:
        if not scans_ready(out):
            if scan_source is not None:
                realdocs.fetch(tmp, any_version, docs=(scan_source,), versions=versions)
            make_scan(tmp, out)

    note = f"; scans: {', '.join(s.name for s in SCANS)}" if SCANS else ""
    return realdocs.set_main(argv, docs, versions, default_out, doc, after=scan_step, errors=(make_scans.ScanError,),
                             note=note)


def main(argv: list[str] | None = None) -> int:
    return main_with_scans(argv, DOCS, PACKAGES, DEFAULT_OUT, __doc__, SCAN_SOURCE)


if __name__ == "__main__":
    raise SystemExit(main())
