"""Importing litellm, on first use, quiet and offline-friendly; and ending a process that imported it fast.

``import litellm`` takes seconds of CPU (bench/startup.py: 3.5 s on the shared 2-core machine) and is
nearly all of ``madqa ask``'s start-up; importing it early in a background thread was measured and
saves nothing here (the import is CPU-bound and holds the GIL), so it is imported when the backend is
built. litellm also makes the end of a process slow: the interpreter's last garbage collection walks
its thousands of modules (about 1 s); ``light_exit`` freezes the collector once every exit handler
has run, for a process that ends after its command (the CLI).
"""

from __future__ import annotations

import atexit
import gc
import os
import threading
from typing import Any

_exit_lock = threading.Lock()
_light_exit = False


def import_litellm() -> Any:
    """litellm, imported on first use (it takes seconds), quiet and offline-friendly.

    Without LITELLM_LOCAL_MODEL_COST_MAP litellm fetches its model/cost map from GitHub at import,
    retrying for seconds when offline; the map bundled with the installed version is used instead
    unless the variable is already set.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" prints
    return litellm


def light_exit() -> bool:
    """At exit, after every exit handler registered later (litellm's own among them: they run first),
    freeze the garbage collector so the interpreter skips its last full collection over litellm's
    modules. For a process that ends after its command (the CLI), called before litellm is imported;
    every file madqa writes is closed by then and standard streams are still flushed. Returns whether
    it was registered now (False: already)."""
    global _light_exit
    with _exit_lock:
        if _light_exit:
            return False
        atexit.register(gc.freeze)
        _light_exit = True
        return True
