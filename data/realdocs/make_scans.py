#!/usr/bin/env python3
"""Make the set's two image-only scans from pages of PDFs that are not otherwise in the set.

Called by ``fetch.py`` (which first fetches the source PDFs, ``fetch.SCAN_SOURCES``). Each scanned
page is the source page rendered in greyscale at 150 DPI, turned by a small skew (0.2 to 1 degree,
either way), with Gaussian grain and dark speckles added, and stored as one JPEG per page: no text
layer, so a reader needs OCR. Everything is seeded, so the same library versions give the same bytes.

Next to the docs folder it writes ``scans_truth.json``: per scan page its source (PDF, page), skew
angle and the source page's text in PyMuPDF's reading order, for measuring OCR words-in-order.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pymupdf
from PIL import Image

DPI = 150
SEED = 20261201
TRUTH_NAME = "scans_truth.json"


@dataclass(frozen=True)
class Scan:
    """One scan: its name in the docs folder and the source pages (1-based physical) it is made of."""

    name: str
    source: str  # a fetch.SCAN_SOURCES name
    pages: tuple[int, ...]
    title: str
    sha256: str  # of the scan made with the pinned pymupdf/pillow/numpy (requirements.txt)


SCANS: tuple[Scan, ...] = (
    Scan("scans/scan_a.pdf", "octave.pdf", (32, 33, 34), "GNU Octave manual, command line options (scanned)",
         "d95c862cd4be4df2a2b94b5c959d56af99bc6d236f32c50021eb05e67839055a"),
    Scan("scans/scan_b.pdf", "essay.pdf", (3, 13, 23), "LilyPond essay on music engraving (scanned)",
         "e70c20eb571140986a4378154d2f46662793a91bdc4627160576740a7b9dcd09"),
)
SCAN_NAMES = tuple(s.name for s in SCANS)


class ScanError(RuntimeError):
    """A scan came out with other bytes than pinned (other library versions): OCR figures would differ."""


def truth_path(docs: Path) -> Path:
    """Where the scans' source text goes: beside the docs folder, not inside it (it is not a document)."""
    return docs.parent / TRUTH_NAME


def scans_ready(docs: Path) -> bool:
    """True when every scan and the truth file exist and both agree with the pinned sha256."""
    path = truth_path(docs)
    if not path.is_file():
        return False
    try:
        truth = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    for scan in SCANS:
        target = docs / scan.name
        entry = truth.get(scan.name)
        if not target.is_file() or not isinstance(entry, dict):
            return False
        if hashlib.sha256(target.read_bytes()).hexdigest() != scan.sha256 or entry.get("sha256") != scan.sha256:
            return False
    return True


def scan_page(page: pymupdf.Page, angle: float, rng: np.random.Generator) -> bytes:
    """Render ``page`` like a cheap scanner (grey, skewed, grainy, speckled) and return a JPEG."""
    zoom = DPI / 72
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom).prerotate(angle), colorspace=pymupdf.csGRAY,
                          alpha=False)
    grey = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.stride)[:, : pix.width]
    noisy = grey.astype(np.float32) + rng.normal(0.0, 9.0, grey.shape).astype(np.float32)
    count = grey.size // 2500
    ys, xs = rng.integers(0, pix.height - 1, count), rng.integers(0, pix.width - 1, count)
    noisy[ys, xs] = rng.integers(40, 170, count)
    noisy[ys + 1, xs] = noisy[ys, xs]
    image = Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8), mode="L")
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=70)
    return out.getvalue()


def make_scans(sources: Path, docs: Path) -> dict[str, dict]:
    """Write every scan into ``docs`` and the truth JSON beside it; return the truth."""
    rng = np.random.default_rng(SEED)
    angles = random.Random(SEED)
    truth: dict[str, dict] = {}
    for scan in SCANS:
        src = pymupdf.open(sources / scan.source)
        out = pymupdf.open()
        pages = []
        for number in scan.pages:
            page = src[number - 1]
            angle = round(angles.uniform(0.2, 1.0) * angles.choice((-1, 1)), 2)
            jpeg = scan_page(page, angle, rng)
            new = out.new_page(width=page.rect.width, height=page.rect.height)
            new.insert_image(new.rect, stream=jpeg)
            pages.append({"page": len(pages) + 1, "source": scan.source, "source_page": number,
                          "skew_degrees": angle, "text": page.get_text("text")})
        src.close()
        out.set_metadata({"title": scan.title, "author": "", "subject": "", "keywords": "",
                          "creator": "madqa realdocs make_scans.py", "producer": "PyMuPDF",
                          "creationDate": "D:20261201000000Z", "modDate": "D:20261201000000Z"})
        data = out.tobytes(garbage=4, deflate=True, no_new_id=True)
        out.close()
        digest = hashlib.sha256(data).hexdigest()
        if digest != scan.sha256:
            raise ScanError(f"{scan.name}: sha256 mismatch: expected {scan.sha256}, got {digest}; the scan is "
                            "made with other pymupdf/pillow/numpy versions than requirements.txt pins")
        target = docs / scan.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        truth[scan.name] = {"sha256": digest, "dpi": DPI, "seed": SEED, "pages": pages}
    truth_path(docs).write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return truth
