"""PDFs read in a worker process with memory and time limits, so a hostile file costs its reader, never the caller.

A decompression bomb (a PDF of a few hundred KB whose one page stream inflates to 40 MB of text operators)
took minutes and GBs read in-process. Here every PDF of an ingest (the CLI's ``index`` and the web app's
uploads alike) is read by a worker process whose address space is capped (``MADQA_PDF_MEMORY_MB``), which
is stopped when opening the file or reading one page takes more than ``MADQA_PDF_TIMEOUT_S`` seconds of
CPU (CPU, not wall time: a busy server must not fail good files; a worker stuck without using CPU is
stopped after ``WALL_FACTOR`` times as long), and whose
page texts are cut at ``MADQA_MAX_PAGE_CHARS`` per page and ``MADQA_MAX_FILE_CHARS`` per file. Such a file
fails with a plain reason; the next file gets a fresh worker. Workers are started once, kept between
ingests and replaced after ``RECYCLE_FILES`` files. A worker is a fresh interpreter running this module
(``python -c``, talking over a socket pair): safe in a threaded server, and unlike multiprocessing's
``spawn`` it never re-runs the caller's script, so a script calling ``ingest()`` at module level, with no
``if __name__ == "__main__"`` guard, works (under ``spawn`` its worker re-ran the script, whose own
ingest then waited for the corpus lock the script held: both waited for ever).
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import resource
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from madqa.corpus import PageText, unfold_ligatures
from madqa.errors import CorpusError, MadqaError
from madqa.worker_guard import spawn

MIN_TEXT_CHARS = 16  # a page with fewer letters/digits than this counts as "no text layer"
RECYCLE_FILES = 500  # a worker is replaced after this many files (MuPDF's heap only grows)
IDLE_WORKERS = 2  # workers kept between ingests
WALL_FACTOR = 10  # wall-clock patience, in multiples of the CPU time limit (at least WALL_MIN_S)
WALL_MIN_S = 120


@dataclass(frozen=True)
class ReadLimits:
    """What reading one PDF may cost (from Settings: MADQA_PDF_MEMORY_MB, MADQA_PDF_TIMEOUT_S, ...)."""

    memory_mb: int = 768
    timeout_s: float = 30.0
    max_page_chars: int = 100_000
    max_file_chars: int = 20_000_000
    max_pages: int = 0  # a file with more pages fails as soon as it is opened, before any page is read (0: any)
    max_pages_reason: str = ""  # what the limit is, for the failure: "the 1,000 pages ... (MADQA_...)"

    @classmethod
    def from_settings(cls, settings: Any) -> ReadLimits:
        return cls(settings.pdf_memory_mb, settings.pdf_timeout_s, settings.max_page_chars, settings.max_file_chars)


def letters(text: str) -> int:
    return sum(map(str.isalnum, text))  # a third of a generator's cost, same count


class PageTexts:
    """Chooses each page's text: imported OCR, text layer, then Tesseract when the layer is empty; typographic
    ligatures spelt out whatever the source (``unfold_ligatures``)."""

    def __init__(self, text: Any, ocr: Any, mode: str) -> None:
        self.text, self.ocr, self.mode = text, ocr, mode

    def read(self, page: Any, file: str, number: int, imported: dict[int, str]) -> tuple[str, str]:
        text, source = self._choose(page, file, number, imported)
        return unfold_ligatures(text), source

    def _choose(self, page: Any, file: str, number: int, imported: dict[int, str]) -> tuple[str, str]:
        if number in imported:
            return imported[number], "imported"
        text = "" if self.mode == "always" else (self.text.read(page, file, number) or "")
        if not letters(text) and is_blank(page):
            return "", "blank"  # nothing for OCR to find: not OCR'd, not listed as needing it
        if self.ocr is not None and (self.mode == "always" or letters(text) < MIN_TEXT_CHARS):
            ocr_text = self.ocr.read(page, file, number) or ""
            if letters(ocr_text) > letters(text):
                return ocr_text, "ocr"
        return text, ("text" if letters(text) else "none")


def is_blank(page: Any) -> bool:
    """True for a truly blank page: no text, no image and no drawing (a scan has an image; vector-drawn
    letters are drawings), so OCR has nothing to read. Images are looked at first: the cheap test for a scan."""
    return not page.get_images(full=False) and not page.get_text("text").strip() and not page.get_drawings()


def _out_of_memory(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, MemoryError) or ("alloc" in text and "fail" in text) or "out of memory" in text


def _cpu_budget(seconds: float) -> None:
    """Let this process use ``seconds`` more CPU from now; past it the kernel stops it (SIGXCPU)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime + seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.getrlimit(resource.RLIMIT_CPU)[1]))


def read_pages(path: Path, file: str, texts: PageTexts, imported: dict[int, str], limits: ReadLimits,
               send: Any, tick: Any = None) -> None:
    """Open one PDF and ``send`` ("open", pages), then ("page", PageText, warning) per page; CorpusError
    with a plain reason when the file cannot be used."""
    import pymupdf

    tick = tick or (lambda: None)  # called before opening and before each page (a new time budget)
    tick()
    pymupdf.TOOLS.mupdf_display_errors(False)  # MuPDF's own stderr chatter; we report per file instead
    if path.stat().st_size == 0:
        raise CorpusError("empty file (0 bytes)")
    with open(path, "rb") as f:
        head = f.read(1024)
    if b"%PDF" not in head:
        raise CorpusError("not a PDF (no %PDF header)")
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # MuPDF raises several types for damaged files
        if _out_of_memory(exc):
            raise
        raise CorpusError(f"corrupt PDF that cannot be opened ({_named(exc, path, file)})") from None
    with doc:
        if doc.needs_pass:
            raise CorpusError("encrypted PDF (needs a password)")
        if doc.page_count == 0:
            raise CorpusError("the PDF has no pages")
        if limits.max_pages and doc.page_count > limits.max_pages:
            raise CorpusError(f"the PDF has {doc.page_count:,} pages, more than {limits.max_pages_reason or limits.max_pages}")
        send(("open", doc.page_count))
        total, full = 0, False
        for index in range(doc.page_count):
            warning = None
            tick()
            try:
                text, source = texts.read(doc.load_page(index), file, index + 1, imported)
            # kept broad: MuPDF (and Tesseract, through the page readers) raise several types on a hostile or
            # broken page; one such page must not sink the document, and its warning names the exception type
            # (so a page reader's bug shows in the ingest report, never as silence)
            except Exception as exc:
                if _out_of_memory(exc):
                    raise
                why = _named(exc, path, file) if isinstance(exc, MadqaError) else \
                    f"{type(exc).__name__}: {_named(exc, path, file)}"
                warning, text, source = f"page {index + 1} could not be read ({why})", "", "none"
            if len(text) > limits.max_page_chars:
                warning = (f"page {index + 1}: text cut at {limits.max_page_chars:,} characters "
                           "(MADQA_MAX_PAGE_CHARS)")
                text = text[:limits.max_page_chars]
            room = limits.max_file_chars - total
            if len(text) > room:
                if not full:
                    warning = (f"text from page {index + 1} on not kept: the file holds more than "
                               f"{limits.max_file_chars:,} characters (MADQA_MAX_FILE_CHARS)")
                full, text = True, text[:room]
                source = source if text else "none"
            total += len(text)
            send(("page", PageText(file, index + 1, text, source), warning))
            del text


def _named(exc: BaseException, path: Path, file: str) -> str:
    """MuPDF's message with the file's path on this machine replaced by its name in the corpus (MuPDF
    quotes the path it opened: in the web app that is a server folder holding the session's token)."""
    return str(exc).replace(str(path), file)


def _limit_memory(mb: int) -> None:
    limit = mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _serve(conn: Connection, memory_mb: int) -> None:
    """A worker: read the PDFs asked for, one at a time, until told to stop (None) or its parent is gone
    (the socket closes; mid-page, ``madqa.worker_guard`` ends it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _limit_memory(memory_mb)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # stopped for CPU (SIGXCPU): no core file
    readers: dict[bytes, PageTexts] = {}
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        path, file, imported, blob, limits = request
        try:
            if blob not in readers:
                readers.clear()
                readers[blob] = PageTexts(*pickle.loads(blob))
            read_pages(Path(path), file, readers[blob], imported, limits, conn.send,
                       lambda seconds=limits.timeout_s: _cpu_budget(seconds))
        except CorpusError as exc:
            conn.send(("failed", str(exc)))
        except OSError as exc:
            conn.send(("failed", f"cannot be read ({exc.strerror or exc})"))
        except Exception as exc:  # kept broad: an untrusted PDF fails MuPDF in many types; the file fails, named
            if _out_of_memory(exc):
                conn.send(("memory", str(exc)[:200]))
                return  # a failed allocation may leave MuPDF in a bad state: this worker ends
            conn.send(("failed", f"cannot be read ({type(exc).__name__}: {_named(exc, Path(path), file)})"[:300]))
        else:
            conn.send(("done",))


def serve_socket(fd: int, memory_mb: int) -> None:
    """A worker's entry point (``_Worker`` starts it): serve the parent over the inherited socket ``fd``.
    The parent gone (it exited, or dropped this worker) ends it quietly: a socket whose peer closed with
    messages unread reports a reset, not an end of file, on the next receive or send."""
    try:
        _serve(Connection(fd), memory_mb)
    except (EOFError, ConnectionError):
        pass


# what a worker interpreter runs: the parent's import path, then <module>.serve_socket(fd, memory_mb)
# (this module's readers; madqa.page_drawer's drawers are the same kind of worker)
# after madqa.worker_guard.guard_parent(<parent pid>): it ends with its parent, mid-page included
WORKER_CODE = ("import importlib, json, sys; sys.path[:] = json.loads(sys.argv[3]); "
               "importlib.import_module('madqa.worker_guard').guard_parent(int(sys.argv[5])); "
               "importlib.import_module(sys.argv[4]).serve_socket(int(sys.argv[1]), int(sys.argv[2]))")


class _Worker:
    """One worker process: a new interpreter (``python -c WORKER_CODE``) serving ``module``'s requests, and
    our end of its socket pair."""

    def __init__(self, memory_mb: int, module: str = __name__) -> None:
        ours, theirs = socket.socketpair()
        try:
            self.process = spawn(
                [sys.executable, "-c", WORKER_CODE, str(theirs.fileno()), str(memory_mb), json.dumps(sys.path),
                 module, str(os.getpid())], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        self.memory_mb = memory_mb
        self.files = 0

    def alive(self) -> bool:
        return self.process.poll() is None

    def exit_code(self, timeout: float) -> int | None:
        """The worker's exit status once it ends (negative: the signal that ended it), None if still running."""
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.alive():
            self.process.kill()
        self.exit_code(10)
        self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.exit_code(5)
        self.kill()


class ReaderPool:
    """Idle workers of ``module`` by memory limit, shared by every ingest (or page drawing) of this process
    (thread-safe); ``idle`` are kept warm, a worker is replaced after ``recycle`` requests."""

    def __init__(self, module: str = __name__, idle: int = IDLE_WORKERS, recycle: int = RECYCLE_FILES) -> None:
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self.module, self.keep, self.recycle = module, idle, recycle

    def acquire(self, memory_mb: int) -> _Worker:
        with self._lock:
            for worker in self._idle:
                if worker.memory_mb == memory_mb and worker.alive():
                    self._idle.remove(worker)
                    return worker
        return _Worker(memory_mb, self.module)

    def release(self, worker: _Worker) -> None:
        if not worker.alive() or worker.files >= self.recycle:
            worker.kill()
            return
        with self._lock:
            self._idle.append(worker)
            extra = self._idle[:-self.keep] if len(self._idle) > self.keep else []
            del self._idle[:len(extra)]
        for old in extra:
            old.stop()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.stop()


POOL = ReaderPool()
atexit.register(POOL.close)


class DocumentReader:
    """Reads the PDFs of one ingest in a limited worker (replaced when one fails), one file ahead of the
    caller when asked for many (``read_all``)."""

    def __init__(self, text: Any, ocr: Any, mode: str, limits: ReadLimits) -> None:
        self.limits = limits
        self.blob = pickle.dumps((text, ocr, mode))  # the page readers travel to the worker
        self.worker: _Worker | None = None
        self.in_flight = 0  # files asked of the worker whose messages are not all received yet

    def read(self, path: Path, file: str, imported: dict[int, str],
             on_page: Callable[[int, int, str], None] | None = None) -> tuple[int, list[PageText], list[str]]:
        """(page count, pages, warnings) of one PDF; CorpusError with a plain reason when it cannot be used.

        ``on_page(page, pages, source)`` hears each page as it is read (source: text, ocr, imported, none),
        so an OCR of a long scan shows progress page by page."""
        self._ask(path, file, imported)
        return self._collect(on_page)

    def read_all(self, files: list[tuple[Path, str, dict[int, str], Callable[[int, int, str], None] | None]]
                 ) -> Iterator[tuple[int, list[PageText], list[str]] | CorpusError | OSError]:
        """``read``'s result (or its CorpusError/OSError) for each (path, file, imported, on_page), in order.

        The worker is asked for the next file before this one's result is handed over, so it reads on
        (its messages wait in the pipe, ~170 KB) while the caller stores and indexes this one: an ingest
        is not reading and indexing by turns. A worker that is replaced (a file killed it) is asked again
        for the file it was to read next. Left before the end, the worker is stopped, never pooled with
        messages still on their way."""
        asked: list[int] = []  # indices asked of the current worker, oldest first
        following = 0
        try:
            for at, (path, file, imported, on_page) in enumerate(files):
                if not asked:
                    following = at  # nothing on its way (the start, or the worker was replaced)
                try:
                    if following == at:
                        self._ask(path, file, imported)
                        asked.append(at)
                        following += 1
                    if following < len(files) and self._ask_ahead(*files[following][:3]):
                        asked.append(following)
                        following += 1
                    asked.pop(0)
                    result: Any = self._collect(on_page)
                except (CorpusError, OSError) as exc:
                    result = exc
                if self.worker is None:
                    asked.clear()  # the worker is gone with what it was asked for next
                yield result
        finally:
            if self.in_flight:
                self._drop()

    def _ask(self, path: Path, file: str, imported: dict[int, str], retry: bool = True) -> None:
        if self.worker is None:
            self.worker = POOL.acquire(self.limits.memory_mb)
        try:
            self.worker.conn.send((str(path), file, imported, self.blob, self.limits))
        except OSError:
            if not retry or self.in_flight:
                raise
            self._drop()  # an idle worker that died (killed from outside): a fresh one gets the file
            self._ask(path, file, imported, retry=False)
            return
        self.worker.files += 1
        self.in_flight += 1

    def _ask_ahead(self, path: Path, file: str, imported: dict[int, str]) -> bool:
        """Ask for the next file while this one is still read; False when the worker cannot take it
        (it died: collecting the file it was reading says so)."""
        try:
            self._ask(path, file, imported, retry=False)
        except OSError:
            return False
        return True

    def _collect(self, on_page: Callable[[int, int, str], None] | None) -> tuple[int, list[PageText], list[str]]:
        """The messages of the oldest file asked for, up to its last."""
        worker = self.worker
        assert worker is not None and self.in_flight
        count = -1
        pages: list[Any] = []
        warnings: list[Any] = []
        while True:
            message = self._next(worker, "opening the file" if count < 0 else f"reading page {len(pages) + 1}")
            kind = message[0]
            if kind == "open":
                count = message[1]
            elif kind == "page":
                pages.append(message[1])
                if message[2]:
                    warnings.append(message[2])
                if on_page is not None:
                    on_page(message[1].page, count, message[1].source)
            elif kind == "done":
                self.in_flight -= 1
                return count, pages, warnings
            elif kind == "failed":
                self.in_flight -= 1
                raise CorpusError(message[1])
            else:  # "memory": the worker gave up and ends
                self._drop()
                raise CorpusError(self._memory_reason("opening the file" if count < 0 else
                                                      f"reading page {len(pages) + 1}"))

    def _next(self, worker: _Worker, where: str) -> tuple:
        if not worker.conn.poll(max(WALL_MIN_S, WALL_FACTOR * self.limits.timeout_s)):
            self._drop()
            raise CorpusError(f"{where} did not finish in {max(WALL_MIN_S, WALL_FACTOR * self.limits.timeout_s):g} s, "
                              "so it was stopped")
        try:
            return worker.conn.recv()
        except (EOFError, OSError):
            code = worker.exit_code(5)
            self._drop()
            if code == -signal.SIGXCPU:
                raise CorpusError(f"{where} took more than {self.limits.timeout_s:g} s of CPU, so it was stopped "
                                  "(MADQA_PDF_TIMEOUT_S; a decompression bomb?)") from None
            if code is not None and code < 0 and -code in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
                raise CorpusError(self._memory_reason(where) + f" (the reader process died: signal {-code})") from None
            raise CorpusError(f"the reader process died {where} (exit code {code})") from None

    def _memory_reason(self, where: str) -> str:
        return (f"{where} needs more than {self.limits.memory_mb:,} MB of memory, so it was stopped "
                "(MADQA_PDF_MEMORY_MB; a decompression bomb?)")

    def _drop(self) -> None:
        if self.worker is not None:
            self.worker.kill()
            self.worker = None
        self.in_flight = 0

    def close(self) -> None:
        """Give the worker back to the pool (an ingest is done); stopped instead when it still has
        messages on their way."""
        if self.in_flight:
            self._drop()
        if self.worker is not None:
            POOL.release(self.worker)
            self.worker = None
