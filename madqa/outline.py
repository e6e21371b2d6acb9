"""A document's outline with page numbers: its PDF bookmarks, else headings found by font size, else the
first line of each page (a scan's OCR text has no fonts).

The PDF is read by a drawer process (``madqa.page_drawer`` with ``madqa.outline_reader``: untrusted files
are opened where CPU and memory limits apply); the outline is cached per file content (sha256) beside the
page images.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from madqa.errors import CorpusError, RenderError
from madqa.outline_reader import LETTERS

if TYPE_CHECKING:
    from madqa.contract import Corpus
    from madqa.settings import Settings

HEADING_PAGES = 150  # pages read for headings when a PDF has no bookmarks
FIRST_LINE_PAGES = 60  # pages listed by their first line when nothing else is found
_VERSION = 2  # of what the drawer reads: a change makes cached outlines be read again


@dataclass(frozen=True)
class OutlineEntry:
    """One heading: its level (1 the highest), its title and the 1-based page it is on."""

    level: int
    title: str
    page: int


@dataclass(frozen=True)
class Outline:
    """A document's outline and where it came from: ``bookmarks``, ``headings``, ``first lines`` or ``none``."""

    file: str
    pages: int
    source: str
    entries: tuple[OutlineEntry, ...]


def document_outline(corpus: Corpus, file: str, settings: Settings) -> Outline:
    """The outline of ``file`` (CorpusError for a file not in the corpus; RenderError when the PDF cannot
    be read within the limits)."""
    from madqa.page_drawer import DrawLimits, _ask
    from madqa.render import _damaged, page_cache

    doc = corpus.document(file)
    key = f"outline:v{_VERSION}:{doc.sha256}"
    try:
        cache = page_cache(settings)
        cached = cache.get(key)
    # kept broad: a damaged diskcache raises sqlite's, pickle's or the OS's errors; the outline is read again
    # and the damage logged once (as for page images)
    except Exception as exc:
        _damaged(settings, exc)
        cache, cached = None, None
    if cached is None:
        try:
            cached = _ask("outline", (str(corpus.pdf_path(file)), file, HEADING_PAGES), file, 1,
                          DrawLimits.from_settings(settings))
        except RenderError as exc:
            raise RenderError(f"the outline of {file} could not be read: {exc}") from None
        if cache is not None:
            try:
                cache.set(key, cached)
            except Exception as exc:  # a cache that cannot be written costs a re-read next time; logged once
                _damaged(settings, exc)
    source, rows = cached
    entries = tuple(OutlineEntry(level, title, page) for level, title, page in rows)
    if not entries:
        source, entries = _first_lines(corpus, file, doc.pages)
    return Outline(file, doc.pages, source, entries)


def _first_lines(corpus: Corpus, file: str, pages: int) -> tuple[str, tuple[OutlineEntry, ...]]:
    """The first line with words of each page (from the stored text: OCR'd scans too)."""
    out: list[OutlineEntry] = []
    for page in range(1, min(pages, FIRST_LINE_PAGES) + 1):
        try:
            text = corpus.page_text(file, page)
        except CorpusError:
            continue
        line = next((ln.strip() for ln in (text or "").splitlines() if LETTERS.search(ln)), "")
        if line:
            out.append(OutlineEntry(1, line[:100], page))
    return ("first lines" if out else "none"), tuple(out)


def outline_text(outline: Outline, limit: int = 80) -> str:
    """The outline as the model reads it: one line per entry, indented by level, with its page."""
    head = {"bookmarks": "its bookmarks", "headings": "headings found by font size",
            "first lines": "no bookmarks or headings; the first line of each page", "none": "nothing found"}
    lines = [f"Outline of {outline.file} ({outline.pages} pages; {head.get(outline.source, outline.source)}):"]
    lines += [f"{'  ' * (e.level - 1)}- {e.title} (page {e.page})" for e in outline.entries[:limit]]
    if len(outline.entries) > limit:
        lines.append(f"... {len(outline.entries) - limit} more entries (open_page a section, or search_in the file)")
    if not outline.entries:
        lines.append("(no outline: open a page, or search within the document)")
    return "\n".join(lines)
