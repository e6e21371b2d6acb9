"""Building a retriever's index on first use, once (not a plugin: a helper ``tantivy`` and ``dense`` share)."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


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
