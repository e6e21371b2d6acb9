"""bench/loop_identity.py, the before/after check of the loop: what it masks, and that it fails on a real change."""

from __future__ import annotations

import json

from bench import loop_identity as li
from madqa.types import ModelStep, ToolCall, Usage


def test_timing_ids_and_paths_are_masked_but_nothing_else():
    step = ModelStep(1, "searching", (ToolCall("search_documents", {"query": "x"}, "call_29fefc0c34844ae4a6999225e86f"),),
                     Usage(10, 2), 0.001, 1.234)
    other = ModelStep(1, "searching", (ToolCall("search_documents", {"query": "x"}, "call_d98bbdb53df147cbbb777ea5aa1c"),),
                      Usage(10, 2), 0.001, 9.9)
    assert li.normal(step) == li.normal(other)
    assert "elapsed_s" not in li.normal(step)
    assert li.normal(step) != li.normal(ModelStep(1, "searching", (ToolCall("search_documents", {"query": "y"}, "c"),),
                                                  Usage(10, 2), 0.001, 1.0))
    assert li.normal("read /tmp/pytest-of-root/pytest-3/x/report.pdf at 127.0.0.1:40121") == "read <path> at <addr>"


def test_compare_says_equal_and_fails_on_one_changed_answer(tmp_path, capsys):
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    after.mkdir()
    row = {"id": "q1", "config": "offline", "answer": ["148,612"], "latency_s": 1.0}
    (before / "set.jsonl").write_text(json.dumps(row) + "\n")
    (after / "set.jsonl").write_text(json.dumps({**row, "latency_s": 2.0}) + "\n")
    assert li.compare(before, after) == 0
    (after / "set.jsonl").write_text(json.dumps({**row, "answer": ["148.6"]}) + "\n")
    assert li.compare(before, after) == 1
    assert "1 rows differ" in capsys.readouterr().out
