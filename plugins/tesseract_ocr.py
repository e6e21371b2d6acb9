"""Page reader ``ocr``: Tesseract through PyMuPDF, for pages with no usable text layer."""

from __future__ import annotations

import glob
import math
import os
import shutil
from typing import Any

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

    def read(self, page: Any, file: str, number: int) -> str | None:
        dpi = ocr_dpi(page.rect.width, page.rect.height, self.dpi)
        textpage = page.get_textpage_ocr(language=self.language, dpi=dpi, full=True, tessdata=self.tessdata)
        return page.get_text("text", textpage=textpage, sort=True)


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
