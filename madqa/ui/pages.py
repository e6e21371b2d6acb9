"""Page images for the browser: thumbnails of search results and a large view of a cited page.

Images are written once to a private temporary folder (named by content hash, page and size)
and handed to Gradio as file paths, so a page streamed in several updates is encoded only once.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from madqa.corpus import Corpus
from madqa.highlight import Highlight
from madqa.render import render_highlighted, render_page
from madqa.settings import Settings
from madqa.types import PageRef

THUMB_BUDGET_PX = 90_000  # about 250 x 350: a gallery thumbnail
LARGE_BUDGET_PX = 2_400_000  # about 1300 x 1800: a page read on screen
IMAGE_MAX_AGE_S = 6 * 3600  # page images untouched this long are removed (Gradio keeps its own copies)
FOLDER_MAX_BYTES = 256 * 2**20  # past this the oldest page images are removed (they are drawn again if asked)
_folder: Path | None = None
_folder_lock = threading.Lock()
_writes = itertools.count(1)
_written = 0  # bytes written since the folder was last pruned


def image_folder() -> Path:
    """This process's folder of page images (inside the system temp dir, which Gradio may serve)."""
    global _folder
    with _folder_lock:
        if _folder is None or not _folder.is_dir():
            _folder = Path(tempfile.mkdtemp(prefix="madqa-pages-"))
        return _folder


def remove_image_folder() -> None:
    """Remove this process's folder of page images (a graceful stop: no later run serves them)."""
    global _folder
    with _folder_lock:
        if _folder is not None:
            shutil.rmtree(_folder, ignore_errors=True)
            _folder = None


def page_file(corpus: Corpus, ref: PageRef, settings: Settings, budget_px: int) -> Path:
    """A file holding the image of ``ref`` under ``budget_px``; RenderError when it cannot be drawn."""
    doc = corpus.document(ref.file)
    fmt = settings.image_format
    path = image_folder() / f"{doc.sha256[:24]}-{ref.page}-{budget_px}.{'jpg' if fmt == 'jpeg' else fmt}"
    if not path.is_file():
        image = render_page(corpus, ref.file, ref.page, settings, budget_px=budget_px)
        store(path, image.data, settings)
    return path


def highlighted_page_file(corpus: Corpus, ref: PageRef, settings: Settings, budget_px: int,
                          quotes: list[str], answers: list[str]) -> tuple[Path, Highlight]:
    """A file holding the image of ``ref`` with the quotes and answer words boxed, and the boxes."""
    doc = corpus.document(ref.file)
    fmt = settings.image_format
    marks = hashlib.sha1(json.dumps([quotes, answers]).encode("utf-8")).hexdigest()[:16]
    image, highlight = render_highlighted(corpus, ref.file, ref.page, settings, quotes, answers, budget_px=budget_px)
    path = image_folder() / f"{doc.sha256[:24]}-{ref.page}-{budget_px}-hl{marks}.{'jpg' if fmt == 'jpeg' else fmt}"
    if not path.is_file():
        store(path, image.data, settings)
    return path, highlight


def store(path: Path, data: bytes, settings: Settings) -> None:
    """Write a page image, refused (ENOSPC, which ``disk_reason`` words) when it would leave the disk with
    less than ``min_free_mb`` free, as an upload is; the folder is kept under ``FOLDER_MAX_BYTES``."""
    if shutil.disk_usage(path.parent).free - len(data) < settings.min_free_mb * 2**20:
        raise OSError(errno.ENOSPC, "the server's disk is nearly full")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    global _written
    with _folder_lock:
        _written += len(data)
        due = _written > FOLDER_MAX_BYTES // 8
        if due:
            _written = 0
    if due or next(_writes) % 256 == 0:
        prune(path.parent)


def prune(folder: Path, max_age_s: float = IMAGE_MAX_AGE_S, max_bytes: int = FOLDER_MAX_BYTES) -> int:
    """Remove page images older than ``max_age_s``, then the oldest until the folder holds under ``max_bytes``,
    so a long-running server's folder stays bounded in age and size."""
    cutoff, removed, kept = time.time() - max_age_s, 0, []
    for entry in folder.iterdir():
        try:
            stat = entry.stat()
            if stat.st_mtime < cutoff:
                entry.unlink()
                removed += 1
            else:
                kept.append((stat.st_mtime, stat.st_size, entry))
        except OSError:
            continue  # another thread removed or replaced it
    total = sum(size for _, size, _ in kept)
    for _, size, entry in sorted(kept, key=lambda k: k[0]):
        if total <= max_bytes * 3 // 4:
            break
        try:
            entry.unlink()
            removed += 1
        except OSError:
            pass  # already gone
        total -= size
    return removed


SOURCE_WORDS = {"text": "PDF text layer", "ocr": "OCR (Tesseract)", "imported": "imported OCR", "none": "no text", "blank": "blank page"}
