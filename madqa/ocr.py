"""OCR word reading: Tesseract through PyMuPDF's OCR text page, one reader for the whole house.

The ``ocr`` page reader (``madqa_plugins/readers/tesseract_ocr.py``: page text at ingest) and the highlights
(``highlight.py``: word boxes of an OCR'd page, drawn in a ``page_drawer`` process) both read a page's
words here, so they see the same words from the same resolution, capped for huge pages (``ocr_dpi``:
``MAX_OCR_PIXELS``, and ``MAX_OCR_SIDE``, past which Tesseract refuses the image). Exported on
``madqa``'s public face as ``ocr_words``, ``OcrWord`` and ``find_tessdata``.
"""

from __future__ import annotations

import glob
import math
import os
from typing import Any, NamedTuple

MAX_OCR_PIXELS = 20_000_000  # about A3 at 300 dpi (~350 MB while OCR runs); a 3000 pt square page at 300 dpi took 2 GB
MAX_OCR_SIDE = 30_000  # Tesseract refuses images taller or wider than 32767 pixels


class OcrWord(NamedTuple):
    """One OCR word: its box in PDF points, its text, and its block and line in Tesseract's order."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    block: int
    line: int


def find_tessdata() -> str | None:
    """The tessdata folder: $TESSDATA_PREFIX, else Debian's usual places; None when absent."""
    env = os.environ.get("TESSDATA_PREFIX")
    if env and os.path.isdir(env):
        return env
    for pattern in ("/usr/share/tesseract-ocr/*/tessdata", "/usr/share/tesseract-ocr/tessdata",
                    "/usr/share/tessdata", "/usr/local/share/tessdata"):
        for path in sorted(glob.glob(pattern), reverse=True):
            if os.path.isdir(path):
                return path
    return None


def ocr_dpi(width_pt: float, height_pt: float, dpi: int) -> int:
    """``dpi``, lowered for a huge page so its image stays within MAX_OCR_PIXELS and MAX_OCR_SIDE.

    PDF pages may be up to 200 inches a side; rendered at 300 dpi for OCR such a page would need
    gigabytes. Text that large stays readable at the lower resolution.
    """
    width_in, height_in = max(width_pt, 1.0) / 72, max(height_pt, 1.0) / 72
    cap = min(math.sqrt(MAX_OCR_PIXELS / (width_in * height_in)), MAX_OCR_SIDE / max(width_in, height_in))
    return max(1, min(dpi, math.floor(cap)))


def ocr_words(page: Any, language: str, dpi: int, tessdata: str) -> list[OcrWord]:
    """The words Tesseract reads on a PyMuPDF ``page`` (at ``dpi``, capped by ``ocr_dpi``), with their boxes,
    in Tesseract's order (block, line, word), not re-sorted. Whatever Tesseract raises goes to the caller."""
    textpage = page.get_textpage_ocr(language=language, dpi=ocr_dpi(page.rect.width, page.rect.height, dpi),
                                     full=True, tessdata=tessdata)
    return textpage_words(page, textpage)


def textpage_words(page: Any, textpage: Any) -> list[OcrWord]:
    """The words of an OCR text page already made, in Tesseract's order (block, line, word)."""
    words = page.get_text("words", textpage=textpage, sort=False)
    words.sort(key=lambda w: (w[5], w[6], w[7]))  # as written; stable when already in order
    return [OcrWord(w[0], w[1], w[2], w[3], str(w[4]), w[5], w[6]) for w in words]
