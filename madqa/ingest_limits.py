"""What one ingest may cost: pages per file and in all (``PageLimits``), and time (``IngestClock``).

The web app ingests visitors' uploads with both (MADQA_UPLOAD_MAX_PAGES_PER_FILE, MADQA_UPLOAD_MAX_PAGES,
MADQA_UPLOAD_INDEX_TIMEOUT): a 32 MB PDF of 200,000 pages sharing one content stream held an upload slot for
more than 8 minutes and grew the server by ~320 MB when every page was read. A file's page count comes from
its reader process when it opens the file, before any page is read; the clock is checked at every file, page
and embedding batch, and an ingest past it is undone (``madqa.index.ingest`` removes the half-built generation).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from madqa.errors import IngestStopped
from madqa.pdf_reader import ReadLimits
from madqa.settings import Settings

if TYPE_CHECKING:
    from madqa.corpus import Corpus
    from madqa.ingest_report import IngestReport

Plan = list[tuple[str, Path, str, bool]]  # (file, path, sha256, reuse), as madqa.index plans an ingest


@dataclass(frozen=True)
class PageLimits:
    """Most pages one file, and the whole corpus, may have (0: no limit), each with the words that name it in a
    failure, after "more than": ``"the 1,000 one file may have here (MADQA_UPLOAD_MAX_PAGES_PER_FILE)"``. A file's pages are
    counted when its reader opens it, before any page is read (a 200,000-page file costs an open, not a read)."""

    per_file: int = 0
    per_file_words: str = ""
    total: int = 0
    total_words: str = ""


class IngestClock:
    """An ingest's time limit: ``check()`` raises IngestStopped once ``timeout_s`` has passed (None: never)."""

    def __init__(self, timeout_s: float | None, words: str) -> None:
        self.deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self.timeout_s, self.words = timeout_s, words

    def check(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise IngestStopped(f"indexing was stopped after {self.timeout_s:g} s, the most {self.words}; "
                                "nothing of it was kept")


def clocked(clock: IngestClock, progress: Any, page_progress: Any, index_progress: Any) -> tuple[Any, Any, Any]:
    """The progress callbacks, each checking ``clock`` first (called per file, per page read and per batch
    embedded: an ingest past its time stops at the next of them)."""
    if clock.deadline is None:
        return progress, page_progress, index_progress

    def on_file(file: str, done: int, total: int) -> None:
        clock.check()
        if progress:
            progress(file, done, total)

    def on_page(file: str, page: int, pages: int, source: str) -> None:
        clock.check()
        if page_progress:
            page_progress(file, page, pages, source)

    def on_index(name: str, done: int, total: int | None, detail: str) -> None:
        clock.check()
        if index_progress:
            index_progress(name, done, total, detail)

    return on_file, on_page, on_index


def within_limits(plan: Plan, previous: Corpus | None, limits: PageLimits | None,
                   report: IngestReport) -> tuple[Plan, int | None]:
    """The plan without the files to read when the corpus is full already, and the pages left for them (None: no
    total limit). Files kept as they are count toward the total but are never refused."""
    if limits is None or not limits.total:
        return plan, None
    kept = sum(previous.documents[file].pages for file, _, _, reuse in plan if reuse) if previous else 0
    room = limits.total - kept
    if room > 0:
        return plan, room
    for file, *_ in (entry for entry in plan if not entry[3]):
        report.failures.append((file, f"not read: the corpus has {kept:,} pages already and no room is left of "
                                     f"{limits.total_words}"))
    return [entry for entry in plan if entry[3]], 0


def read_limits(settings: Settings, limits: PageLimits | None, room: int | None) -> ReadLimits:
    """The reader's limits: the settings', and the most pages one file may have (the smaller of the per-file
    limit and the pages the corpus has room for)."""
    base = ReadLimits.from_settings(settings)
    if limits is None:
        return base
    candidates = [(limits.per_file, limits.per_file_words)] if limits.per_file else []
    if room is not None:
        candidates.append((room, f"the {room:,} left of {limits.total_words}"))
    if not candidates:
        return base
    most, words = min(candidates, key=lambda c: c[0])
    return replace(base, max_pages=most, max_pages_reason=words)
