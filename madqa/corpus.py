"""A corpus: a folder of PDFs, ingested into page texts, a manifest and search indexes.

State lives under ``MADQA_HOME/corpora/<name>-<hash>/`` in *generations*: each ingest writes a
complete new generation folder, then flips the ``CURRENT`` pointer with an atomic rename, so a
run killed half-way leaves the previous generation fully usable.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import sqlite3
import threading
import unicodedata
import weakref
from collections.abc import Iterator
from pathlib import Path

from madqa import abbreviations
from madqa.contract import DocumentRecord as DocumentRecord  # moved to the contract: kept importable here
from madqa.contract import PageText as PageText
from madqa.errors import CorpusError, IndexDamagedError
from madqa.languages import DEFAULT as DEFAULT_LANGUAGE

MANIFEST = "manifest.json"
PAGES_DB = "pages.sqlite"
READERS_LOCK = "readers.lock"  # every open Corpus holds a shared lock on its generation's file
CURRENT = "CURRENT"
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f]")
_LIGATURE = re.compile("[\ufb00-\ufb06]")  # ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ: Latin presentation forms


def unfold_ligatures(text: str) -> str:
    """``text`` with each typographic ligature spelt out in its letters (``ﬁle`` -> ``file``): TeX-made PDFs
    write them in their text layers, and a word holding one matches no typed query and no typed answer."""
    return _LIGATURE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def state_dir_for(root: Path, corpora_dir: Path) -> Path:
    """Where the state of the corpus rooted at ``root`` lives: stable for the folder's real path."""
    real = Path(os.path.realpath(root))
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", real.name)[:40] or "corpus"
    digest = hashlib.sha1(str(real).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return corpora_dir / f"{slug}-{digest}"


def safe_relpath(path: Path, root: Path) -> str:
    """The path of a file relative to ``root`` with forward slashes; CorpusError when unusable."""
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        raise CorpusError(f"{path} is outside the corpus folder {root}") from None
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        raise CorpusError("file name is not valid UTF-8; rename it") from None
    if _BAD_NAME.search(rel):
        raise CorpusError("file name contains control characters; rename it")
    return rel


class Corpus:
    """An ingested corpus, read-only: documents, page texts and the folder retrievers index into."""

    def __init__(self, root: Path, state_dir: Path, generation: str) -> None:
        self.root = Path(root)
        self.state_dir = Path(state_dir)
        self.generation = generation
        self.gen_dir = self.state_dir / generation
        try:
            data = json.loads((self.gen_dir / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise IndexDamagedError(f"the index of {root} is damaged (manifest: {exc}); `madqa index {root}` "
                                    "rebuilds it") from exc
        self.manifest = data
        self.documents: dict[str, DocumentRecord] = {
            d["file"]: DocumentRecord.from_dict(d) for d in data.get("documents", [])
        }
        self._db_lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._abbreviations: list[tuple[str, str, str, int]] | None = None
        fd = _hold_shared(self.gen_dir / READERS_LOCK)
        self._release = weakref.finalize(self, os.close, fd) if fd is not None else None  # close() or GC

    @classmethod
    def open(cls, root: str | Path, corpora_dir: Path) -> Corpus:
        """The current generation of the corpus at ``root``; CorpusError if it was never indexed."""
        root = Path(root)
        if not root.is_dir():
            raise CorpusError(f"corpus folder {str(root)!r} does not exist or is not a folder")
        state = state_dir_for(root, corpora_dir)
        generation = read_current(state)
        if generation is None:
            raise CorpusError(f"{root} is not indexed yet: run `python -m madqa index {root}`")
        return cls(root, state, generation)

    @property
    def name(self) -> str:
        return self.root.name

    @property
    def language(self) -> str:
        """The code of the language the corpus is analysed in (``madqa.languages``): set at ingest or
        detected there; ``en`` for a corpus ingested before languages were stored."""
        return str(self.manifest.get("language", {}).get("code") or DEFAULT_LANGUAGE)

    @property
    def language_note(self) -> str:
        """How the language was chosen, for a corpus status (``set with --language``, what was detected
        from how much text, what analysis or OCR data is missing here)."""
        info = self.manifest.get("language", {})
        return str(info.get("note") or "English (en): stored before languages were (every corpus was English)")

    def __repr__(self) -> str:
        return f"Corpus({str(self.root)!r}, generation={self.generation!r}, files={len(self.documents)})"

    # --- documents and pages -------------------------------------------------------------

    def document(self, file: str) -> DocumentRecord:
        """The record of ``file`` (relative path); CorpusError when it is not in the corpus."""
        doc = self.documents.get(file)
        if doc is None:
            raise CorpusError(f"no file {file!r} in this corpus")
        return doc

    def pdf_path(self, file: str) -> Path:
        """The absolute path of an ingested file; only manifest names are accepted, never raw paths."""
        return self.root / self.document(file).file

    def has_page(self, file: str, page: int) -> bool:
        doc = self.documents.get(file)
        return doc is not None and isinstance(page, int) and 1 <= page <= doc.pages

    @property
    def page_count(self) -> int:
        return sum(d.pages for d in self.documents.values())

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            uri = (self.gen_dir / PAGES_DB).as_uri() + "?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        return self._db

    def page_text(self, file: str, page: int) -> str:
        """The stored text of a page ('' when it has none); ligatures spelt out (a generation stored before
        ingest did so reads like a new one)."""
        with self._db_lock, self._damaged():
            row = self._conn().execute("SELECT text FROM pages WHERE file=? AND page=?", (file, page)).fetchone()
        return unfold_ligatures(row[0]) if row else ""

    @contextlib.contextmanager
    def _damaged(self) -> Iterator[None]:
        """sqlite's errors on a truncated or corrupt page store, as IndexDamagedError."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise IndexDamagedError(f"the page store of {self.root} is damaged ({exc}); `madqa index {self.root}` "
                                    "rebuilds it") from None

    def page_source(self, file: str, page: int) -> str | None:
        """Where one page's text came from, or None when there is no such page."""
        with self._db_lock, self._damaged():
            row = self._conn().execute("SELECT source FROM pages WHERE file=? AND page=?", (file, page)).fetchone()
        return row[0] if row else None

    def page_sources(self) -> dict[tuple[str, int], str]:
        """Where each page's text came from (text, ocr, imported, none), without loading the texts."""
        with self._db_lock, self._damaged():
            rows = self._conn().execute("SELECT file, page, source FROM pages").fetchall()
        return {(file, page): source for file, page, source in rows}

    def iter_pages(self) -> Iterator[PageText]:
        """Every page's text, in file then page order (ligatures spelt out, as ``page_text``)."""
        with self._db_lock, self._damaged():
            pages = self._pages_unlocked()
        yield from pages

    def abbreviations(self) -> list[tuple[str, str, str, int]]:
        """(short, long, file, page) for every "Full Name (FN)" the pages define, found at ingest.

        A generation ingested before this table existed is mined now, once per Corpus object.
        """
        if self._abbreviations is None:
            with self._db_lock, self._damaged():
                conn = self._conn()
                if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                                (abbreviations.TABLE,)).fetchone():
                    rows = conn.execute(f"SELECT short, long, file, page FROM {abbreviations.TABLE} "
                                        "ORDER BY file, page").fetchall()
                else:
                    rows = [(s, lf, p.file, p.page) for p in self._pages_unlocked() for s, lf in abbreviations.mine(p.text)]
            self._abbreviations = [(str(s), str(lf), str(f), int(p)) for s, lf, f, p in rows]
        return list(self._abbreviations)

    def _pages_unlocked(self) -> list[PageText]:
        rows = self._conn().execute("SELECT file, page, text, source FROM pages ORDER BY file, page").fetchall()
        return [PageText(file, page, unfold_ligatures(text), source) for file, page, text, source in rows]

    def retriever_dir(self, name: str) -> Path:
        """The folder where retriever ``name`` keeps its index for this generation."""
        return retriever_dir(self.gen_dir, name)

    def close(self) -> None:
        with self._db_lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            if self._release is not None:
                self._release()  # this generation may now be removed by a later ingest


def retriever_dir(gen_dir: Path, name: str) -> Path:
    """The folder of retriever ``name``'s index in the generation at ``gen_dir`` (also one being written)."""
    return gen_dir / "retrievers" / re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _hold_shared(path: Path) -> int | None:
    """A file descriptor holding a shared lock on ``path`` (None when the folder is read-only)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return None
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def in_use(gen_dir: Path) -> bool:
    """True while some open Corpus, in any process, reads the generation in ``gen_dir``."""
    try:
        with open(gen_dir / READERS_LOCK, "a+b") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
            return False
    except OSError:
        return False


def read_current(state_dir: Path) -> str | None:
    """The name of the current generation, or None when there is none (or it vanished)."""
    try:
        name = (state_dir / CURRENT).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return name if name and (state_dir / name / MANIFEST).is_file() else None


def write_current(state_dir: Path, generation: str) -> None:
    """Point CURRENT at ``generation`` atomically (write a temp file, fsync, rename)."""
    tmp = state_dir / f"{CURRENT}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(generation)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, state_dir / CURRENT)
    dir_fd = os.open(state_dir, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
