"""Page images under a pixel budget, memoized in a diskcache keyed by content hash and parameters."""

from __future__ import annotations

import io
import logging
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import diskcache
import pymupdf

from madqa.corpus import Corpus, DocumentRecord
from madqa.errors import CorpusError, RenderError
from madqa.highlight import Box, Highlight, displayed, locate, page_words
from madqa.settings import Settings

MAX_ZOOM = 300 / 72  # never upscale a small page past 300 dpi
MIME = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}
BOX_STYLE = {  # kind -> (fill RGBA, outline RGBA, outline width px): a marker over the quote, a frame round the answer
    "quote": ((255, 221, 0, 80), (224, 160, 0, 255), 2),
    "answer": ((255, 96, 0, 40), (214, 40, 0, 255), 3),
}
_RENDER_VERSION = 1  # bump when rendering changes, so old cache entries are not served
_caches: dict[str, diskcache.Cache] = {}
_caches_lock = threading.Lock()
_warned: set[str] = set()


@dataclass(frozen=True)
class PageImage:
    """An encoded page image with its size in pixels."""

    data: bytes
    fmt: str
    width: int
    height: int
    note: str | None = None  # e.g. the page-image cache is damaged, so this was rendered without it

    @property
    def mime(self) -> str:
        return MIME[self.fmt]


def page_cache(settings: Settings) -> diskcache.Cache:
    """The process-wide page-image cache under ``MADQA_HOME/cache/pages`` (one per folder)."""
    folder = str(Path(settings.cache_dir) / "pages")
    with _caches_lock:
        cache = _caches.get(folder)
        if cache is None:
            cache = _caches[folder] = diskcache.Cache(folder, size_limit=settings.cache_size_mb * 2**20)
        return cache


def fit_zoom(width_pt: float, height_pt: float, budget_px: int) -> float:
    """The zoom that makes a page of this size (points) fit within ``budget_px`` pixels."""
    area = max(width_pt, 1.0) * max(height_pt, 1.0)
    return min(MAX_ZOOM, math.sqrt(budget_px / area))


def encode(pix: pymupdf.Pixmap, fmt: str, quality: int = 85) -> bytes:
    if fmt == "png":
        return pix.tobytes("png")
    if fmt == "jpeg":
        return pix.tobytes("jpeg", jpg_quality=quality)
    if fmt == "webp":
        from PIL import Image

        image = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
        out = io.BytesIO()
        image.save(out, format="WEBP", quality=quality, method=4)
        return out.getvalue()
    raise RenderError(f"unknown image format {fmt!r} (png, jpeg or webp)")


def render_uncached(path: Path, page: int, budget_px: int, fmt: str) -> PageImage:
    """Render page ``page`` (1-based) of the PDF at ``path`` to fit ``budget_px`` pixels."""
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:
        raise RenderError(f"{path.name} cannot be opened ({exc})") from None
    with doc:
        if not 1 <= page <= doc.page_count:
            raise RenderError(f"{path.name} has {doc.page_count} pages; page {page} does not exist")
        pdf_page = doc.load_page(page - 1)
        rect = pdf_page.rect
        zoom = fit_zoom(rect.width, rect.height, budget_px)
        # round the zoom down until the integer pixel size is within budget
        while zoom > 0.01 and math.ceil(rect.width * zoom) * math.ceil(rect.height * zoom) > budget_px:
            zoom *= 0.995
        pix = pdf_page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False, colorspace=pymupdf.csRGB)
        return PageImage(encode(pix, fmt), fmt, pix.width, pix.height)


def _document_page(corpus: Corpus, file: str, page: int) -> DocumentRecord:
    """The corpus's record of ``file``, once ``page`` is known to be one of its pages (RenderError if not)."""
    try:
        doc = corpus.document(file)
    except CorpusError as exc:
        raise RenderError(str(exc)) from None
    if not isinstance(page, int) or not 1 <= page <= doc.pages:
        raise RenderError(f"{file} has {doc.pages} pages; page {page} does not exist")
    return doc


def render_page(corpus: Corpus, file: str, page: int, settings: Settings,
                budget_px: int | None = None, fmt: str | None = None) -> PageImage:
    """The image of a corpus page, from the cache when rendered before with the same parameters."""
    budget_px = budget_px or settings.image_budget_px
    fmt = fmt or settings.image_format
    if fmt not in MIME:
        raise RenderError(f"unknown image format {fmt!r} (png, jpeg or webp)")
    doc = _document_page(corpus, file, page)
    key = f"v{_RENDER_VERSION}:{doc.sha256}:{page}:{budget_px}:{fmt}"
    try:
        cache = page_cache(settings)
        hit = cache.get(key)
        if hit is not None:
            return PageImage(*hit)
    except Exception as exc:  # a truncated cache.db or .val file: render without the cache, and say so
        return replace(render_uncached(corpus.pdf_path(file), page, budget_px, fmt), note=_damaged(settings, exc))
    image = render_uncached(corpus.pdf_path(file), page, budget_px, fmt)
    try:
        cache.set(key, (image.data, image.fmt, image.width, image.height))
    except Exception as exc:
        return replace(image, note=_damaged(settings, exc))
    return image


def _damaged(settings: Settings, exc: Exception) -> str:
    """The note for a page rendered without the cache; logged once per cache folder."""
    folder = Path(settings.cache_dir) / "pages"
    note = (f"the page-image cache at {folder} is damaged ({type(exc).__name__}: {exc}); pages are rendered "
            "without it (delete that folder to start a new cache)")
    with _caches_lock:
        if str(folder) not in _warned:
            _warned.add(str(folder))
            logging.getLogger("madqa.render").warning("%s", note)
    return note


# --- highlights ---------------------------------------------------------------------------------


def page_highlight(corpus: Corpus, file: str, page: int, settings: Settings, quotes: Sequence[str] = (),
                   answers: Sequence[str] = ()) -> Highlight:
    """The boxes of ``quotes`` and ``answers`` on a corpus page, from its text layer or (for a page whose
    text was OCR'd) Tesseract's word boxes, which are cached like page images."""
    doc = _document_page(corpus, file, page)
    try:
        pdf = pymupdf.open(corpus.pdf_path(file), filetype="pdf")
    except Exception as exc:
        raise RenderError(f"{file} cannot be opened ({exc})") from None
    with pdf:
        pdf_page = pdf.load_page(page - 1)
        words, source = page_words(pdf_page, corpus.page_source(file, page), settings.ocr_language,
                                   settings.ocr_dpi, page_cache(settings), f"{doc.sha256}:{page}")
        boxes, missing = locate(words, quotes, answers)
        return Highlight(tuple(displayed(boxes, pdf_page)), source, tuple(missing))


def draw_boxes(image: PageImage, boxes: tuple[Box, ...] | list[Box], page_width_pt: float) -> PageImage:
    """``image`` with the boxes drawn on it (quote boxes under answer boxes), encoded as before."""
    from PIL import Image, ImageDraw

    if not boxes:
        return image
    zoom = image.width / max(page_width_pt, 1.0)
    base = Image.open(io.BytesIO(image.data)).convert("RGBA")
    layer = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    for kind in ("quote", "answer"):
        fill, outline, width = BOX_STYLE[kind]
        pad = 2 if kind == "quote" else 3
        for box in boxes:
            if box.kind == kind:
                x0, y0, x1, y1 = box.scaled(zoom)
                draw.rectangle((x0 - pad, y0 - pad, x1 + pad, y1 + pad), fill=fill, outline=outline, width=width)
    out = Image.alpha_composite(base, layer).convert("RGB")
    buffer = io.BytesIO()
    out.save(buffer, format={"png": "PNG", "jpeg": "JPEG", "webp": "WEBP"}[image.fmt],
             **({} if image.fmt == "png" else {"quality": 85}))
    return PageImage(buffer.getvalue(), image.fmt, image.width, image.height)


def render_highlighted(corpus: Corpus, file: str, page: int, settings: Settings, quotes: Sequence[str] = (),
                       answers: Sequence[str] = (), budget_px: int | None = None,
                       fmt: str | None = None) -> tuple[PageImage, Highlight]:
    """The page image (from the cache) with the quotes and answer words boxed, and the boxes drawn."""
    image = render_page(corpus, file, page, settings, budget_px=budget_px, fmt=fmt)
    highlight = page_highlight(corpus, file, page, settings, quotes, answers)
    if not highlight.boxes:
        return image, highlight
    with pymupdf.open(corpus.pdf_path(file), filetype="pdf") as pdf:
        width = pdf.load_page(page - 1).rect.width
    return draw_boxes(image, highlight.boxes, width), highlight
