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

from madqa.text import plural
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
        return (f"removed {plural(self.folders, 'upload folder')} and "
                f"{plural(self.indexes, 'upload index', 'upload indexes')} of earlier runs "
                f"({self.bytes / 2**20:.1f} MB): no live session owns them (session tokens live in memory)")


class UploadsLock:
    """``MADQA_HOME/uploads.lock``, held by the app that owns the uploads area until ``release()`` (or until it is
    garbage-collected with its app: a raw descriptor, so an app dropped without a stop leaves no warning)."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor drops the lock
            self.fd = None

    def __del__(self) -> None:
        self.release()


def claim_uploads(home: Path) -> UploadsLock | None:
    """Hold ``MADQA_HOME/uploads.lock`` (until the lock returned is released); None when another running app
    holds it, so its sessions' uploads are live and must not be swept."""
    home.mkdir(parents=True, exist_ok=True)
    fd = os.open(home / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return UploadsLock(fd)


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


def sweep_at_start(home: Path, uploads_root: Path, corpora_dir: Path) -> UploadsLock | None:
    """The start-up sweep, logged: the lock held (keep it) or None when another app shares ``home``."""
    lock = claim_uploads(home)
    if lock is None:
        log.warning("another madqa app uses %s: its sessions' uploads are left alone at start", home)
        return None
    found = remove_leftovers(uploads_root, corpora_dir)
    if found.folders or found.indexes:
        log.warning("%s", found)
    return lock
