"""Feeding the retrievers' ``update_index`` during an ingest, overlapping PDF reading with indexing.

Which retrievers: those named (``madqa index --retrievers``, ``MADQA_INDEX_RETRIEVERS``), else every
one with ``update_index`` except those setting ``ingest_by_default = False`` (``dense``: embedding is
slow). A retriever registered with ``takes_host=True`` is called ``update_index(folder, previous, added,
removed, host)``: ``host`` (a ``madqa.Host``) holds ``progress(done, total, detail)``, the corpus
``language`` and the registry's settings (``MADQA_*``, read once at start-up); its ``index_analysis`` is
called ``(text, language)``, and it declares ``index_by_language = True`` when its index depends on the
language. One of the deprecated form is given those as the keywords its signature names (``progress``,
``settings``, ``language``: naming ``language`` is what says its index depends on it).
A retriever factory may set ``index_usable(folder) -> bool`` to say whether the previous generation's
index can be extended (False: an older format, so it is rebuilt from every page), and
``update_index_streams = True`` to say its ``update_index`` takes the
added pages as a one-pass iterable, and ``index_analysis`` (a function of a page's text) to say what
its ``update_index`` computes from each page: when two or more indexing retrievers name the same
function (``whoosh`` and ``tantivy``: ``madqa_plugins.text.text_analysis.index_text``), it is called once per page
here and its result handed to each of them as ``page.analysis`` (None on pages that did not come
through here, e.g. a rebuild from the page store: then each computes it). An ``update_index`` or
``index_analysis`` taking a ``language`` keyword is given the corpus language (``madqa.languages``): its
index is rebuilt from the stored page texts when the language changes (``rebuild_indexes``). For an ingest reading many files on a machine with two or more
CPUs, such an index is then written by a forked child process that receives pages while this
process is still reading PDFs: reading (MuPDF) and indexing (pure Python) each get a core. Other
retrievers, small ingests, single-CPU machines and multi-threaded processes (a fork there could
inherit a held lock) get the plain path: the pages in a list, indexed here once reading is done.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import multiprocessing
import os
import shutil
import signal
import sqlite3
import threading
import traceback
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from madqa.contract import Host
from madqa.corpus import PAGES_DB, PageText, retriever_dir, unfold_ligatures
from madqa.errors import PluginError
from madqa.protocols import RetrieverIndexing, retriever_indexing
from madqa.settings import Settings

IndexProgress = Callable[[str, int, "int | None", str], None]  # (retriever, pages done, total or None, detail)
STREAM_MIN_FILES = 16  # below this many files to read, a child process costs more than it saves
BATCH_PAGES = 64


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def index_names(registry: Any, wanted: list[str] | None) -> list[str]:
    """The retrievers whose indexes an ingest writes: ``wanted`` (a retriever without an index of its
    own, like ``hybrid``, stands for the parts it names in ``index_parts``), else every available one
    with ``update_index`` that does not set ``ingest_by_default = False``. PluginError for a name that
    is unknown, unavailable or has nothing to index."""
    def indexing(name: str) -> RetrieverIndexing:
        return retriever_indexing(registry.get("retriever", name).factory)  # PluginError: unknown or unavailable

    def indexes(name: str) -> bool:
        return indexing(name).indexes

    if wanted is None:
        return [n for n in registry.names("retriever") if indexes(n) and indexing(n).ingest_by_default]
    names: list[str] = []
    for name in wanted:
        parts = [name] if indexes(name) else list(indexing(name).index_parts)
        if not parts:
            raise PluginError(f"retriever {name!r} keeps no index of its own to build at ingest")
        for part in parts:
            if not indexes(part):
                raise PluginError(f"retriever {part!r} keeps no index of its own to build at ingest")
            if part not in names:
                names.append(part)
    return names


def shared_analysis(factories: list[Any]) -> Callable[[str], Any] | None:
    """The ``index_analysis`` that two or more of these retriever factories name, when every one naming
    one names the same; else None (nothing is computed for them)."""
    named = [a for f in factories if (a := retriever_indexing(f).index_analysis) is not None]
    return named[0] if len(named) >= 2 and all(a is named[0] for a in named) else None


def can_stream(files_to_read: int) -> bool:
    """True when a child process may index while this one reads."""
    return (files_to_read >= STREAM_MIN_FILES and _cpus() >= 2 and threading.active_count() == 1
            and "fork" in multiprocessing.get_all_start_methods())


def _in_language(function: Callable[..., Any] | None, language: str, host_form: bool) -> Callable[..., Any] | None:
    """``function`` (an ``index_analysis``) of a page's text alone, in ``language``: called ``(text, language)``
    when named by retrievers of the host form, else given ``language`` when it takes that keyword."""
    if function is None:
        return None
    if host_form:
        return lambda text: function(text, language)
    if "language" in inspect.signature(function).parameters:
        return functools.partial(function, language=language)
    return function


Update = Callable[[Path, "Path | None", Any, set[str]], None]  # update_index with all but its pages bound


def bound_update(registry: Any, name: str, language: str, progress: IndexProgress | None) -> tuple[Update, bool]:
    """Retriever ``name``'s ``update_index`` as ``(folder, previous, added, removed)``, and whether its index
    depends on the corpus language (rebuilt when it changes)."""
    component = registry.get("retriever", name)
    indexing = retriever_indexing(component.factory)
    update = indexing.update_index
    if update is None:
        raise PluginError(f"retriever {name!r} keeps no index of its own to build at ingest")
    on_progress = functools.partial(progress, name) if progress else None
    if component.takes_host:
        host = Host(settings=getattr(registry, "settings", None) or Settings(), registry=registry, language=language,
                    progress=on_progress)
        write: Callable[..., None] = update
        return (lambda folder, previous, added, removed: write(folder, previous, added, removed, host),
                indexing.index_by_language)
    # the deprecated form (a factory registered without takes_host): what its signature names
    wanted = inspect.signature(update).parameters
    if "progress" in wanted:
        update = functools.partial(update, progress=on_progress)
    if "settings" in wanted:
        update = functools.partial(update, settings=getattr(registry, "settings", None))
    if "language" in wanted:
        return functools.partial(update, language=language), True
    return update, False


def rebuild_indexes(registry: Any, gen_dir: Path, retrievers: list[str] | None, language: str,
                    progress: IndexProgress | None = None) -> list[str]:
    """Write again, from the page store of the generation at ``gen_dir``, every index whose analysis depends
    on the language (its ``update_index`` takes ``language``), in ``language``; returns their names."""
    rebuilt = []
    for name in index_names(registry, retrievers):
        update, speaks = bound_update(registry, name, language, progress)
        if not speaks:
            continue
        folder = retriever_dir(gen_dir, name)
        shutil.rmtree(folder, ignore_errors=True)
        update(folder, None, _every_page(gen_dir / PAGES_DB), set())
        rebuilt.append(name)
    return rebuilt


def _receive(conn: Connection) -> Iterator[PageText]:
    while (batch := conn.recv()) is not None:
        for row in batch:
            yield PageText(*row)


def _every_page(db_path: Path) -> Iterator[PageText]:
    """Every page of the generation being written, read from its page store one at a time."""
    db = sqlite3.connect(db_path)
    try:
        rows = db.execute("SELECT file, page, text, source FROM pages ORDER BY file, page")
        yield from (PageText(file, page, unfold_ligatures(text), source) for file, page, text, source in rows)
    finally:
        db.close()


def _die_with_parent(parent: int) -> None:
    """Have the kernel kill this child when its parent dies (Linux), so a killed ingest leaves no indexer
    holding the corpus lock it inherited."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _index_in_child(update: Callable[..., None], folder: Path, previous: Path | None, removed: set[str],
                    pages: Connection, our_end: Connection, result: Connection, parent: int) -> None:
    our_end.close()  # the fork copied the parent's end of the pipe: close it, so the parent's exit ends recv()
    _die_with_parent(parent)
    try:
        update(folder, previous, _receive(pages), removed)
    except BaseException:  # reported to the parent, which raises it as a PluginError
        result.send(traceback.format_exc(limit=8))
    else:
        result.send(None)


class IndexFeed:
    """Every indexing retriever of a registry, fed the pages of one ingest as they are read."""

    def __init__(self, registry: Any, tmp_dir: Path, previous: Any, removed: set[str], files_to_read: int,
                 retrievers: list[str] | None = None, progress: IndexProgress | None = None,
                 language: str = "en") -> None:
        self.inline: list[tuple[str, Callable[..., None], Path, Path | None]] = []
        self.rebuild: list[tuple[str, Callable[..., None], Path]] = []
        self.tmp_dir = tmp_dir
        self.children: list[tuple[str, Any, Connection, Connection]] = []  # (name, a forked Process, ...)
        self.pages: list[PageText] = []
        self.batch: list[tuple[str, int, str, str, Any]] = []  # ... and the shared analysis
        self.removed = removed
        stream = can_stream(files_to_read)
        names = index_names(registry, retrievers)
        components = [registry.get("retriever", n) for n in names]
        analysis = shared_analysis([c.factory for c in components])
        self.analysis = _in_language(analysis, language, all(
            c.takes_host for c in components if retriever_indexing(c.factory).index_analysis is analysis))
        relanguaged = previous is not None and previous.language != language
        for name in names:
            indexing = retriever_indexing(registry.get("retriever", name).factory)
            if indexing.update_index is None:  # index_names() keeps only retrievers that index
                continue
            update, speaks = bound_update(registry, name, language, progress)
            folder = retriever_dir(tmp_dir, name)
            prev_folder = previous.retriever_dir(name) if previous else None
            prev_folder = prev_folder if prev_folder and prev_folder.is_dir() else None
            usable = indexing.index_usable
            if prev_folder is not None and usable is not None and not usable(prev_folder):
                prev_folder = None  # written by an older version (other analysis): rebuilt, not extended
            if relanguaged and speaks:
                prev_folder = None  # analysed in the corpus's former language: rebuilt from the stored texts
            if previous is not None and prev_folder is None:
                # no usable index in the previous generation (the retriever came later, or its format
                # changed): the added pages alone would miss every unchanged file, so it gets every page
                self.rebuild.append((name, update, folder))
            elif stream and indexing.update_index_streams:
                self._start_child(name, update, folder, prev_folder)
            else:
                self.inline.append((name, update, folder, prev_folder))

    def _start_child(self, name: str, update: Callable[..., None], folder: Path, previous: Path | None) -> None:
        ctx = multiprocessing.get_context("fork")
        pages_out, pages_in = ctx.Pipe(duplex=False)[::-1]  # (writer for us, reader for the child)
        result_in, result_out = ctx.Pipe(duplex=False)
        child = ctx.Process(target=_index_in_child, name=f"madqa-index-{name}", daemon=True,
                            args=(update, folder, previous, self.removed, pages_in, pages_out, result_out, os.getpid()))
        child.start()
        pages_in.close()
        result_out.close()
        self.children.append((name, child, pages_out, result_in))

    def add(self, pages: list[PageText]) -> None:
        """Pages just read (with their shared analysis): queued for the inline indexers, sent on to the
        children in batches."""
        if self.analysis is not None and (self.inline or self.children):
            analyze = self.analysis
            pages = [dataclasses.replace(p, analysis=analyze(p.text)) for p in pages]
        if self.inline:
            self.pages.extend(pages)
        if self.children:
            self.batch.extend((p.file, p.page, p.text, p.source, p.analysis) for p in pages)
            if len(self.batch) >= BATCH_PAGES:
                self._send(self.batch)
                self.batch = []

    def _send(self, message: Any) -> None:
        for name, _, conn, _ in self.children:
            try:
                conn.send(message)
            except (BrokenPipeError, EOFError):
                raise PluginError(f"retriever {name!r} stopped writing its index: {self._error(name)}") from None

    def _error(self, name: str) -> str:
        for child_name, child, _, result in self.children:
            if child_name == name:
                child.join(timeout=30)
                try:
                    if result.poll(1):
                        return result.recv() or "no error reported"
                except EOFError:
                    pass
                return f"exit code {child.exitcode}"
        return "unknown"

    def finish(self) -> None:
        """Index what is left and wait for every index; PluginError when a child failed."""
        if self.children:
            self._send(self.batch)
            self._send(None)
        for _, update, folder, prev_folder in self.inline:
            update(folder, prev_folder, self.pages, self.removed)
        for _, update, folder in self.rebuild:
            update(folder, None, _every_page(self.tmp_dir / PAGES_DB), set())
        failures = []
        for name, child, conn, result in self.children:
            try:
                error = result.recv()
            except EOFError:
                error = f"the indexing process died (exit code {child.exitcode})"
            child.join()
            conn.close()
            if error:
                failures.append(f"retriever {name!r} failed to write its index:\n{error}")
        self.children = []
        if failures:
            raise PluginError("\n".join(failures))

    def abort(self) -> None:
        """Stop the children (an ingest failed half-way)."""
        for _, child, conn, _ in self.children:
            conn.close()
            child.terminate()
            child.join(timeout=10)
        self.children = []
