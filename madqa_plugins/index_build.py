"""Retriever indexes built on first use, once, and opened once per process (not a plugin: helpers
the built-in retrievers share)."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


class OpenedIndexes(Generic[T]):
    """Opened indexes by folder, the ``max_open`` most recently used kept and shared by every
    retriever and reranker of the process (a generation's index never changes once written)."""

    def __init__(self, max_open: int) -> None:
        self.max_open = max_open
        self._opened: dict[str, T] = {}
        self._lock = threading.Lock()

    def get(self, folder: Path, open_index: Callable[[Path], T]) -> T:
        key = str(Path(folder).resolve())
        with self._lock:
            opened = self._opened.pop(key, None) or open_index(Path(folder))
            self._opened[key] = opened  # most recently used last
            while len(self._opened) > self.max_open:
                self._opened.pop(next(iter(self._opened)))
            return opened


def build_once(folder: Path, usable: Callable[[Path], bool], write: Callable[[Path], None]) -> None:
    """Have a usable index in ``folder``: one builder at a time (a lock file beside it; a waiter finds
    the index built), written by ``write`` into a temporary folder renamed into place, so a
    half-built index is never seen. An unusable leftover (an older version) is replaced."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if usable(folder):
            return
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{folder.name}-", dir=folder.parent))
        try:
            write(tmp)
            if folder.exists():
                shutil.rmtree(folder)
            os.rename(tmp, folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
