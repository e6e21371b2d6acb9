"""Page reader ``ocr``: Tesseract through PyMuPDF, for pages with no usable text layer.

The text keeps Tesseract's own reading order (its blocks, lines within a block, words within a
line) instead of regrouping words by their baselines: on a slightly rotated scan a long line's end
sits lower than its start, and baseline grouping moved it into the next line
(``bench/ocr_order.py`` measures it). The words come from madqa's one OCR word reader
(``madqa.ocr_words``, which caps the resolution of huge pages), the same the highlights use.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import madqa

os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # Tesseract's OpenMP threads make it ~10x slower here


class TesseractReader:
    """OCRs a whole page image; slow (about a second a page), so only used when needed."""

    def __init__(self, language: str = "eng", dpi: int = 300) -> None:
        tessdata = madqa.find_tessdata()
        if tessdata is None or shutil.which("tesseract") is None:
            raise madqa.PluginError("Tesseract is not installed (Debian: apt install tesseract-ocr tesseract-ocr-eng)")
        missing = [lang for lang in language.split("+")
                   if not os.path.isfile(os.path.join(tessdata, f"{lang}.traineddata"))]
        if missing:
            raise madqa.PluginError(f"Tesseract has no language data for {', '.join(missing)}")
        self.tessdata: str = tessdata
        self.language = language
        self.dpi = dpi

    def read(self, page: Any, file: str, number: int) -> str | None:
        return ocr_text(self.read_words(page))

    def read_words(self, page: Any) -> list[madqa.OcrWord]:
        """The page's OCR words with their boxes (PDF points), in reading order (Tesseract run once)."""
        return madqa.ocr_words(page, self.language, self.dpi, self.tessdata)


def ocr_text(words: list[madqa.OcrWord]) -> str:
    """One text line per OCR line, a blank line between blocks. A line of the same block that sits
    on the previous line's row, to its right (a form's ``Firmware version:`` and ``4.7.2``, which
    Tesseract reads as two lines), continues that text line, so a label stays beside its value."""
    lines: list[list[madqa.OcrWord]] = []
    for w in words:
        if lines and (lines[-1][0].block, lines[-1][0].line) == (w.block, w.line):
            lines[-1].append(w)
        else:
            lines.append([w])
    out: list[str] = []
    prev: list[madqa.OcrWord] | None = None
    for line in lines:
        if prev is not None:
            out.append("\n\n" if line[0].block != prev[0].block else " " if _same_row(prev, line) else "\n")
        out.append(" ".join(w.text for w in line))
        prev = line
    return "".join(out)


def _same_row(left: list[madqa.OcrWord], right: list[madqa.OcrWord]) -> bool:
    """True when ``right`` starts after ``left`` ends and the two overlap by half a line's height."""
    top = max(min(w.y0 for w in left), min(w.y0 for w in right))
    bottom = min(max(w.y1 for w in left), max(w.y1 for w in right))
    height = min(max(w.y1 for w in left) - min(w.y0 for w in left), max(w.y1 for w in right) - min(w.y0 for w in right))
    return min(w.x0 for w in right) >= max(w.x1 for w in left) - 1.0 and bottom - top >= 0.5 * max(height, 0.1)


@madqa.hookimpl(trylast=True)
def register_page_readers(register: madqa.Register) -> None:
    def factory(host: madqa.Host, options: dict[str, Any]) -> TesseractReader:
        return TesseractReader(options.get("language", "eng"), int(options.get("dpi", 300)))

    register("ocr", factory, "Tesseract OCR of the rendered page (tesseract-ocr)", takes_host=True)
