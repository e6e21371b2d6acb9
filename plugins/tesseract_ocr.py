"""Page reader ``ocr``: Tesseract through PyMuPDF, for pages with no usable text layer.

The text keeps Tesseract's own reading order (its blocks, lines within a block, words within a
line) instead of regrouping words by their baselines: on a slightly rotated scan a long line's end
sits lower than its start, and baseline grouping moved it into the next line
(``bench/ocr_order.py`` measures it). ``ocr_words`` gives the same words with their boxes, in
that order, for highlighting.
"""

from __future__ import annotations

import glob
import math
import os
import shutil
from typing import Any, NamedTuple

import madqa

os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # Tesseract's OpenMP threads make it ~10x slower here
MAX_OCR_PIXELS = 20_000_000  # about A3 at 300 dpi (~350 MB while OCR runs); a 3000 pt square page at 300 dpi took 2 GB
MAX_OCR_SIDE = 30_000  # Tesseract refuses images taller or wider than 32767 pixels


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


class TesseractReader:
    """OCRs a whole page image; slow (about a second a page), so only used when needed."""

    def __init__(self, language: str = "eng", dpi: int = 300) -> None:
        self.tessdata = find_tessdata()
        if self.tessdata is None or shutil.which("tesseract") is None:
            raise madqa.PluginError("Tesseract is not installed (Debian: apt install tesseract-ocr tesseract-ocr-eng)")
        missing = [lang for lang in language.split("+")
                   if not os.path.isfile(os.path.join(self.tessdata, f"{lang}.traineddata"))]
        if missing:
            raise madqa.PluginError(f"Tesseract has no language data for {', '.join(missing)}")
        self.language = language
        self.dpi = dpi

    def textpage(self, page: Any) -> Any:
        """The OCR text page of ``page`` (a PyMuPDF TextPage), Tesseract run once."""
        dpi = ocr_dpi(page.rect.width, page.rect.height, self.dpi)
        return page.get_textpage_ocr(language=self.language, dpi=dpi, full=True, tessdata=self.tessdata)

    def read(self, page: Any, file: str, number: int) -> str | None:
        return ocr_text(ocr_words(page, self.textpage(page)))

    def read_words(self, page: Any) -> list[OcrWord]:
        """The page's OCR words with their boxes (PDF points), in reading order."""
        return ocr_words(page, self.textpage(page))


class OcrWord(NamedTuple):
    """One OCR word: its box in PDF points, its text, and its block and line in Tesseract's order."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    block: int
    line: int


def ocr_words(page: Any, textpage: Any) -> list[OcrWord]:
    """The words of an OCR text page in Tesseract's order (block, line, word), not re-sorted."""
    words = page.get_text("words", textpage=textpage, sort=False)
    words.sort(key=lambda w: (w[5], w[6], w[7]))  # as written; stable when already in order
    return [OcrWord(*w[:5], w[5], w[6]) for w in words]


def ocr_text(words: list[OcrWord]) -> str:
    """One text line per OCR line, a blank line between blocks. A line of the same block that sits
    on the previous line's row, to its right (a form's ``Firmware version:`` and ``4.7.2``, which
    Tesseract reads as two lines), continues that text line, so a label stays beside its value."""
    lines: list[list[OcrWord]] = []
    for w in words:
        if lines and (lines[-1][0].block, lines[-1][0].line) == (w.block, w.line):
            lines[-1].append(w)
        else:
            lines.append([w])
    out: list[str] = []
    prev: list[OcrWord] | None = None
    for line in lines:
        if prev is not None:
            out.append("\n\n" if line[0].block != prev[0].block else " " if _same_row(prev, line) else "\n")
        out.append(" ".join(w.text for w in line))
        prev = line
    return "".join(out)


def _same_row(left: list[OcrWord], right: list[OcrWord]) -> bool:
    """True when ``right`` starts after ``left`` ends and the two overlap by half a line's height."""
    top = max(min(w.y0 for w in left), min(w.y0 for w in right))
    bottom = min(max(w.y1 for w in left), max(w.y1 for w in right))
    height = min(max(w.y1 for w in left) - min(w.y0 for w in left), max(w.y1 for w in right) - min(w.y0 for w in right))
    return min(w.x0 for w in right) >= max(w.x1 for w in left) - 1.0 and bottom - top >= 0.5 * max(height, 0.1)


def ocr_dpi(width_pt: float, height_pt: float, dpi: int) -> int:
    """``dpi``, lowered for a huge page so its image stays within MAX_OCR_PIXELS and MAX_OCR_SIDE.

    PDF pages may be up to 200 inches a side; rendered at 300 dpi for OCR such a page would need
    gigabytes. Text that large stays readable at the lower resolution.
    """
    width_in, height_in = max(width_pt, 1.0) / 72, max(height_pt, 1.0) / 72
    cap = min(math.sqrt(MAX_OCR_PIXELS / (width_in * height_in)), MAX_OCR_SIDE / max(width_in, height_in))
    return max(1, min(dpi, math.floor(cap)))


@madqa.hookimpl(trylast=True)
def register_page_readers(register: madqa.Register) -> None:
    def factory(options: dict[str, Any]) -> TesseractReader:
        return TesseractReader(options.get("language", "eng"), int(options.get("dpi", 300)))

    register("ocr", factory, "Tesseract OCR of the rendered page (tesseract-ocr)")
