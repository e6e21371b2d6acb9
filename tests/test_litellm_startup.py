"""The CLI starts importing litellm early, in a background thread, only when a config uses it (the
import takes seconds; bench/startup.py measures what it saves). Not a timed test."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from madqa.cli import common  # noqa: E402
from madqa.settings import load_config  # noqa: E402
from plugins import litellm_import  # noqa: E402


@pytest.fixture
def no_thread(monkeypatch):
    monkeypatch.setattr(litellm_import, "_import_thread", None)
    monkeypatch.delenv("MADQA_NO_EARLY_IMPORT", raising=False)
    yield
    thread = litellm_import._import_thread
    if thread is not None:
        thread.join(60)


def test_a_litellm_config_starts_the_import_and_the_backend_waits_for_it(no_thread):
    common.import_backend_early(load_config("offline"), load_config("offline").with_overrides(
        backend="litellm", model="openai/gpt-4o-mini"))
    thread = litellm_import._import_thread
    assert thread is not None and thread.name == "madqa-import-litellm"
    module = litellm_import.import_litellm()  # joins the thread rather than importing at the same time
    assert not thread.is_alive() and module.suppress_debug_info is True


def test_other_backends_and_the_off_switch_start_nothing(no_thread, monkeypatch):
    common.import_backend_early(load_config("offline"))
    assert litellm_import._import_thread is None
    monkeypatch.setenv("MADQA_NO_EARLY_IMPORT", "1")
    common.import_backend_early(load_config("offline").with_overrides(backend="litellm", model="openai/x"))
    assert litellm_import._import_thread is None
