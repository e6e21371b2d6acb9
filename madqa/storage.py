"""Where the app's state lives and whether it outlives a restart: one line for the operator's log.

A Space with persistent storage mounts ``/data``; when ``/data`` is there but not writable the app
used to fall back to the home cache silently, and every restart lost the indexes and page cache.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

DATA = Path("/data")


def _mount_of(path: Path, mounts: str) -> tuple[str, str]:
    """(mount point, filesystem type) of the mount holding ``path``, from /proc/mounts' text."""
    best, kind = "/", ""
    resolved = str(path.resolve())
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        point = parts[1].replace("\\040", " ")
        inside = resolved == point or resolved.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, parts[2]
    return best, kind


def state_line(home: Path, data: Path = DATA, mounts: str | None = None) -> str:
    """The log line: where state is, whether it persists, and where temp files go (or a warning)."""
    if mounts is None:
        try:
            mounts = Path("/proc/mounts").read_text(encoding="utf-8", errors="replace")
        except OSError:
            mounts = ""
    home = Path(home)
    temp = tempfile.gettempdir()
    under_data = data.is_dir() and (home.resolve() == data.resolve() or data.resolve() in home.resolve().parents)
    if data.is_dir() and not under_data and not os.access(data, os.W_OK):
        return (f"madqa: WARNING: {data} is mounted but not writable by uid {os.getuid()} (owned by uid "
                f"{data.stat().st_uid}); state in {home} is lost at every restart. Make {data} writable by uid "
                f"{os.getuid()}, or set MADQA_HOME.")
    if under_data:
        persistence = f"persistent storage {data}: kept across restarts"
    else:
        point, kind = _mount_of(home, mounts)
        if kind == "tmpfs":
            persistence = "in memory: lost at every restart"
        elif point == "/" and kind == "overlay":
            persistence = "the container's own filesystem: lost when the container restarts"
        else:
            persistence = f"on {point} ({kind or 'unknown filesystem'})"
    return f"madqa: state in {home} ({persistence}); temp files in {temp}"
