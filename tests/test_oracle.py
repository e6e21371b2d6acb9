"""The oracle condition (the first search returns the gold pages) and the oracle gap."""

from __future__ import annotations

import json

import pytest

from madqa.cli import main
from madqa.corpus import Corpus
from madqa.evaluation.oracle import gap_bin, oracle_gap
from madqa.evaluation.runner import run_batch
from madqa.index import ingest
from madqa.settings import load_config
from tests.conftest import make_pdf

QUESTIONS = [
    {"id": "q1", "question": "What colour is the heron?", "answer_variants": [["grey"]],
     "evidence": [{"document": "birds.pdf", "page": 2}, {"document": "more/notes.pdf", "page": 1}]},
    {"id": "q2", "question": "What colour is the finch?", "answer_variants": [["red"]],
     "evidence": [{"document": "birds.pdf", "page": 1}]},
]


@pytest.fixture
def corpus(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "birds.pdf", ["The finch is red.", "The heron is grey.", "Nothing here."])
    make_pdf(root / "more" / "notes.pdf", ["Herons wade."])
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


def scripted_run(corpus, registry, settings, **kw):
    config = load_config("offline").with_overrides(backend="scripted", top_k=1)
    script = [{"search": "zzz unrelated"}, {"search": "finch"}, {"answer": ["grey"], "citations": []}]
    return run_batch(QUESTIONS[:1], corpus, config, registry, settings, backend_options={"script": script}, **kw)


def searches(row):
    return [s for s in row["trajectory"] if s["type"] == "search"]


def test_oracle_shows_every_gold_page_as_the_first_result_then_searches_as_usual(corpus, registry, settings):
    row = scripted_run(corpus, registry, settings, oracle=True)[0]
    first, second = searches(row)
    assert row["oracle"] is True and first["query"] == "zzz unrelated"
    # all gold pages, though top_k is 1 and the query matches nothing
    assert [(h["file"], h["page"]) for h in first["hits"]] == [("birds.pdf", 2), ("more/notes.pdf", 1)]
    assert [(p["file"], p["page"]) for p in first["new_pages"]] == [("birds.pdf", 2), ("more/notes.pdf", 1)]
    assert first["retriever_note"].startswith("oracle")
    assert [(h["file"], h["page"]) for h in second["hits"]] == [("birds.pdf", 1)]  # the retriever again
    assert row["search_history"][0] == {"iteration": 1, "query": "zzz unrelated", "num_results": 2}


def test_without_oracle_the_first_search_is_a_real_search(corpus, registry, settings):
    row = scripted_run(corpus, registry, settings)[0]
    assert "oracle" not in row
    assert not (searches(row)[0]["retriever_note"] or "").startswith("oracle")
    assert ("birds.pdf", 2) not in {(h["file"], h["page"]) for h in searches(row)[0]["hits"]}


def test_oracle_without_gold_evidence_is_an_error_row(corpus, registry, settings):
    config = load_config("offline").with_overrides(backend="scripted")
    rows = run_batch([{"id": "x", "question": "Anything?"}], corpus, config, registry, settings,
                     backend_options={"script": []}, oracle=True)
    assert rows[0]["error"].startswith("input:") and "gold evidence" in rows[0]["error"]


def row(qid, question, answer):
    return {"id": qid, "question": question, "answer": [answer], "citations": [], "search_history": []}


def test_gap_bins_split_the_wrong_answers():
    gold = QUESTIONS + [{"id": "q3", "question": "Q3?", "answer_variants": [["x"]],
                         "evidence": [{"document": "a.pdf", "page": 1}]}]
    run = [row("q1", "What colour is the heron?", "blue"), row("q2", "What colour is the finch?", "blue"),
           row("q3", "Q3?", "x")]
    oracle = [row("q1", "What colour is the heron?", "grey"), row("q2", "What colour is the finch?", "green"),
              row("q3", "Q3?", "y")]
    gap = oracle_gap(run, oracle, gold)
    o = gap["overall"]
    assert (o["n"], o["lost_to_retrieval"], o["lost_to_reading"], o["right_without_oracle_only"]) == (3, 1, 1, 1)
    assert o["accuracy"] == pytest.approx(1 / 3) and o["oracle_accuracy"] == pytest.approx(1 / 3)
    assert o["share_of_errors_retrieval"] == 0.5
    assert gap["by_hop_type"]["cross_doc"]["lost_to_retrieval"] == 1
    assert {q["id"]: q["bin"] for q in gap["questions"]} == {
        "q1": "lost_to_retrieval", "q2": "lost_to_reading", "q3": "right_without_oracle_only"}
    assert gap_bin(True, True) == "right_both"


def test_run_and_eval_with_the_oracle_end_to_end(tmp_path, monkeypatch, capsys):
    from tests.conftest import DEMO_DOCS, DEMO_QUESTIONS

    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines(keepends=True)[:4]))
    plain, oracle = tmp_path / "plain.jsonl", tmp_path / "oracle.jsonl"
    base = ["run", "--corpus", str(DEMO_DOCS), "--questions", str(questions)]
    assert main([*base, "-o", str(plain)]) == 0
    assert main([*base, "-o", str(oracle), "--oracle"]) == 0
    rows = [json.loads(line) for line in oracle.read_text().splitlines()]
    gold = [json.loads(line) for line in questions.read_text().splitlines()]
    for r, g in zip(rows, gold, strict=True):
        first = next(s for s in r["trajectory"] if s["type"] == "search")
        assert {(h["file"], h["page"]) for h in first["hits"]} == {(e["document"], e["page"]) for e in g["evidence"]}
    capsys.readouterr()
    assert main(["eval", str(plain), "--oracle", str(oracle), "--gold", str(questions)]) == 0
    text = capsys.readouterr().out
    assert "oracle gap on 4 questions" in text and "lost to retrieval" in text and "oracle (oracle)" in text
    assert main(["eval", str(plain), "--oracle", str(oracle), "--gold", str(questions), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    gap = data["oracle_gap"]["plain"]["overall"]
    assert gap["n"] == 4
    assert gap["lost_to_retrieval"] + gap["lost_to_reading"] + gap["right_both"] + gap["right_without_oracle_only"] == 4
    assert main(["eval", str(plain), "--oracle", str(tmp_path / "none.jsonl"), "--gold", str(questions)]) == 2


def test_oracle_on_a_cluster_is_a_clear_error_not_a_crash(tmp_path, corpus, registry, settings, monkeypatch, capsys):
    from madqa.errors import ClusterError

    monkeypatch.setenv("MADQA_HOME", str(settings.home))
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    out = tmp_path / "pred.jsonl"
    code = main(["run", "--corpus", str(corpus.root), "--questions", str(questions), "-o", str(out),
                 "--oracle", "--cluster", "local:2"])
    assert code == 2 and not out.exists()
    assert "--oracle does not run on a cluster yet" in capsys.readouterr().err
    with pytest.raises(ClusterError, match="without --cluster"):  # the core's own error, for callers of run_batch
        scripted_run(corpus, registry, settings, oracle=True, executor=object())
