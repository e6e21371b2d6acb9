"""The web app as a real process for the tests that need one (app.py on 127.0.0.1): wait until it serves, stop it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx


def wait_until_serving(proc: subprocess.Popen[bytes], url: str, log: Path, timeout: float = 120,
                       poll: float = 0.3) -> None:
    """Returns once ``url``'s Gradio config answers 200; fails with the app's log if it exits or times out."""
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, log.read_text()
        try:
            if httpx.get(url + "config", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the app did not start"
        time.sleep(poll)


def stop(proc: subprocess.Popen[bytes], grace: float = 20) -> None:
    """SIGTERM to the app's process group, SIGKILL after ``grace`` seconds."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
