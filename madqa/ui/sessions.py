"""Which corpus each browser session searches: a shared collection (the demo corpus, the operator's collections),
or its own uploads.

Shared collections are read-only and indexed in the background (``madqa.collection_index``), once for every
visitor; a session picks one by its name, or ``mine`` for its uploads.
Each session's uploads live in ``MADQA_HOME/uploads/<token>/docs``, their index and page store beside them in
``.../<token>/index`` (so the upload quota counts both, and removing the folder removes all the session owns): the
token is made here,
server-side (``secrets.token_urlsafe``), kept in the session's ``gr.State`` and never derived from
anything a visitor sends, so no visitor can reach another's folder. File names are sanitised
before they touch the disk.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import shutil
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from madqa.collection_index import SharedCollection
from madqa.collections import CollectionSpec
from madqa.corpus import Corpus, state_dir_for
from madqa.errors import CorpusError, MadqaError
from madqa.index import IngestReport, ingest
from madqa.ingest_limits import PageLimits
from madqa.settings import Settings
from madqa.ui.limits import folder_bytes

DEMO, MINE = "demo", "mine"  # the keys of the bundled demo corpus and of a session's uploads
MAX_UPLOAD_FILES = 20  # documents one session may hold
MAX_UPLOAD_MB = 50  # size of one uploaded PDF
MAX_SESSION_MB = 200  # all of one session's uploads together
UPLOAD_MAX_AGE_S = 6 * 3600  # upload folders older than this, left by ended sessions, are removed at start
NAME_CHARS = 100
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{32}$")
_ALLOWED = set(" -_.,()[]+&'")
Progress = Callable[[int, int, str], None]  # (done, total, what)


def new_session(corpus: str = "demo") -> dict[str, Any]:
    """A fresh session: a random token (server-side only) and ``corpus`` (the app's default collection) selected."""
    return {"token": secrets.token_urlsafe(24), "corpus": corpus}


def valid_token(token: Any) -> bool:
    return isinstance(token, str) and bool(_TOKEN.match(token))


def safe_upload_name(name: str, taken: Sequence[str] = ()) -> str:
    """A safe, unique ``*.pdf`` base name for an uploaded file's name (never a path).

    Keeps the last path component only, drops control and format characters, replaces anything
    but letters, digits and a few punctuation marks, removes ``..`` and leading dots, and adds
    `` (2)``, `` (3)``... when ``taken`` (compared case-insensitively) already holds the name.
    """
    base = unicodedata.normalize("NFC", str(name)).replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C")
    base = "".join(ch if ch.isalnum() or ch in _ALLOWED else "_" for ch in base)
    base = re.sub(r"\s+", " ", base)
    while ".." in base:
        base = base.replace("..", ".")
    base = base.strip().lstrip(".-_ ")
    stem, dot, ext = base.rpartition(".")
    if not dot or ext.lower() != "pdf":
        stem = base
    stem = stem[:NAME_CHARS].rstrip(" .") or "document"
    lowered = {t.lower() for t in taken}
    candidate, n = f"{stem}.pdf", 2
    while candidate.lower() in lowered:
        candidate, n = f"{stem} ({n}).pdf", n + 1
    return candidate


@dataclass
class FileResult:
    """What happened to one uploaded file."""

    name: str  # as uploaded (for display only)
    saved_as: str | None
    status: str  # indexed, failed, skipped
    detail: str = ""
    pages: int = 0


@dataclass
class UploadOutcome:
    files: list[FileResult] = field(default_factory=list)
    report: IngestReport | None = None


class SessionStore:
    """The shared collections (the demo corpus unless it is off, then the operator's) and each session's own
    upload corpus."""

    def __init__(self, settings: Settings, registry: Any, demo_root: Path | None,
                 collections: Sequence[CollectionSpec] = ()) -> None:
        self.settings = settings
        self.registry = registry
        specs = ([CollectionSpec(DEMO, Path(demo_root))] if demo_root is not None else []) + list(collections)
        self.shared: dict[str, SharedCollection] = {s.name: SharedCollection(s, settings, registry) for s in specs}
        self.uploads_root = Path(settings.home) / "uploads"
        self._corpora: dict[str, Corpus] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._stop = threading.Event()

    @property
    def demo(self) -> SharedCollection | None:
        """The bundled demo corpus, or None when the operator turned it off."""
        return self.shared.get(DEMO)

    @property
    def default_key(self) -> str:
        """What a new session searches: the operator's first collection, else the demo, else its uploads."""
        operators = [key for key in self.shared if key != DEMO]
        return operators[0] if operators else DEMO if DEMO in self.shared else MINE

    def key_of(self, session: Any) -> str:
        """The key of the corpus a session searches: its pick when the app serves it, else the default."""
        key = session.get("corpus") if isinstance(session, dict) else None
        return key if key == MINE or key in self.shared else self.default_key

    def start_indexing(self) -> None:
        """Open or index every shared collection in the background (rounds run one at a time)."""
        for collection in self.shared.values():
            collection.start()

    def shared_collection(self, key: str) -> SharedCollection:
        """The shared collection ``key``; CorpusError for a name the app does not serve."""
        collection = self.shared.get(key)
        if collection is None:
            raise CorpusError(f"this app serves no collection named {key!r}; pick one in the collection list")
        return collection

    # --- paths and corpora -------------------------------------------------------------------

    def folder(self, token: str) -> Path:
        """The upload folder of a session; CorpusError for anything but a token made here."""
        if not valid_token(token):
            raise CorpusError("this browser session has no upload folder; reload the page")
        return self.uploads_root / token / "docs"

    def state_root(self, token: str) -> Path:
        """Where a session's index and page store live (``corpora_dir`` of its corpus): beside its uploads."""
        return self.folder(token).parent / "index"

    def page_limits(self) -> PageLimits:
        """The pages one upload and one session's uploads may have, in the words a refusal uses."""
        s = self.settings
        return PageLimits(s.upload_max_pages_per_file, f"the {s.upload_max_pages_per_file:,} one file may have here "
                          "(MADQA_UPLOAD_MAX_PAGES_PER_FILE)", s.upload_max_pages,
                          f"the {s.upload_max_pages:,} one session's uploads may have here (MADQA_UPLOAD_MAX_PAGES)")

    def _lock(self, token: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(token, threading.Lock())

    def own_corpus(self, token: str) -> Corpus | None:
        """The session's upload corpus, or None when it has uploaded nothing yet."""
        if not valid_token(token):
            return None
        with self._guard:
            cached = self._corpora.get(token)
        if cached is not None:
            return cached
        folder = self.folder(token)
        if not folder.is_dir():
            return None
        try:
            corpus = Corpus.open(folder, self.state_root(token))
        except CorpusError:
            return None
        with self._guard:
            self._corpora[token] = corpus
        return corpus

    def corpus(self, session: dict[str, Any] | None, key: str | None = None) -> Corpus:
        """The corpus ``key`` (a shared collection's name or ``mine``; default: the session's choice) of a session:
        for a collection still indexing, what is searchable so far."""
        session = session if isinstance(session, dict) else {}
        key = key or session.get("corpus") or self.default_key
        if key == MINE:
            corpus = self.own_corpus(session.get("token", ""))
            if corpus is None:
                raise CorpusError("you have not uploaded any documents yet (Corpus tab)")
            return corpus
        return self.shared_collection(key).get()

    # --- uploads ---------------------------------------------------------------------------

    def add_files(self, token: str, uploads: Sequence[tuple[str, Path]],
                  progress: Progress | None = None) -> UploadOutcome:
        """Copy uploaded files (original name, temporary path) into the session folder and index them.

        Files over the limits are skipped, files that cannot be indexed are removed again; each
        gets a FileResult saying why.
        """
        folder = self.folder(token)
        outcome = UploadOutcome()
        with self._lock(token):
            folder.mkdir(parents=True, exist_ok=True)
            for leftover in (p for p in folder.iterdir() if p.is_file() and p.stat().st_size == 0):
                leftover.unlink(missing_ok=True)  # an empty file is no PDF: never counted toward the limits
            existing = sorted(p.name for p in folder.iterdir() if p.is_file())
            used_bytes = folder_bytes(folder.parent)  # the uploads and their index: all the session holds
            saved: dict[str, FileResult] = {}
            for n, (original, path) in enumerate(uploads, 1):
                shown = shorten_name(original)
                if progress:
                    progress(n - 1, len(uploads), f"saving {shown}")
                result = self._save_one(folder, shown, Path(path), existing, used_bytes)
                outcome.files.append(result)
                if result.saved_as:
                    existing.append(result.saved_as)
                    used_bytes += (folder / result.saved_as).stat().st_size
                    saved[result.saved_as] = result
            if not saved:
                return outcome

            def on_file(file: str, done: int, total: int) -> None:
                if progress:
                    progress(done - 1, total, f"indexing {file}")

            def on_index(name: str, done: int, total: int | None, detail: str) -> None:
                if progress:  # embedding for dense (MADQA_INDEX_RETRIEVERS): pages, windows/s, time left
                    progress(done, total or max(done, 1), f"{name}: embedding pages, {detail}")

            def on_page(file: str, page: int, pages: int, source: str) -> None:
                if progress:  # a scan is read page by page, seconds each: say which page, not just which file
                    progress(page, pages, page_words(file, page, pages, source))

            try:
                report = ingest(folder, self.settings, self.registry, progress=on_file, index_progress=on_index,
                                page_progress=on_page, corpora_dir=self.state_root(token),
                                page_limits=self.page_limits(), timeout_s=self.settings.upload_index_timeout_s,
                                timeout_words="an upload's indexing may take here (MADQA_UPLOAD_INDEX_TIMEOUT)")
            except (OSError, sqlite3.Error, MadqaError) as exc:  # the disk filled up, the upload took too long
                reason = str(exc) if isinstance(exc, MadqaError) else disk_reason(exc)
                self._undo(token, saved, f"could not be indexed ({reason}); nothing of this upload was kept")
                return outcome
            except BaseException:  # a bug: the upload is undone all the same, and the error goes on to be logged
                self._undo(token, saved, "could not be indexed (internal error); nothing of this upload was kept")
                raise
            outcome.report = report
            failures = dict(report.failures)
            corpus = Corpus.open(folder, self.state_root(token))
            for name, result in saved.items():
                if name in failures:
                    result.status, result.detail = "failed", failures[name]
                    (folder / name).unlink(missing_ok=True)  # never counted or retried again
                elif name in corpus.documents:
                    doc = corpus.documents[name]
                    result.status, result.pages = "indexed", doc.pages
                    notes = [w for f, w in report.warnings if f == name]
                    if not doc.sources.get("text") and not doc.sources.get("ocr") and not doc.sources.get("imported"):
                        notes.insert(0, "no searchable text on any page")
                    result.detail = "; ".join(n for n in (result.detail, *notes) if n)
            if not corpus.documents:  # nothing was ever indexed: no empty corpus is kept to be switched to
                corpus.close()
                self._remove_unlocked(token)
            else:
                with self._guard:
                    self._corpora[token] = corpus
            if progress:
                progress(len(uploads), len(uploads), "done")
        return outcome

    def _undo(self, token: str, saved: dict[str, FileResult], detail: str) -> None:
        """An upload whose ingest failed as a whole: its files go (what was there before stays), and a session
        left with no document keeps no folder (nothing unreachable is left until the sweep)."""
        folder = self.folder(token)
        for name, result in saved.items():
            (folder / name).unlink(missing_ok=True)
            result.saved_as, result.status, result.detail = None, "failed", detail
        if self.own_corpus(token) is None:
            self._remove_unlocked(token)

    def _save_one(self, folder: Path, shown: str, path: Path, existing: list[str], used_bytes: int) -> FileResult:
        try:
            size = path.stat().st_size
        except OSError:
            return FileResult(shown, None, "failed", "the upload did not arrive")
        if len(existing) >= MAX_UPLOAD_FILES:
            return FileResult(shown, None, "skipped", f"a session holds at most {MAX_UPLOAD_FILES} documents")
        if size > MAX_UPLOAD_MB * 2**20:
            return FileResult(shown, None, "skipped", f"larger than {MAX_UPLOAD_MB} MB")
        if used_bytes + size > MAX_SESSION_MB * 2**20:
            return FileResult(shown, None, "skipped", f"your uploads and their index would exceed {MAX_SESSION_MB} MB")
        name = safe_upload_name(shown, existing)
        try:
            shutil.copyfile(path, folder / name)
        except OSError as exc:
            (folder / name).unlink(missing_ok=True)  # no partial (or empty) file is left to count
            return FileResult(shown, None, "failed", f"could not be saved ({disk_reason(exc)})")
        detail = "" if name == shown else f"saved as {name}"
        return FileResult(shown, name, "saved", detail)

    def remove_all(self, token: str) -> None:
        """Delete a session's uploads and their index."""
        if not valid_token(token):
            return
        with self._lock(token):
            self._remove_unlocked(token)

    def _remove_unlocked(self, token: str) -> None:
        with self._guard:
            corpus = self._corpora.pop(token, None)
        if corpus is not None:
            corpus.close()
        folder = self.folder(token)
        shutil.rmtree(state_dir_for(folder, self.settings.corpora_dir), ignore_errors=True)  # where it was before
        shutil.rmtree(folder.parent, ignore_errors=True)

    def forget(self, session: Any) -> threading.Thread | None:
        """gr.State's delete callback: the session ended, so its uploads go (in the thread returned).

        Gradio calls this on its event loop, once a second, with no ``try`` around it: a callback that
        blocks (a session's lock held by an indexing job) stalls every visitor, and one that raises ends
        Gradio's state expiry for the rest of the process. So the removal runs in its own thread, and
        a removal that fails is left to the sweeper."""
        token = session.get("token") if isinstance(session, dict) else None
        if not valid_token(token):
            return None
        thread = threading.Thread(target=self._forget_now, args=(token,), name="madqa-forget", daemon=True)
        thread.start()
        return thread

    def _forget_now(self, token: str) -> None:
        try:
            self.remove_all(token)
        except Exception:  # the sweeper removes what is left once the folder is older than its lifetime
            return
        with self._guard:
            self._locks.pop(token, None)

    def touch(self, token: str) -> None:
        """Mark a session's uploads as in use (a corpus switch), so the sweeper keeps them."""
        if valid_token(token):
            try:
                os.utime(self.uploads_root / token)
            except OSError:
                pass  # no uploads yet

    def start_sweeping(self, interval_s: float, max_age_s: float) -> threading.Thread:
        """Sweep every ``interval_s`` in a background thread: sessions that never end (raw HTTP clients,
        states Gradio dropped) lose their uploads ``max_age_s`` after they were last used.

        The sweep comes at least once per lifetime (``min(interval_s, max_age_s)``), so uploads are gone
        within twice their lifetime even when Gradio's own expiry stopped (its task dies on any error)."""
        wait_s = max(1.0, min(interval_s, max_age_s))

        def loop() -> None:
            while not self._stop.wait(wait_s):
                try:
                    self.sweep(max_age_s)
                except Exception:  # a sweep that fails is tried again next time; it must not stop the loop
                    continue

        thread = threading.Thread(target=loop, name="madqa-upload-sweeper", daemon=True)
        thread.start()
        return thread

    def stop_sweeping(self) -> None:
        self._stop.set()

    def sweep(self, max_age_s: float = UPLOAD_MAX_AGE_S) -> int:
        """Remove upload folders untouched for ``max_age_s`` (ended sessions, or left by an earlier run)."""
        removed = 0
        if not self.uploads_root.is_dir():
            return 0
        now = time.time()
        for entry in self.uploads_root.iterdir():
            if not (entry.is_dir() and valid_token(entry.name)):
                continue
            try:
                newest = max((p.stat().st_mtime for p in entry.rglob("*")), default=0.0)
                newest = max(newest, entry.stat().st_mtime)
            except OSError:
                continue
            if now - newest > max_age_s:
                self.remove_all(entry.name)
                removed += 1
        return removed


def page_words(file: str, page: int, pages: int, source: str) -> str:
    """``OCR page 3/12 · report.pdf`` (``reading page …`` for a text layer): a long job's progress, per page."""
    what = "OCR page" if source == "ocr" else "reading page"
    return f"{what} {page}/{pages} · {shorten_name(file)}"


def disk_reason(exc: BaseException) -> str:
    """Why a write failed, for a visitor: the kind of failure, never a path."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "the server's disk is full"
    if isinstance(exc, sqlite3.Error) and "full" in str(exc).lower():
        return "the server's disk is full"
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__


def shorten_name(name: str, limit: int = 120) -> str:
    """An uploaded file's name for display: its last path component, printable, not too long."""
    base = str(name).replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C") or "(unnamed)"
    return base if len(base) <= limit else base[: limit - 1] + "…"
