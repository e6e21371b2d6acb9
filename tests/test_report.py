"""Hand-computed checks of madqa.evaluation.report (run-level report)."""

from __future__ import annotations

import json
import math

import pytest

from madqa.evaluation import report as r


def _gold(qid, text, variants, evidence, category="Legal", domain="Finance"):
    return {"id": qid, "question": text, "answer_variants": variants, "evidence": evidence,
            "document_category": category, "domain": domain}


def _ev(*pairs):
    return [{"document": d, "page": p} for d, p in pairs]


GOLD = [
    _gold("q1", "Q1?", [["paris"]], _ev(("a.pdf", 1))),                          # single
    _gold("q2", "Q2?", [["x", "y"]], _ev(("a.pdf", 1), ("a.pdf", 2))),           # cross_page
    _gold("q3", "Q3?", [["7"], ["seven"]], _ev(("a.pdf", 1), ("b.pdf", 5)),      # cross_doc
          category="", domain=None),
    _gold("q4", "Q4?", [["blue"]], _ev(("c.pdf", 3))),                           # single
]


def _search(*hits):
    return {"type": "search", "query": "q", "executed_query": "q", "num_results": len(hits),
            "hits": [{"file": f, "page": p, "score": 1.0} for f, p in hits]}


PREDS = [
    # q1 right, cites the gold page, 2 searches with identical queries (drift 0)
    {"id": "q1", "question": "Q1?", "answer": ["Paris"], "citations": [{"file": "a.pdf", "page": 1}],
     "search_history": [{"iteration": 1, "query": "capital France", "num_results": 3},
                        {"iteration": 2, "query": "france CAPITAL", "num_results": 3}],
     "iterations": 2,
     "trajectory": [{"type": "model"}, _search(("a.pdf", 1), ("z.pdf", 1)), _search(("a.pdf", 1))],
     "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
     "cost_usd": 0.5, "latency_s": 2.0, "error": None},
    # q2 wrong (0.5 would be right; here 0): cites gold document, wrong page -> wrong_page
    {"id": "q2", "question": "Q2?", "answer": ["no", "idea"], "citations": [{"document": "a.pdf", "page": 9}],
     "search_history": [{"query": "alpha beta"}, {"query": "gamma"}, {"query": "delta"}],
     "trajectory": [_search(("b.pdf", 1)), _search(("a.pdf", 2))],
     "usage": {"prompt_tokens": 10, "completion_tokens": 5},
     "cost_usd": None, "latency_s": 4.0, "error": "timeout"},
    # q3 matched by id (question text differs); numeric answer 7 -> right
    {"id": "q3", "question": "Question three", "answer": 7, "citations": [{"file": "b.pdf", "page": 5}],
     "iterations": 4},
    # not in gold
    {"id": "q9", "question": "Q9?", "answer": "x"},
]


@pytest.fixture(scope="module")
def result():
    return r.evaluate(PREDS, GOLD, by="category")


def test_overall_official_numbers(result):
    o = result["overall"]
    assert (o["n"], o["n_gold"], o["n_missing"], o["n_unmatched"], o["n_duplicate"]) == (3, 4, 1, 1, 0)
    assert o["accuracy"] == pytest.approx(2 / 3)
    assert o["accuracy_strict"] == pytest.approx(2 / 4)
    assert o["anls"] == pytest.approx(2 / 3)
    # doc F1: q1 1, q2 1 (a.pdf is gold), q3 p=1 r=.5 -> 2/3
    assert o["doc_f1"] == pytest.approx((1 + 1 + 2 / 3) / 3)
    # page F1: q1 1, q2 0, q3 2/3
    assert o["page_f1"] == pytest.approx((1 + 0 + 2 / 3) / 3)
    # efforts 2 (T), 3 (F), 4 (T): mean 2/3, D = 1/3, -1/3, 0
    assert o["kuiper"] == pytest.approx(2 / 3)
    assert o["wasted_effort_ratio"] == pytest.approx(3 / 3)
    assert (o["mean_steps_correct"], o["mean_steps_incorrect"]) == (3.0, 3.0)


def test_overall_extras(result):
    o = result["overall"]
    # q1 drift 0 (same bag of words), q2 drift (1 + 1) / 2 = 1, q3 no searches
    assert o["query_drift"] == pytest.approx(0.5)
    assert o["query_drift_n"] == 2
    assert o["query_drift_representation"] == r.LEXICAL_REPRESENTATION
    # q1 found 1/1, q2 found (a,2) of {(a,1),(a,2)} = 1/2; q3 has no trajectory
    assert o["evidence_recall"] == pytest.approx((1 + 0.5) / 2)      # macro (headline)
    assert o["evidence_recall_micro"] == pytest.approx(2 / 3)        # 2 of 3 gold pages
    assert o["evidence_recall_n"] == 2
    assert o["first_query_success"] == pytest.approx(0.5)            # q1 yes, q2 no
    assert o["errors"] == {"n_wrong": 1,
                           "counts": {"failed": 0, "refusal": 0, "wrong_document": 0, "wrong_page": 1,
                                      "wrong_answer": 0},
                           "shares": {"failed": 0.0, "refusal": 0.0, "wrong_document": 0.0, "wrong_page": 1.0,
                                      "wrong_answer": 0.0}}
    assert o["steps"] == {"mean": 3.0, "median": 3, "max": 4, "histogram": {2: 1, 3: 1, 4: 1}}
    assert o["tokens"] == {"sum": 135.0, "mean": 67.5, "n_known": 2}
    assert o["cost_usd"] == {"sum": 0.5, "mean": 0.5, "n_known": 1}
    assert o["latency_s"] == {"sum": 6.0, "mean": 3.0, "n_known": 2}
    assert o["n_run_errors"] == 1
    json.dumps(result, allow_nan=False)  # JSON-safe: no NaN or inf anywhere


def test_breakdowns(result):
    hop = result["by_hop_type"]
    assert list(hop) == ["single", "cross_page", "cross_doc"]
    assert (hop["single"]["n"], hop["single"]["n_gold"], hop["single"]["n_missing"]) == (1, 2, 1)
    assert hop["single"]["accuracy"] == 1.0 and hop["single"]["accuracy_strict"] == 0.5
    assert hop["single"]["kuiper"] is None          # all right: undefined
    assert hop["cross_page"]["accuracy"] == 0.0
    assert hop["cross_doc"]["n"] == 1
    cat = result["by_category"]
    assert list(cat) == ["Legal", "Unknown"]        # empty category -> "Unknown" as officially
    assert cat["Legal"]["n"] == 2 and cat["Legal"]["n_gold"] == 3
    assert cat["Unknown"]["accuracy"] == 1.0
    dom = r.evaluate(PREDS, GOLD, by="domain")["by_domain"]
    assert list(dom) == ["Finance", "Other"]
    with pytest.raises(ValueError):
        r.evaluate(PREDS, GOLD, by="")
    # any other question field groups by its values; questions without it fall under "(none)"
    assert list(r.evaluate(PREDS, GOLD, by="model")["by_model"]) == ["(none)"]


def test_empty_groups_and_no_predictions():
    res = r.evaluate([], GOLD)
    o = res["overall"]
    assert (o["n"], o["n_gold"], o["n_missing"]) == (0, 4, 4)
    assert o["accuracy"] is None and o["accuracy_strict"] == 0.0 and o["kuiper"] is None
    assert o["steps"]["mean"] is None and o["tokens"] is None
    only_single = r.evaluate([PREDS[0]], GOLD[:1])
    assert only_single["by_hop_type"]["cross_doc"]["n"] == 0
    assert only_single["by_hop_type"]["cross_doc"]["accuracy"] is None


def test_duplicate_predictions_count_like_official():
    gold = GOLD[:1]
    wrong = {"question": "Q1?", "answer": "rome", "iterations": 1}
    right = {"question": "Q1?", "answer": "paris", "iterations": 1}
    o = r.evaluate([wrong, right], gold)["overall"]
    assert (o["n"], o["n_duplicate"], o["n_missing"]) == (2, 1, 0)
    assert o["accuracy"] == 0.5              # official: every matched row counts
    assert o["accuracy_strict"] == 0.0       # ours: first prediction per gold question


@pytest.mark.parametrize(
    ("answer", "citations", "expected"),
    [
        ("", [{"file": "a.pdf", "page": 1}], "refusal"),
        ([" "], [], "refusal"),
        (None, [], "refusal"),
        ("rome", None, "wrong_document"),
        ("rome", [{"file": "z.pdf", "page": 1}], "wrong_document"),
        ("rome", [{"file": "a.pdf", "page": 2}], "wrong_page"),
        ("rome", [{"document": "a.pdf", "page": 2}, {"file": "z.pdf", "page": 1}], "wrong_page"),
        ("rome", [{"file": "z.pdf", "page": 3}, {"file": "a.pdf", "page": 1}], "wrong_answer"),
        ("paris", [], None),
    ],
)
def test_error_category(answer, citations, expected):
    rec = r.per_question([{"question": "Q1?", "answer": answer, "citations": citations}], GOLD)[0]
    assert rec["error_category"] == expected


def test_lexical_similarity_and_drift():
    assert r.lexical_similarity("Hotel, Paris!", "paris hotel") == pytest.approx(1.0)
    assert r.lexical_similarity("alpha", "beta") == 0.0
    assert r.lexical_similarity("capital france", "capital of france") == pytest.approx(2 / math.sqrt(6))
    assert r.lexical_similarity("a a b", "a b") == pytest.approx(3 / math.sqrt(10))
    assert r.lexical_similarity("", "?!") == 1.0 and r.lexical_similarity("", "x") == 0.0
    assert r.query_drift(["same query", "same query", "Same  QUERY"]) == 0.0
    assert r.query_drift(["alpha", "beta"]) == 1.0
    assert r.query_drift(["a b", "a b", "c"]) == pytest.approx(0.5)
    assert r.query_drift(["only one"]) is None and r.query_drift([]) is None


def test_pluggable_similarity():
    vectors = {"x": [1.0, 0.0], "y": [0.0, 1.0], "z": [1.0, 1.0]}
    sim = r.embedding_similarity(lambda text: vectors[text])
    assert r.query_drift(["x", "z"], sim) == pytest.approx(1 - 1 / math.sqrt(2))
    row = {"question": "Q1?", "answer": "paris", "search_history": [{"query": "x"}, {"query": "y"}]}
    res = r.evaluate([row], GOLD[:1], similarity=sim, representation="toy-embedding")
    assert res["overall"]["query_drift"] == pytest.approx(1.0)
    assert res["overall"]["query_drift_representation"] == "toy-embedding"
    assert r.evaluate([row], GOLD[:1], similarity=sim)["overall"]["query_drift_representation"] == "similarity"


def test_evidence_coverage_edge_cases():
    ev = _ev(("a.pdf", 1))
    assert r.evidence_coverage({}, ev) is None                          # no trajectory
    assert r.evidence_coverage({"trajectory": [_search(("a.pdf", 1))]}, []) is None  # no gold
    no_search = r.evidence_coverage({"trajectory": [{"type": "model"}]}, ev)
    assert no_search == {"found": 0, "total": 1, "recall": 0.0, "first_query_hit": None}
    late = r.evidence_coverage({"trajectory": [_search(("b.pdf", 1)), _search(("a.pdf", 1))]}, ev)
    assert late == {"found": 1, "total": 1, "recall": 1.0, "first_query_hit": False}
    o = r.evaluate([{"question": "Q1?", "answer": "x"}], GOLD[:1])["overall"]
    assert o["evidence_recall"] is None and o["first_query_success"] is None


def test_per_question_records(result):
    recs = r.per_question(PREDS, GOLD)
    assert [x["id"] for x in recs] == ["q1", "q2", "q3"]
    q1, q2, q3 = recs
    assert (q1["anls"], q1["correct"], q1["effort"], q1["hop_type"], q1["drift"]) == (1.0, True, 2, "single", 0.0)
    assert (q2["error_category"], q2["evidence_recall"], q2["first_query_hit"]) == ("wrong_page", 0.5, False)
    assert (q2["run_error"], q2["tokens"], q2["n_searches"]) == ("timeout", 15.0, 3)
    assert (q3["effort"], q3["hop_type"], q3["drift"], q3["evidence_recall"]) == (4, "cross_doc", None, None)
    assert q3["category"] == "Unknown" and q3["domain"] == "Other"
    json.dumps(recs, allow_nan=False)
    curve = r.kuiper_curve_from_records(recs)
    assert [p["id"] for p in curve] == ["q1", "q2", "q3"]
    assert [p["deviation"] for p in curve] == pytest.approx([1 / 3, -1 / 3, 0.0])


def test_format_table(result):
    other = r.evaluate(PREDS[:1], GOLD)
    table = r.format_table({"baseline": result, "tiny": other["overall"]})
    lines = table.splitlines()
    assert lines[0].split() == ["metric", "baseline", "tiny"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert rows["accuracy"] == ["0.6667", "1.0000"]
    assert rows["kuiper"] == ["0.6667", "-"]
    assert rows["n_gold"] == ["4", "4"]
    assert rows["errors.wrong_page"] == ["1.0000", "-"]
    assert rows["cost_usd.sum"] == ["0.5000", "0.5000"]


def test_load_predictions(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"id": "q1", "answer": "a"}\n\n{broken\n[1, 2]\n{"id": "q2"}\n', encoding="utf-8")
    rows, problems = r.load_predictions(path)
    assert [row["id"] for row in rows] == ["q1", "q2"]
    assert len(problems) == 2
    assert problems[0].startswith("line 3: invalid JSON")
    assert problems[1] == "line 4: expected a JSON object, got list"
    with pytest.raises(r.PredictionFileError):
        r.load_predictions(tmp_path / "missing.jsonl")
