"""What the web app finds of earlier runs at start, and removes: uploads no live session owns.

A session's token lives in the server's memory only, so after a restart (or a crash mid-ingest) no one can reach
the upload folders on disk, nor their indexes: they are removed at start, and the log says what went, instead
of waiting for the sweeper's ``MADQA_SESSION_TTL``. Only ``MADQA_HOME/uploads`` is swept, and the index folders
an earlier version kept for uploads under ``MADQA_HOME/corpora`` (recognised by their manifest naming a folder
under ``uploads``); an operator's own collections are never touched. Two apps sharing one ``MADQA_HOME`` are
told apart by a lock the first holds for its lifetime (``claim_uploads``): the second sweeps nothing.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from madqa.ui.limits import folder_bytes

log = logging.getLogger("madqa.ui")
LOCK_NAME = "uploads.lock"  # beside the uploads folder, never in it (its entries are sessions' folders)


@dataclass(frozen=True)
class Leftovers:
    """What a start-up sweep removed."""

    folders: int = 0  # sessions' upload folders (with their indexes)
    indexes: int = 0  # upload indexes left under MADQA_HOME/corpora by an earlier version
    bytes: int = 0

    def __str__(self) -> str:
        return (f"removed {self.folders} upload folder(s) and {self.indexes} upload index(es) of earlier runs "
                f"({self.bytes / 2**20:.1f} MB): no live session owns them (session tokens live in memory)")


def claim_uploads(home: Path) -> IO[str] | None:
    """Hold ``MADQA_HOME/uploads.lock`` for the rest of this process (keep the file returned open); None when
    another running app holds it, so its sessions' uploads are live and must not be swept."""
    home.mkdir(parents=True, exist_ok=True)
    handle = open(home / LOCK_NAME, "w")  # noqa: SIM115 - held open for the app's lifetime
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def _upload_index(state: Path, uploads_root: Path) -> bool:
    """True when the corpus state folder ``state`` indexes a folder under ``uploads_root`` (its manifests say)."""
    real_uploads = os.path.realpath(uploads_root)
    for manifest in state.glob("gen-*/manifest.json"):
        try:
            root = json.loads(manifest.read_text(encoding="utf-8")).get("root", "")
        except (OSError, ValueError, AttributeError):
            continue
        real = os.path.realpath(str(root))
        if os.path.commonpath([real_uploads, real]) == real_uploads:
            return True
    return False


def remove_leftovers(uploads_root: Path, corpora_dir: Path) -> Leftovers:
    """Remove every upload folder under ``uploads_root`` and every upload index under ``corpora_dir``; call it
    at start, holding ``claim_uploads``, before any session exists."""
    folders = indexes = size = 0
    if uploads_root.is_dir():
        for entry in uploads_root.iterdir():
            size += folder_bytes(entry) if entry.is_dir() else entry.stat().st_size
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            folders += 1
    if corpora_dir.is_dir():
        for state in corpora_dir.iterdir():
            if state.is_dir() and _upload_index(state, uploads_root):
                size += folder_bytes(state)
                shutil.rmtree(state, ignore_errors=True)
                indexes += 1
    return Leftovers(folders, indexes, size)


def sweep_at_start(home: Path, uploads_root: Path, corpora_dir: Path) -> IO[str] | None:
    """The start-up sweep, logged: the lock held (keep it open) or None when another app shares ``home``."""
    lock = claim_uploads(home)
    if lock is None:
        log.warning("another madqa app uses %s: its sessions' uploads are left alone at start", home)
        return None
    found = remove_leftovers(uploads_root, corpora_dir)
    if found.folders or found.indexes:
        log.warning("%s", found)
    return lock
