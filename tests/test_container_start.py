"""scripts/container-start, the image's start command: where state and temp files go before the app starts.

The script ends by exec-ing ``python app.py``; here ``python`` is a stand-in on PATH that prints the
environment the app would get, so no app starts. (The image itself is checked by scripts/space-check.)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "container-start"


def start(tmp_path: Path, **env: str) -> dict[str, str]:
    """The environment container-start hands to ``python app.py``, with ``env`` set on top of a bare one."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "python").write_text('#!/bin/sh\necho "ARGS=$*"\nenv\n', encoding="utf-8")
    (fake / "python").chmod(0o755)
    base = {"PATH": f"{fake}:/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    proc = subprocess.run([str(SCRIPT)], env={**base, **env}, capture_output=True, text=True, timeout=30,
                          cwd=REPO, check=True)
    return dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)


@pytest.mark.skipif(os.path.isdir("/data"), reason="this machine has a /data folder, which the script would use")
def test_without_data_state_and_temp_files_go_to_the_home_cache(tmp_path: Path) -> None:
    env = start(tmp_path)
    home = tmp_path / "home" / ".cache" / "madqa"
    assert env["ARGS"] == "app.py"
    assert env["MADQA_HOME"] == str(home) and home.is_dir()
    assert env["TMPDIR"] == str(home / "tmp") and env["GRADIO_TEMP_DIR"] == str(home / "tmp" / "gradio")
    assert (home / "tmp" / "gradio").is_dir()


def test_the_hosts_madqa_home_is_kept_and_its_temp_folder_emptied_at_start(tmp_path: Path) -> None:
    home = tmp_path / "state"
    (home / "tmp" / "gradio" / "old-upload").mkdir(parents=True)
    (home / "tmp" / "madqa-pages-x" / "p.png").parent.mkdir()
    (home / "tmp" / "madqa-pages-x" / "p.png").write_bytes(b"png")
    (home / "corpora").mkdir()
    (home / "corpora" / "index").write_text("kept", encoding="utf-8")
    env = start(tmp_path, MADQA_HOME=str(home))
    assert env["MADQA_HOME"] == str(home) and env["TMPDIR"] == str(home / "tmp")
    assert sorted(p.name for p in (home / "tmp").iterdir()) == ["gradio"]
    assert list((home / "tmp" / "gradio").iterdir()) == []
    assert (home / "corpora" / "index").read_text(encoding="utf-8") == "kept"


def test_temp_folders_the_host_sets_are_used_and_never_emptied(tmp_path: Path) -> None:
    tmp, gradio = tmp_path / "tmp", tmp_path / "gradio-uploads"
    (tmp / "someone-elses").mkdir(parents=True)
    env = start(tmp_path, MADQA_HOME=str(tmp_path / "state"), TMPDIR=str(tmp), GRADIO_TEMP_DIR=str(gradio))
    assert env["TMPDIR"] == str(tmp) and env["GRADIO_TEMP_DIR"] == str(gradio)
    assert (tmp / "someone-elses").is_dir() and gradio.is_dir()
