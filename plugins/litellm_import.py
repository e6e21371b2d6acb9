"""Importing litellm: on first use, quiet and offline-friendly, or early in a background thread.

``import litellm`` takes seconds; the CLI starts it (``start_import``) as soon as it knows the backend
is litellm, so it overlaps collecting plugins and opening the corpus (bench/startup.py measures it).
"""

from __future__ import annotations

import os
import threading
from typing import Any

_import_lock = threading.Lock()
_import_thread: threading.Thread | None = None


def import_litellm() -> Any:
    """litellm, imported on first use (it takes seconds), quiet and offline-friendly.

    Without LITELLM_LOCAL_MODEL_COST_MAP litellm fetches its model/cost map from GitHub at import,
    retrying for seconds when offline; the map bundled with the installed version is used instead
    unless the variable is already set.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    thread = _import_thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()  # a background import under way: wait for it rather than import twice at once
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" prints
    return litellm


def start_import(model: str | None = None) -> None:
    """Start importing litellm in a background thread (the CLI calls this as soon as it knows the
    backend is litellm, so the import overlaps collecting plugins and opening the corpus); a no-op
    when already started. With ``model``, one offline mock completion for it follows, which loads
    the parts litellm imports lazily on a provider's first call (a few tenths of a second)."""
    global _import_thread
    with _import_lock:
        if _import_thread is not None:
            return
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        _import_thread = threading.Thread(target=_warm_up, args=(model,), name="madqa-import-litellm", daemon=True)
        _import_thread.start()


def _warm_up(model: str | None) -> None:
    try:
        import litellm

        litellm.suppress_debug_info = True
        if model:  # no request leaves the process: litellm's own mock
            litellm.completion(model=model, messages=[{"role": "user", "content": "warm-up"}], mock_response="ok",
                               api_key="warm-up", num_retries=0)
    except Exception:  # the foreground import raises it again, where it can be reported
        pass
