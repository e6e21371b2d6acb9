"""Every figure an evaluation report emits is described once, for both the CLI and the app."""

from __future__ import annotations

from typing import Any

import pytest

from madqa.evaluation import glossary
from madqa.evaluation import report as r
from madqa.evaluation.drift import add_embedding_drift
from tests.test_report import GOLD, PREDS

# nested figures whose keys are data (a histogram's step counts), not metrics
_DATA_KEYS = {"steps.histogram", "errors.counts", "errors.shares", "errors.n_wrong",
              "tokens.n_known", "cost_usd.n_known", "latency_s.n_known"}


def _paths(metrics: dict[str, Any]) -> set[str]:
    out = set()
    for key, value in metrics.items():
        out.add(key)
        if isinstance(value, dict):
            out |= {f"{key}.{sub}" for sub in value} - _DATA_KEYS
    return out


def test_every_figure_the_report_emits_has_an_entry() -> None:
    result = r.evaluate(PREDS, GOLD, by="category")
    drift = {"overall": {"query_drift_embedding": 0.1, "n": 1}, "representation": "toy",
             "by_hop_type": {}}
    add_embedding_drift(result, drift)
    missing = sorted(p for p in _paths(result["overall"]) if p not in glossary.TERMS)
    assert missing == []
    table = [label for label, _ in r.TABLE_ROWS]
    assert [label for label in table if label not in glossary.TERMS] == []


def test_definitions_say_what_the_numbers_are() -> None:
    wasted = glossary.term("wasted_effort_ratio")
    assert "divided by" in wasted.meaning and "found nothing new" not in wasted.explained()
    kuiper = glossary.term("kuiper")
    assert "lower is better" in kuiper.scale and "0" in kuiper.scale
    drift = glossary.term("query_drift_embedding")
    assert drift.meaning.lower() != drift.label.lower() and "embedding" in drift.meaning
    for key, entry in glossary.TERMS.items():
        assert "_" not in entry.label, key          # words on screen, no snake_case
        assert entry.meaning and entry.meaning.lower() != entry.label.lower(), key
    with pytest.raises(KeyError):
        glossary.term("no_such_metric")


def test_app_and_cli_read_the_same_entry() -> None:
    from madqa.ui.evaluate import metrics_frame

    frame = metrics_frame({"run": r.evaluate(PREDS, GOLD)})
    row = frame.set_index("metric").loc[glossary.term("wasted_effort_ratio").label]
    assert row["what it means"] == glossary.term("wasted_effort_ratio").explained()
    lines = glossary.legend(["kuiper", "not_a_metric"]).splitlines()
    assert len(lines) == 1 and lines[0].startswith("kuiper") and glossary.term("kuiper").scale in lines[0]


def test_cli_report_prints_the_legend(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    import json

    from madqa.cli import main

    gold, preds = tmp_path / "gold.jsonl", tmp_path / "run.jsonl"
    gold.write_text("".join(json.dumps(g) + "\n" for g in GOLD), encoding="utf-8")
    preds.write_text("".join(json.dumps(p) + "\n" for p in PREDS), encoding="utf-8")
    assert main(["eval", str(preds), "--gold", str(gold)]) == 0
    out = capsys.readouterr().out
    legend = out.split("what the numbers mean:\n", 1)[1]
    assert glossary.term("wasted_effort_ratio").explained() in legend
    assert glossary.term("kuiper").scale in legend
