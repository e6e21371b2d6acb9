"""The CLI lets a process that used litellm end without the interpreter's slow last garbage collection
(bench/startup.py measures it): only for litellm configs, not with MADQA_FAST_EXIT=0, and without
losing output. Not a timed test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from madqa.cli import common  # noqa: E402
from madqa.settings import Settings, load_config  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def registered(monkeypatch):
    seen: list[object] = []
    monkeypatch.setattr(common, "_light_exit", False)
    monkeypatch.setattr(common.atexit, "register", seen.append)
    return seen


SETTINGS = Settings.from_env(env={})


def test_only_a_litellm_config_asks_for_the_light_exit_and_only_once(registered):
    common.fast_exit_for(SETTINGS, load_config("offline"))
    assert registered == []
    litellm_config = load_config("offline").with_overrides(backend="litellm", model="openai/gpt-4o-mini")
    common.fast_exit_for(SETTINGS, load_config("offline"), litellm_config)
    common.fast_exit_for(SETTINGS, litellm_config)
    assert registered == [common.gc.freeze]


def test_the_off_switch(registered):
    off = Settings.from_env(env={"MADQA_FAST_EXIT": "0"})
    common.fast_exit_for(off, load_config("offline").with_overrides(backend="litellm", model="openai/x"))
    assert registered == []


def test_a_light_exit_loses_no_output(tmp_path):
    script = ("from madqa.cli.common import light_exit\nfrom madqa_plugins.litellm.litellm_import import import_litellm\n"
              "light_exit(); import_litellm()\n"
              f"with open({str(tmp_path / 'rows.jsonl')!r}, 'a') as f:\n"
              "    f.writelines(f'{{\"n\": {n}}}\\n' for n in range(50000))\n"
              "for n in range(50000): print(n)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(n) for n in range(50000)]
    assert len((tmp_path / "rows.jsonl").read_text().splitlines()) == 50000
