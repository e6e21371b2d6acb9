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


def test_the_readme_goes_from_asking_to_deploying():
    """What it is and the two commands first, then the command line, the app, your own PDFs, deploying."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    path = ["Ask from the command line", "The web app", "Serve your own PDFs", "Deploy to Hugging Face Spaces"]
    assert headings[:len(path)] == path, headings


def test_the_readme_names_every_plugin_kind():
    from madqa.plugins import KINDS

    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    words = {6: "six", 7: "seven", 8: "eight", 9: "nine"}
    assert f"one of {words[len(KINDS)]} kinds" in text, f"the README must say there are {len(KINDS)} plugin kinds"
    named = {"retriever": "retrievers", "reranker": "rerankers", "query_strategy": "query-rewriting strategies",
             "backend": "model backends", "page_reader": "page readers", "embedder": "embedders", "tool": "agent tools"}
    assert all(named.get(kind, kind) in text for kind in KINDS), [k for k in KINDS if named.get(k, k) not in text]
