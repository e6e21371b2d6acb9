"""The README's first lines hold the run and test commands, and CI runs that same test command."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from tests.conftest import REPO


def readme_commands() -> tuple[str, str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    if text.startswith("---\n"):  # Hugging Face Spaces front matter must come first; the commands follow it
        text = text.split("\n---\n", 1)[1]
    lines = text.splitlines()[:6]
    commands = [line.split("#")[0].strip() for line in lines if line.startswith("scripts/install")]
    assert len(commands) == 2, lines
    return commands[0], commands[1]


def test_ci_runs_the_readme_test_command():
    _, test_command = readme_commands()
    pytest_part = test_command.split("&&")[-1].strip()
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert pytest_part in [line.strip() for line in ci]
    install_part = test_command.split("&&")[0].strip()
    assert "--dev" in install_part and install_part in [line.strip() for line in ci]


def test_readme_run_command_works(tmp_path):
    run_command, _ = readme_commands()
    python_part = run_command.split("&&")[-1].strip()
    if python_part.startswith(".venv/bin/python -m madqa"):
        argv = [sys.executable, *shlex.split(python_part)[1:]]
        env = {**os.environ, "MADQA_HOME": str(tmp_path / "home")}
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert "ANSWER:" in proc.stdout
    else:  # the web app: tests/test_ui_*.py start it the same way
        assert python_part == ".venv/bin/python app.py"
