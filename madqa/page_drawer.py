"""Page images and highlight boxes drawn in a worker process under CPU-time and memory limits (issue 25).

MuPDF holds the GIL while it draws, so a page drawn in the web app's own process stops every other request
until it is done: one small PDF whose pages hold huge images deflated twice, and one question, froze the
app for every visitor for minutes, with memory low enough that no memory cap applied. Here every page
image (for the model, the thumbnails, the page viewer) and every page's word boxes (highlights; an OCR'd
page is drawn for them) come from a *drawer*: a worker of ``madqa.pdf_reader``'s kind (a fresh interpreter
over a socket pair, its address space capped by ``MADQA_PDF_MEMORY_MB``), niced below the server and given
``MADQA_RENDER_TIMEOUT_S`` seconds of CPU per request. A page whose images declare more than
``MADQA_RENDER_MAX_IMAGE_MP`` megapixels is refused before it is drawn. Past a limit the request fails with
``PageLimitError`` ("page N of X could not be drawn within the limits: ...") and the drawer is replaced;
``render.py`` remembers such pages. Drawers are kept warm between requests (``IDLE_DRAWERS``), and at most
``MAX_DRAWING`` requests are drawn at once: more wait for a free drawer.
"""

from __future__ import annotations

import atexit
import io
import math
import os
import resource
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from madqa.errors import PageLimitError, RenderError
from madqa.pdf_reader import ReaderPool, _cpu_budget, _limit_memory, _named, _out_of_memory, _Worker

MAX_ZOOM = 300 / 72  # never upscale a small page past 300 dpi
IDLE_DRAWERS = 2  # drawers kept warm between requests
MAX_DRAWING = max(2, os.cpu_count() or 1)  # requests drawn at once; more wait
RECYCLE_DRAWS = 1000  # a drawer is replaced after this many requests (MuPDF's heap only grows)
NICENESS = 10  # drawers yield the CPU to the server's own threads
WALL_FACTOR = 10  # wall-clock patience, in multiples of the CPU time limit (at least WALL_MIN_S)
WALL_MIN_S = 30.0
POOL = ReaderPool(__name__, idle=IDLE_DRAWERS, recycle=RECYCLE_DRAWS)
_slots = threading.BoundedSemaphore(MAX_DRAWING)
atexit.register(POOL.close)


@dataclass(frozen=True)
class DrawLimits:
    """What drawing one page may cost (MADQA_PDF_MEMORY_MB, MADQA_RENDER_TIMEOUT_S, MADQA_RENDER_MAX_IMAGE_MP)."""

    memory_mb: int = 768
    timeout_s: float = 10.0
    max_image_mp: float = 250.0

    @classmethod
    def from_settings(cls, settings: Any) -> DrawLimits:
        return cls(settings.pdf_memory_mb, settings.render_timeout_s, settings.render_max_image_mp)

    @property
    def wall_s(self) -> float:
        """Seconds a drawer may take by the clock (a drawer that uses no CPU is stopped after this)."""
        return max(WALL_MIN_S, WALL_FACTOR * self.timeout_s)


# --- what a drawer does (in the worker process) ---------------------------------------------------


def fit_zoom(width_pt: float, height_pt: float, budget_px: int) -> float:
    """The zoom that makes a page of this size (points) fit within ``budget_px`` pixels."""
    area = max(width_pt, 1.0) * max(height_pt, 1.0)
    return min(MAX_ZOOM, math.sqrt(budget_px / area))


def encode(pix: Any, fmt: str, quality: int = 85) -> bytes:
    """A pixmap as PNG, JPEG or WebP bytes."""
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


def _page(doc: Any, file: str, page: int, limits: DrawLimits) -> Any:
    """Page ``page`` (1-based) of ``doc``, once its images are known to be drawable (PageLimitError if not)."""
    if not 1 <= page <= doc.page_count:
        raise RenderError(f"{file} has {doc.page_count} pages; page {page} does not exist")
    pdf_page = doc.load_page(page - 1)
    declared = sum(max(int(image[2]), 0) * max(int(image[3]), 0) for image in pdf_page.get_images(full=True))
    if declared > limits.max_image_mp * 1_000_000:
        raise PageLimitError(f"page {page} of {file} could not be drawn within the limits: its images declare "
                             f"{declared / 1_000_000:,.0f} megapixels, more than {limits.max_image_mp:g} "
                             "(MADQA_RENDER_MAX_IMAGE_MP; a decompression bomb?)")
    return pdf_page


def _open(path: Path, file: str) -> Any:
    import pymupdf

    try:
        return pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # kept broad: MuPDF raises several types for a damaged or hostile file
        if _out_of_memory(exc):
            raise
        raise RenderError(f"{file} cannot be opened ({_named(exc, path, file)})") from None


def draw_image(path: str, file: str, page: int, budget_px: int, fmt: str,
               limits: DrawLimits) -> tuple[bytes, int, int]:
    """(encoded image, width, height) of page ``page`` of the PDF at ``path``, fitting ``budget_px`` pixels."""
    import pymupdf

    with _open(Path(path), file) as doc:
        pdf_page = _page(doc, file, page, limits)
        rect = pdf_page.rect
        zoom = fit_zoom(rect.width, rect.height, budget_px)
        # round the zoom down until the integer pixel size is within budget
        while zoom > 0.01 and math.ceil(rect.width * zoom) * math.ceil(rect.height * zoom) > budget_px:
            zoom *= 0.995
        pix = pdf_page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False, colorspace=pymupdf.csRGB)
        return encode(pix, fmt), pix.width, pix.height


class _Memo(dict):
    """A dict standing in for the page cache in a drawer: what the parent found, and what was added."""

    def __init__(self, found: dict[str, Any]) -> None:
        super().__init__(found)
        self.added: dict[str, Any] = {}

    def set(self, key: str, value: Any) -> None:
        self[key] = self.added[key] = value


def mark_words(path: str, file: str, page: int, source: str | None, language: str, dpi: int, cache_key: str,
               found: dict[str, Any], quotes: Sequence[str], answers: Sequence[str],
               limits: DrawLimits) -> tuple[list[tuple], str, list[str], float, dict[str, Any]]:
    """(boxes as (x0, y0, x1, y1, kind), word source, texts not found, page width in points, OCR words to
    cache) of ``quotes`` and ``answers`` on a page; ``found`` holds OCR words cached before."""
    from madqa.highlight import displayed, locate, page_words

    with _open(Path(path), file) as doc:
        pdf_page = _page(doc, file, page, limits)
        memo = _Memo(found)
        words, used = page_words(pdf_page, source, language, dpi, memo, cache_key)
        boxes, missing = locate(words, quotes, answers)
        shown = [(b.x0, b.y0, b.x1, b.y1, b.kind) for b in displayed(boxes, pdf_page)]
        return shown, used, missing, pdf_page.rect.width, memo.added


def outline_entries(path: str, file: str, max_pages: int, limits: DrawLimits) -> tuple[str, list[tuple[int, str, int]]]:
    """A document's bookmarks, else its headings by font size (``madqa.outline_reader``), read in the drawer."""
    from madqa.outline_reader import read_outline

    with _open(Path(path), file) as doc:
        return read_outline(doc, max_pages)


OPERATIONS: dict[str, Callable[..., Any]] = {"draw": draw_image, "mark": mark_words, "outline": outline_entries}


def _serve(conn: Connection, memory_mb: int) -> None:
    """A drawer: answer the requests asked for, one at a time, until told to stop (None) or the parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    os.nice(NICENESS)
    _limit_memory(memory_mb)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # stopped for CPU (SIGXCPU): no core file
    import pymupdf

    pymupdf.TOOLS.mupdf_display_errors(False)
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        kind, args, limits = request
        _cpu_budget(limits.timeout_s)
        try:
            result = OPERATIONS[kind](*args, limits)
        except PageLimitError as exc:
            conn.send(("limit", str(exc)))
        except RenderError as exc:
            conn.send(("failed", str(exc)))
        except Exception as exc:  # kept broad: an untrusted page fails MuPDF in many types; reported with its type
            if _out_of_memory(exc):
                conn.send(("memory", str(exc)[:200]))
                return  # a failed allocation may leave MuPDF in a bad state: this drawer ends
            reason = _named(exc, Path(args[0]), args[1])
            conn.send(("failed", f"page {args[2]} of {args[1]} could not be drawn ({type(exc).__name__}: "
                                 f"{reason})"[:300]))
        else:
            conn.send(("ok", result))


def serve_socket(fd: int, memory_mb: int) -> None:
    """A drawer's entry point (``pdf_reader._Worker`` starts it with this module's name)."""
    try:
        _serve(Connection(fd), memory_mb)
    except (EOFError, ConnectionError):
        pass


# --- asking a drawer (in the caller's process) ----------------------------------------------------


def draw(path: Path, file: str, page: int, budget_px: int, fmt: str, limits: DrawLimits) -> tuple[bytes, int, int]:
    """(encoded image, width, height) of page ``page`` of ``file`` (stored at ``path``), drawn by a drawer.

    RenderError when the page cannot be drawn; PageLimitError (a RenderError) past the limits."""
    return _ask("draw", (str(path), file, page, budget_px, fmt), file, page, limits)


def mark(path: Path, file: str, page: int, source: str | None, language: str, dpi: int, cache_key: str,
         found: dict[str, Any], quotes: Sequence[str], answers: Sequence[str],
         limits: DrawLimits) -> tuple[list[tuple], str, list[str], float, dict[str, Any]]:
    """``mark_words``' result, from a drawer (RenderError, or PageLimitError past the limits)."""
    return _ask("mark", (str(path), file, page, source, language, dpi, cache_key, found, list(quotes),
                         list(answers)), file, page, limits)


def _ask(kind: str, args: tuple, file: str, page: int, limits: DrawLimits) -> Any:
    with _slots:
        worker = POOL.acquire(limits.memory_mb)
        try:
            worker.conn.send((kind, args, limits))
        except OSError:  # an idle drawer that died (killed from outside): a fresh one gets the page
            worker.kill()
            worker = _Worker(limits.memory_mb, __name__)
            worker.conn.send((kind, args, limits))
        worker.files += 1
        try:
            message = _receive(worker, file, page, limits)
        except BaseException:
            worker.kill()
            raise
        if message[0] == "memory":
            worker.kill()
        else:
            POOL.release(worker)
    status = message[0]
    if status == "ok":
        return message[1]
    if status == "limit":
        raise PageLimitError(message[1])
    if status == "memory":
        raise PageLimitError(_memory_reason(file, page, limits))
    raise RenderError(message[1])


def _receive(worker: _Worker, file: str, page: int, limits: DrawLimits) -> tuple:
    """The drawer's answer; RenderError (PageLimitError past a limit) when it was stopped or died."""
    if not worker.conn.poll(limits.wall_s):
        raise RenderError(f"drawing page {page} of {file} did not finish in {limits.wall_s:g} s, so it was stopped")
    try:
        return worker.conn.recv()
    except (EOFError, OSError):
        code = worker.exit_code(5)
    if code == -signal.SIGXCPU:
        raise PageLimitError(f"page {page} of {file} could not be drawn within the limits: it took more than "
                             f"{limits.timeout_s:g} s of CPU, so it was stopped (MADQA_RENDER_TIMEOUT_S; a "
                             "decompression bomb?)")
    if code is not None and code < 0 and -code in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
        raise PageLimitError(_memory_reason(file, page, limits) + f" (the drawing process died: signal {-code})")
    raise RenderError(f"the process drawing page {page} of {file} died (exit code {code})")


def _memory_reason(file: str, page: int, limits: DrawLimits) -> str:
    return (f"page {page} of {file} could not be drawn within the limits: it needs more than "
            f"{limits.memory_mb:,} MB of memory, so it was stopped (MADQA_PDF_MEMORY_MB; a decompression bomb?)")
