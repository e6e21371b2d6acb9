"""Importing litellm, on first use, quiet and offline-friendly.

``import litellm`` takes seconds of CPU (bench/startup.py: 3.5 s on the shared 2-core machine) and is
nearly all of ``madqa ask``'s start-up; importing it early in a background thread was measured and
saves nothing here (the import is CPU-bound and holds the GIL), so it is imported when the backend is
built. litellm also makes the end of a process slow (the interpreter's last garbage collection walks
its thousands of modules, about 1 s): the CLI ends such a process lightly (``madqa.cli.common.light_exit``).
"""

from __future__ import annotations

import os
from typing import Any


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
