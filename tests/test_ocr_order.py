"""OCR reading order on a skewed, noisy scan we make: Tesseract's own order keeps lines whole."""

from __future__ import annotations

import pymupdf
import pytest

from bench.ocr_order import skewed_scan, words_in_order
from madqa import OcrWord, find_tessdata
from madqa_plugins.readers.tesseract_ocr import TesseractReader, ocr_text

LINES = [
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike",
    "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee",
    "zulu amber basalt cobalt dune ember fjord granite harbor island jasper kelp lagoon",
    "meadow nectar orchid pebble quartz river summit thicket upland valley willow yarrow",
]


@pytest.fixture(scope="module")
def scanned():
    if find_tessdata() is None:
        pytest.skip("Tesseract is not installed (scripts/install installs it)")
    doc = pymupdf.open()
    page = doc.new_page(width=842, height=240)  # landscape: long lines, where skew moves a line's end down
    page.insert_textbox(pymupdf.Rect(30, 30, 812, 230), "\n".join(LINES), fontsize=12, lineheight=1.3)
    scan = pymupdf.open("pdf", skewed_scan(page, 0.8, dpi=150, noise=18.0))
    return page.get_text("text"), scan[0]


def test_ocr_of_a_skewed_scan_keeps_the_source_word_order(scanned):
    source, page = scanned
    reader = TesseractReader("eng", 150)
    text = reader.read(page, "scan.pdf", 1)
    assert words_in_order(source, text) >= 0.9, text
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines[0].split()[0].lower().startswith("alpha") and lines[-1].split()[-1].lower().startswith("yarrow")


def test_ocr_words_come_with_boxes_in_reading_order(scanned):
    _, page = scanned
    words = TesseractReader("eng", 150).read_words(page)
    assert words and all(isinstance(w, OcrWord) and w.x1 > w.x0 and w.y1 > w.y0 for w in words)
    assert [(w.block, w.line) for w in words] == sorted((w.block, w.line) for w in words)
    assert ocr_text(words).split() == [w.text for w in words]


def test_ocr_text_joins_lines_and_blocks():
    words = [OcrWord(0, 0, 1, 1, "a", 0, 0), OcrWord(2, 0, 3, 1, "b", 0, 0), OcrWord(0, 2, 1, 3, "c", 0, 1),
             OcrWord(0, 9, 1, 10, "d", 1, 0)]
    assert ocr_text(words) == "a b\nc\n\nd"
