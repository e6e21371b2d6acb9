"""Page images under a pixel budget, memoized in a diskcache keyed by content hash and parameters.

Pages are drawn by ``page_drawer``'s worker processes, under CPU-time and memory limits, never in the
caller's process (MuPDF holds the GIL while it draws: a costly page drawn in the web app stopped every
visitor's requests). A page that cannot be drawn within the limits is remembered, by content hash, page and
limits, so it is not tried again for the next request, the thumbnail or the page viewer.
"""

from __future__ import annotations

import io
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import diskcache

from madqa import page_drawer
from madqa.corpus import Corpus, DocumentRecord
from madqa.errors import CorpusError, PageLimitError, RenderError
from madqa.highlight import Box, Highlight, words_key
from madqa.page_drawer import MAX_ZOOM, DrawLimits, encode, fit_zoom  # noqa: F401 - where they used to live
from madqa.settings import Settings, image_budget_px

MIME = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}
BOX_STYLE = {  # kind -> (fill RGBA, outline RGBA, outline width px): a marker over the quote, a frame round the answer
    "quote": ((255, 221, 0, 80), (224, 160, 0, 255), 2),
    "answer": ((255, 96, 0, 40), (214, 40, 0, 255), 3),
}
_RENDER_VERSION = 1  # bump when rendering changes, so old cache entries are not served
_REFUSED_VERSION = 1  # bump when the drawing limits change meaning, so remembered failures are retried
REMEMBERED = 4096  # failures also kept in this process (when the page cache cannot be used)
_caches: dict[str, diskcache.Cache] = {}
_caches_lock = threading.Lock()
_warned: set[str] = set()
_refused: OrderedDict[str, str] = OrderedDict()
T = TypeVar("T")


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


def render_uncached(path: Path, page: int, budget_px: int, fmt: str, limits: DrawLimits | None = None,
                    file: str | None = None) -> PageImage:
    """Page ``page`` (1-based) of the PDF at ``path``, fitting ``budget_px`` pixels, drawn by a drawer process
    under ``limits`` (RenderError, PageLimitError past the limits). ``file`` names it in errors."""
    data, width, height = page_drawer.draw(Path(path), file or Path(path).name, page, budget_px, fmt,
                                           limits or DrawLimits())
    return PageImage(data, fmt, width, height)


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
    """The image of a corpus page, from the cache when rendered before with the same parameters; ``budget_px``
    None: the image budget the settings give (``madqa.settings.image_budget_px``)."""
    budget_px = image_budget_px(settings, chosen=budget_px)
    fmt = fmt or settings.image_format
    if fmt not in MIME:
        raise RenderError(f"unknown image format {fmt!r} (png, jpeg or webp)")
    doc = _document_page(corpus, file, page)
    key = f"v{_RENDER_VERSION}:{doc.sha256}:{page}:{budget_px}:{fmt}"
    limits = DrawLimits.from_settings(settings)
    try:
        cache = page_cache(settings)
        hit = cache.get(key)
        if hit is not None:
            return PageImage(*hit)
    except Exception as exc:  # a truncated cache.db or .val file: render without the cache, and say so
        image = _drawn(None, doc, page, limits,
                       lambda: render_uncached(corpus.pdf_path(file), page, budget_px, fmt, limits, file))
        return replace(image, note=_damaged(settings, exc))
    image = _drawn(cache, doc, page, limits,
                   lambda: render_uncached(corpus.pdf_path(file), page, budget_px, fmt, limits, file))
    try:
        cache.set(key, (image.data, image.fmt, image.width, image.height))
    except Exception as exc:
        return replace(image, note=_damaged(settings, exc))
    return image


def _drawn(cache: diskcache.Cache | None, doc: DocumentRecord, page: int, limits: DrawLimits,
           draw: Callable[[], T]) -> T:
    """``draw()``, unless this page was found not drawable within ``limits`` before: then, and when it is now,
    PageLimitError (remembered in ``cache`` and in this process)."""
    key = f"refused-v{_REFUSED_VERSION}:{doc.sha256}:{page}:{limits.memory_mb}:{limits.timeout_s:g}:" \
          f"{limits.max_image_mp:g}"
    with _caches_lock:
        reason = _refused.get(key)
    if reason is None and cache is not None:
        try:
            reason = cache.get(key)
        except Exception:  # a damaged cache: this process's memory still holds what it saw
            reason = None
    if isinstance(reason, str):
        raise PageLimitError(reason)
    try:
        return draw()
    except PageLimitError as exc:
        with _caches_lock:
            _refused[key] = str(exc)
            while len(_refused) > REMEMBERED:
                _refused.popitem(last=False)
        if cache is not None:
            try:
                cache.set(key, str(exc))
            except Exception:
                pass  # remembered in this process; the damaged cache is reported with the page's image
        raise


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
    return _marked(corpus, file, page, settings, quotes, answers)[0]


def _marked(corpus: Corpus, file: str, page: int, settings: Settings, quotes: Sequence[str],
            answers: Sequence[str]) -> tuple[Highlight, float]:
    """(the highlight, the page's width in points), found by a drawer process."""
    doc = _document_page(corpus, file, page)
    limits = DrawLimits.from_settings(settings)
    cache_key = f"{doc.sha256}:{page}"
    words = words_key(cache_key, settings.ocr_language, settings.ocr_dpi)
    try:
        opened = page_cache(settings)
        hit = opened.get(words)
        cache: diskcache.Cache | None = opened
    except Exception as exc:  # a damaged cache: the words are found again, the damage logged once
        _damaged(settings, exc)
        cache, hit = None, None
    found = {words: hit} if hit is not None else {}
    boxes, source, missing, width, added = _drawn(cache, doc, page, limits, lambda: page_drawer.mark(
        corpus.pdf_path(file), file, page, corpus.page_source(file, page), settings.ocr_language,
        settings.ocr_dpi, cache_key, found, quotes, answers, limits))
    for key, value in added.items():
        try:
            if cache is not None:
                cache.set(key, value)
        except Exception as exc:  # the boxes are found again next time; the damage logged once
            _damaged(settings, exc)
            break
    return Highlight(tuple(Box(*b) for b in boxes), source, tuple(missing)), width


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
    highlight, width = _marked(corpus, file, page, settings, quotes, answers)
    if not highlight.boxes:
        return image, highlight
    return draw_boxes(image, highlight.boxes, width), highlight
