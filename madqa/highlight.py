"""Where a quote and the answer words sit on a page: boxes from word positions.

Word positions come from the PDF's text layer (PyMuPDF's words), or, for a page whose text was
OCR'd at ingest, from Tesseract's word boxes (``madqa.ocr``, the reader the ``ocr`` page reader uses,
at the same capped resolution), so the boxes fall on the pixels a reader sees. A text is found the way quotes are checked (``answer.match_key``: case,
whitespace, ligatures and hyphenation do not matter), across line breaks and in either reading
order (the PDF's own, or top-to-bottom by baseline as the text-layer reader stores it).
Boxes are in PDF points, one per line of a match; ``displayed`` moves them onto a rotated page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pymupdf

from madqa.errors import RenderError
from madqa.ocr import find_tessdata, ocr_words
from madqa.text import match_key

Kind = Literal["quote", "answer"]
MIN_ANSWER_KEY = 3  # shorter answers ("2", "No") are only looked for inside the quote
_VERSION = 2  # bump when word reading changes, so cached OCR words are not reused (2: madqa.ocr's reader)


@dataclass(frozen=True)
class Word:
    """One word and its box in PDF points (unrotated page coordinates, as PyMuPDF gives them)."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str


@dataclass(frozen=True)
class Box:
    """A rectangle to draw on the page, in PDF points; ``kind`` says what it marks."""

    x0: float
    y0: float
    x1: float
    y1: float
    kind: Kind

    def scaled(self, zoom: float) -> tuple[int, int, int, int]:
        """The rectangle in pixels of an image rendered at ``zoom`` pixels per point."""
        return (int(self.x0 * zoom), int(self.y0 * zoom), int(round(self.x1 * zoom)), int(round(self.y1 * zoom)))


@dataclass(frozen=True)
class Highlight:
    """The boxes of a page's highlighted texts, where the words came from, and what was not found."""

    boxes: tuple[Box, ...]
    source: str  # "text" (text layer), "ocr" (Tesseract word boxes) or "none" (no word positions)
    missing: tuple[str, ...] = ()


def text_layer_words(page: pymupdf.Page) -> list[Word]:
    """The words of the PDF's text layer, in the PDF's order."""
    return _words(page, page.get_text("words"))


def ocr_page_words(page: pymupdf.Page, language: str = "eng", dpi: int = 300) -> list[Word]:
    """Tesseract's words of the page image (``madqa.ocr``); RenderError without Tesseract or when it fails."""
    tessdata = find_tessdata()
    if not tessdata:
        raise RenderError("Tesseract is not installed: no word boxes for an OCR'd page")
    try:
        read = ocr_words(page, language, dpi, tessdata)
    # kept broad: Tesseract reads an untrusted page's image (in a drawer process) and fails with several
    # types; such a page gets no boxes, and the caller says so
    except Exception as exc:
        raise RenderError(f"OCR of the page failed ({exc})") from None
    return [Word(w.x0, w.y0, w.x1, w.y1, w.text) for w in read if w.text.strip()]


def _words(page: pymupdf.Page, raw: list[tuple[Any, ...]]) -> list[Word]:
    """PyMuPDF's ``(x0, y0, x1, y1, text, ...)`` word tuples as Words, blank words dropped."""
    return [Word(float(w[0]), float(w[1]), float(w[2]), float(w[3]), str(w[4])) for w in raw if str(w[4]).strip()]


def displayed(boxes: Sequence[Box], page: pymupdf.Page) -> list[Box]:
    """Boxes moved from the unrotated page (where words and lines are found) to the page as displayed."""
    if not page.rotation:
        return list(boxes)
    out = []
    for b in boxes:
        r = pymupdf.Rect(b.x0, b.y0, b.x1, b.y1) * page.rotation_matrix
        out.append(Box(r.x0, r.y0, r.x1, r.y1, b.kind))
    return out


def visual_order(words: list[Word]) -> list[Word]:
    """Words top to bottom by baseline, left to right within a line (the text-layer reader's order)."""
    lines: list[list[Word]] = []
    baseline = tolerance = 0.0
    for word in sorted(words, key=lambda w: (w.y1, w.x0)):
        if not lines or word.y1 - baseline > tolerance:
            lines.append([])
            baseline, tolerance = word.y1, max(1.0, 0.4 * (word.y1 - word.y0))
        lines[-1].append(word)
    return [w for line in lines for w in sorted(line, key=lambda w: w.x0)]


def find_spans(words: list[Word], text: str, within: set[int] | None = None) -> list[list[int]]:
    """Index runs of ``words`` whose letters and digits spell ``text`` (every occurrence).

    A match may start or end inside a word (a quote cut mid-word still marks that word).
    ``within``: only runs made entirely of these word indexes.
    """
    key = match_key(text)
    if not key:
        return []
    keys = [match_key(w.text) for w in words]
    owner: list[int] = []
    for i, k in enumerate(keys):
        owner.extend([i] * len(k))
    stream = "".join(keys)
    runs: list[list[int]] = []
    for m in re.finditer(f"(?={re.escape(key)})", stream):
        run = list(dict.fromkeys(owner[m.start():m.start() + len(key)]))
        if within is None or set(run) <= within:
            runs.append(run)
    return runs


def line_boxes(words: list[Word], run: list[int], kind: Kind) -> list[Box]:
    """One box per line of a run of words (words on one line share a box)."""
    boxes: list[Box] = []
    current: list[Word] = []
    for word in (words[i] for i in run):
        if current and (word.y0 >= current[-1].y1 - 1 or word.x0 < current[-1].x0):  # a new line
            boxes.append(_union(current, kind))
            current = []
        current.append(word)
    if current:
        boxes.append(_union(current, kind))
    return boxes


def _union(words: list[Word], kind: Kind) -> Box:
    return Box(min(w.x0 for w in words), min(w.y0 for w in words), max(w.x1 for w in words),
               max(w.y1 for w in words), kind)


def locate(words: list[Word], quotes: Sequence[str] = (), answers: Sequence[str] = ()) -> tuple[
        list[Box], list[str]]:
    """(boxes, texts not found) for the quotes and the answer words among ``words``.

    Each reading order is tried until a quote is found. Answers are looked for inside the quotes
    first, then (if at least ``MIN_ANSWER_KEY`` letters long) anywhere on the page.
    """
    orders = [words, visual_order(words)]
    boxes: list[Box] = []
    missing: list[str] = []
    inside: dict[int, set[int]] = {0: set(), 1: set()}  # per order: the word indexes inside a found quote
    for quote in (q for q in quotes if match_key(q)):
        for n, order in enumerate(orders):
            runs = find_spans(order, quote)
            if runs:
                boxes += [b for run in runs for b in line_boxes(order, run, "quote")]
                inside[n] |= {i for run in runs for i in run}
                break
        else:
            missing.append(quote)
    for answer in (a for a in answers if match_key(a)):
        found = False
        for n, order in enumerate(orders):  # inside a quote first
            runs = find_spans(order, answer, inside[n]) if inside[n] else []
            boxes += [b for run in runs for b in line_boxes(order, run, "answer")]
            found = found or bool(runs)
        if not found and len(match_key(answer)) >= MIN_ANSWER_KEY:
            for order in orders:
                runs = find_spans(order, answer)
                if runs:
                    boxes += [b for run in runs for b in line_boxes(order, run, "answer")]
                    found = True
                    break
        if not found:
            missing.append(answer)
    return boxes, missing


def page_words(pdf_page: pymupdf.Page, source: str | None, language: str = "eng", dpi: int = 300,
               cache: Any = None, cache_key: str = "") -> tuple[list[Word], str]:
    """(words, where they came from) of a page: the text layer, or OCR when its text came from OCR.

    OCR words are slow (about a second a page), so they are kept in ``cache`` under ``cache_key``.
    A page with neither gives ``([], "none")``.
    """
    if source != "ocr":
        words = text_layer_words(pdf_page)
        # a blank page has nothing to OCR; nor has one the index's OCR found no text on ("none": OCR noise, say,
        # which would cost seconds of OCR on every pick only to find nothing again)
        if words or source in ("text", "blank", "none", None):
            return words, "text" if words else "none"
    key = words_key(cache_key, language, dpi)
    if cache is not None and cache_key:
        hit = cache.get(key)
        if hit is not None:
            return [Word(*w) for w in hit], "ocr"
    try:
        words = ocr_page_words(pdf_page, language, dpi)
    except RenderError:
        return [], "none"
    if cache is not None and cache_key:
        cache.set(key, [(w.x0, w.y0, w.x1, w.y1, w.text) for w in words])
    return words, "ocr"


def words_key(cache_key: str, language: str, dpi: int) -> str:
    """The cache key of a page's OCR words (``cache_key`` names the page: content hash and number)."""
    return f"words-v{_VERSION}:{cache_key}:{language}:{dpi}"
