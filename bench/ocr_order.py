"""OCR reading order on skewed scans: words in the source's order, per way of ordering OCR words.

    python bench/ocr_order.py                       # generated wide pages, rotations 0.2-1 degree
    python bench/ocr_order.py --pdf FILE --pages 3,40 --angles 0.3,-0.7
    python bench/ocr_order.py --truth bench/.cache/realdocs/scans_truth.json   # the dev set's own scans

Each page is rasterised at 150 DPI, rotated by the angle, given Gaussian noise, and wrapped as an
image-only PDF page (or, with ``--truth``, the scans of ``data/realdocs`` are taken as they are,
against the source text recorded beside them); that page is OCR'd once (Tesseract through PyMuPDF, ``--ocr-dpi``) and its
words ordered three ways: Tesseract's own block/line order (what ``madqa/ocr.py``
returns), MuPDF's ``sort=True`` (what it returned before), and baseline regrouping
(``madqa_plugins/readers/text_layer.visual_lines``). Words in order = the longest common subsequence of the
source's words and the OCR's, over the source's word count. Prints JSON; nothing here asserts.
"""

from __future__ import annotations

import argparse
import difflib
import io
import json
import os
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

import numpy as np  # noqa: E402
import pymupdf  # noqa: E402
from PIL import Image  # noqa: E402

from madqa.ocr import textpage_words  # noqa: E402
from madqa_plugins.readers.tesseract_ocr import TesseractReader  # noqa: E402
from madqa_plugins.readers.text_layer import visual_lines  # noqa: E402

_WORD = re.compile(r"\w+")


def skewed_scan(page: pymupdf.Page, angle: float, dpi: int = 150, noise: float = 18.0, seed: int = 1) -> bytes:
    """An image-only one-page PDF: ``page`` rasterised at ``dpi``, rotated ``angle`` degrees, with noise."""
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    img = Image.frombytes("L", (pix.width, pix.height), pix.samples)
    img = img.rotate(angle, resample=Image.BICUBIC, expand=False, fillcolor=255)
    arr = np.asarray(img).astype(np.float32) + np.random.default_rng(seed).normal(0, noise, (img.height, img.width))
    buf = io.BytesIO()
    Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)).save(buf, format="PNG")
    doc = pymupdf.open()
    out = doc.new_page(width=page.rect.width, height=page.rect.height)
    out.insert_image(out.rect, stream=buf.getvalue())
    return doc.tobytes()


def words_in_order(source: str, ocr: str) -> float:
    """Share of the source's words the OCR text has in the same order (LCS / source words)."""
    truth, got = _WORD.findall(source.lower()), _WORD.findall(ocr.lower())
    if not truth:
        return 1.0
    blocks = difflib.SequenceMatcher(None, truth, got, autojunk=False).get_matching_blocks()
    return sum(b.size for b in blocks) / len(truth)


def wide_page(lines: int = 30, seed: int = 7) -> pymupdf.Document:
    """A landscape page of long lines of distinct words: where skew moves a line's end into the next."""
    rng = np.random.default_rng(seed)
    vocab = [w for w in re.findall(r"[a-z]{4,9}", Path(__file__).read_text().lower())]
    text = "\n".join(" ".join(rng.choice(vocab, 16)) for _ in range(lines))
    doc = pymupdf.open()
    page = doc.new_page(width=842, height=595)
    page.insert_textbox(pymupdf.Rect(30, 30, 812, 575), text, fontsize=11, lineheight=1.25)
    return doc


def measure(page: pymupdf.Page, angle: float, reader: TesseractReader) -> dict[str, float]:
    scan = pymupdf.open("pdf", skewed_scan(page, angle))
    return {"angle": angle, **order_scores(scan[0], page.get_text("text"), reader)}


def order_scores(scanned: pymupdf.Page, source: str, reader: TesseractReader) -> dict[str, float]:
    """Words in order of one OCR run of ``scanned``, ordered each of the three ways."""
    started = time.perf_counter()
    textpage = scanned.get_textpage_ocr(language=reader.language, dpi=reader.dpi, full=True, tessdata=reader.tessdata)
    seconds = time.perf_counter() - started
    words = scanned.get_text("words", textpage=textpage)
    return {
        "tesseract_order": round(words_in_order(source, " ".join(w.text for w in textpage_words(scanned, textpage))), 3),
        "mupdf_sort": round(words_in_order(source, scanned.get_text("text", textpage=textpage, sort=True)), 3),
        "baseline_regrouping": round(words_in_order(source, visual_lines(words)), 3),
        "ocr_seconds": round(seconds, 1),
    }


def truth_rows(truth_file: Path, reader: TesseractReader) -> list[dict]:
    """Every page of the dev set's scans (``scans_truth.json`` beside its docs folder)."""
    truth = json.loads(truth_file.read_text(encoding="utf-8"))
    rows = []
    for name, scan in truth.items():
        with pymupdf.open(truth_file.parent / "docs" / name) as doc:
            for entry in scan["pages"]:
                rows.append({"page": f"{name} p{entry['page']}", "angle": entry["skew_degrees"],
                             **order_scores(doc[entry["page"] - 1], entry["text"], reader)})
                print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdf", help="a real PDF to take pages from (default: a generated wide page)")
    parser.add_argument("--pages", default="1", help="1-based page numbers of --pdf")
    parser.add_argument("--angles", default="0.2,0.5,-0.7,1.0")
    parser.add_argument("--ocr-dpi", type=int, default=300)
    parser.add_argument("--truth", help="scans_truth.json of data/realdocs: measure its scans instead")
    args = parser.parse_args()
    reader = TesseractReader("eng", args.ocr_dpi)
    doc = pymupdf.open(args.pdf) if args.pdf else wide_page()
    rows = truth_rows(Path(args.truth), reader) if args.truth else []
    for number in ([] if args.truth else [int(n) for n in args.pages.split(",")] if args.pdf else [1]):
        for angle in (float(a) for a in args.angles.split(",")):
            rows.append({"page": number, **measure(doc[number - 1], angle, reader)})
            print(json.dumps(rows[-1]), file=sys.stderr)
    keys = ("tesseract_order", "mupdf_sort", "baseline_regrouping")
    print(json.dumps({"pdf": args.truth or args.pdf or "generated wide page", "ocr_dpi": args.ocr_dpi, "rows": rows,
                      "mean": {k: round(sum(r[k] for r in rows) / len(rows), 3) for k in keys}}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
