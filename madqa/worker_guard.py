"""Worker processes (the PDF readers, the page drawers) that end with the app however it dies.

A worker used to notice a dead parent only at its next receive: ``kill -9`` of the app left a reader OCR-ing a
dead session's upload for its whole CPU budget (13 s and more). A worker cannot watch for that from a Python
thread alone: MuPDF (and the Tesseract inside it) holds the GIL while it reads or OCRs a page, so no other
thread runs until the page is done. Two guards, then:

- the kernel's: the worker asks for SIGKILL when its parent goes (``PR_SET_PDEATHSIG``, Linux). That signal
  fires when the *thread* that started the worker ends, not the process, and pooled workers outlive the web
  app's worker threads; so every worker is started by one thread kept for the life of the process
  (``spawn``), and the signal comes only when the process is gone;
- the worker's own: a thread that checks every ``POLL_S`` that its parent is still the one that started it
  (``os.getppid()``) and ends the worker when it is not, for systems without ``prctl`` (it runs between pages).

A worker whose parent was already gone when it started (the parent died between the two) ends at once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import queue
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import Any

POLL_S = 0.5  # how often a worker's watchdog checks its parent
PR_SET_PDEATHSIG = 1
_requests: queue.Queue[tuple[list[str], dict[str, Any], Future[subprocess.Popen[bytes]]]] = queue.Queue()
_spawner: threading.Thread | None = None
_spawner_lock = threading.Lock()


def spawn(args: list[str], **options: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(args, **options)``, run by the process's spawner thread (started on first use, never
    ending), so a worker's parent-death signal fires when this process ends, not when the calling thread does."""
    global _spawner
    with _spawner_lock:
        if _spawner is None or not _spawner.is_alive():  # not yet started, or this is a forked child
            _spawner = threading.Thread(target=_spawn_loop, name="madqa-spawner", daemon=True)
            _spawner.start()
    done: Future[subprocess.Popen[bytes]] = Future()
    _requests.put((args, options, done))
    return done.result()


def _spawn_loop() -> None:
    while True:
        args, options, done = _requests.get()
        try:
            done.set_result(subprocess.Popen(args, **options))
        except BaseException as exc:  # handed to the caller's thread, which raises it
            done.set_exception(exc)


def guard_parent(parent: int) -> None:
    """In a worker: end this process when ``parent`` (the pid that started it) is no longer its parent."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl here: the watchdog thread alone
    if os.getppid() != parent:
        os._exit(0)
    threading.Thread(target=_watch, args=(parent,), name="madqa-parent-watchdog", daemon=True).start()


def _watch(parent: int) -> None:
    event = threading.Event()
    while not event.wait(POLL_S):
        if os.getppid() != parent:
            os._exit(0)  # the parent is gone: nothing is waiting for what this worker does
