"""A collection served to every visitor, indexed in the background and searchable while it grows.

At start the collection's current generation (from an earlier run, under ``MADQA_HOME``) is opened at once, so a
restart answers in seconds. Then the folder is brought up to date in *rounds*: each round is one incremental
ingest that reads at most as many new or changed files as the collection already holds (at least
``first_round``), and swaps its generation in. So a collection indexed from scratch answers from its first
files within a round, and the rounds double until it is whole (the copying of kept pages stays about the size of
the collection in all). Files that fail are reported in ``failures`` and never stop the others. Only one round
runs at a time in the process (``ROUNDS``): collections share the machine's cores.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from madqa.collections import CollectionSpec
from madqa.corpus import Corpus
from madqa.errors import CorpusError, MadqaError
from madqa.index import IngestReport, find_pdfs, ingest
from madqa.settings import Settings

FIRST_ROUND = 32  # files read before a collection indexed from scratch is first searchable
ROUNDS = threading.Lock()  # one ingest round at a time, whichever collection it is for
log = logging.getLogger("madqa.collections")


@dataclass(frozen=True)
class IndexState:
    """Where a collection's indexing stands, for a status line or ``madqa collections``."""

    files: int  # PDFs found in the folder (0 until counted)
    indexed_files: int  # documents searchable now
    pages: int  # pages searchable now
    indexing: bool  # a round is running or due
    current: tuple[str, int, int] | None = None  # (file, done, total) of the round running
    page: tuple[str, int, int, str] | None = None  # (file, page, pages, source) of a long read
    failures: tuple[tuple[str, str], ...] = field(default=())  # (file, reason) of files that cannot be indexed
    error: str | None = None  # why the collection cannot be served at all

    @property
    def pending(self) -> int:
        """Files found but not searchable yet (failures excluded)."""
        return max(0, self.files - self.indexed_files - len(self.failures))


class SharedCollection:
    """One operator collection (or the bundled demo): opened at once when indexed before, then indexed in rounds
    in a background thread (``start``); ``get()`` gives what is searchable so far."""

    def __init__(self, spec: CollectionSpec, settings: Settings, registry: Any,
                 first_round: int = FIRST_ROUND) -> None:
        self.spec = spec
        self.root = spec.documents
        self.settings = settings
        self.registry = registry
        self.first_round = max(1, first_round)
        self.corpus: Corpus | None = None
        self.error: str | None = None
        self.files = 0
        self.failures: list[tuple[str, str]] = []
        self.progress: tuple[str, int, int] | None = None
        self.page: tuple[str, int, int, str] | None = None
        self.indexed_now = False  # some file was read in this run (not all reused from an earlier one)
        self.reports: list[IngestReport] = []
        self._ready = threading.Event()  # indexing finished (or failed)
        self._searchable = threading.Event()  # a generation is open, or there will never be one
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.spec.name

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"madqa-index-{self.name}", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        began = time.monotonic()
        log.info("collection %s: indexing %s (new or changed files) in the background", self.name, self.root)
        try:
            if not self.root.is_dir():
                raise CorpusError(f"the folder of {self.name} ({self.root}) is missing")
            try:
                self.corpus = Corpus.open(self.root, self.settings.corpora_dir)  # an earlier run's: served at once
                self._searchable.set()
                log.info("collection %s: searchable at once from an earlier run (%d files)", self.name,
                         len(self.corpus.documents))
            except CorpusError:
                pass  # never indexed, or damaged: the first round (re)builds it
            self.files = len(find_pdfs(self.root))
            while True:
                held = len(self.corpus.documents) if self.corpus is not None else 0
                most = self.first_round + held + len(self.failures)  # failing files are read again each round
                with ROUNDS:
                    report = ingest(self.root, self.settings, self.registry, progress=self._progress,
                                    page_progress=self._page, read_at_most=most,
                                    language=self.spec.language)
                self.reports.append(report)
                self.indexed_now |= bool(report.added or report.updated or report.removed)
                self.failures = list(report.failures)
                self.files = report.files + report.pending + len(report.failures)
                if self.corpus is None or self.corpus.generation != report.generation:
                    self.corpus = Corpus.open(self.root, self.settings.corpora_dir)  # the old one closes when unused
                self._searchable.set()
                self.progress = self.page = None
                if not report.pending:
                    break
        except MadqaError as exc:
            self.error = str(exc)
        except Exception as exc:  # a bug (a plugin's, say): shown in the status, logged with its traceback;
            log.error("indexing the collection %s failed", self.name, exc_info=exc)
            self.error = f"{type(exc).__name__}: {exc}"  # the app stays up for the others and uploads
        finally:
            self.progress = self.page = None
            self._ready.set()
            self._searchable.set()
            self._log_done(time.monotonic() - began)

    def _log_done(self, seconds: float) -> None:
        """The operator's line saying the collection is indexed (or why it is not served)."""
        if self.error is not None:
            log.warning("collection %s: not served after %.1f s: %s", self.name, seconds, self.error)
            return
        corpus = self.corpus
        log.info("collection %s: indexed in %.1f s: %d files, %d pages searchable%s", self.name, seconds,
                 len(corpus.documents) if corpus else 0, corpus.page_count if corpus else 0,
                 f"; {len(self.failures)} files could not be read" if self.failures else "")

    def _progress(self, file: str, done: int, total: int) -> None:
        self.progress = (file, done, total)
        self.page = None

    def _page(self, file: str, page: int, pages: int, source: str) -> None:
        self.page = (file, page, pages, source) if source == "ocr" else None

    @property
    def ready(self) -> bool:
        """Indexing has finished (every file searchable or failed), or the collection cannot be served."""
        return self._ready.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Start if needed and wait until indexing finished; False when ``timeout`` passed first."""
        self.start()
        return self._ready.wait(timeout)

    def wait_searchable(self, timeout: float | None = None) -> bool:
        """Start if needed and wait until some generation can be searched (or none ever will)."""
        self.start()
        return self._searchable.wait(timeout)

    def get(self) -> Corpus:
        """What is searchable now, waiting for the first round; CorpusError when the collection cannot be served."""
        self.wait_searchable()
        corpus = self.corpus
        if corpus is None:
            raise CorpusError(f"the collection {self.name} is unavailable: {self.error}")
        return corpus

    def state(self) -> IndexState:
        corpus = self.corpus
        return IndexState(self.files, len(corpus.documents) if corpus else 0, corpus.page_count if corpus else 0,
                          not self.ready, self.progress, self.page, tuple(self.failures), self.error)


def stored_state(spec: CollectionSpec, settings: Settings) -> IndexState:
    """A collection's state as stored under ``MADQA_HOME`` (no indexing): for ``madqa collections``."""
    root = spec.documents
    if not root.is_dir():
        return IndexState(0, 0, 0, False, error=f"folder {root} is missing")
    files = len(find_pdfs(root))
    try:
        corpus = Corpus.open(root, settings.corpora_dir)
    except CorpusError:
        return IndexState(files, 0, 0, files > 0)
    try:
        failures = tuple((str(f.get("file")), str(f.get("reason"))) for f in corpus.manifest.get("failures", []))
        indexed = {Path(f).as_posix() for f in corpus.documents}
        return IndexState(files, len(indexed), corpus.page_count, files > len(indexed) + len(failures),
                          failures=failures)
    finally:
        corpus.close()
