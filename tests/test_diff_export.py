"""madqa diff (two runs question by question) and madqa export --leaderboard (checked, official fields)."""

from __future__ import annotations

import json

import pytest

from madqa.cli import main
from madqa.evaluation.diff import diff_runs, first_difference, format_diff
from madqa.evaluation.export import LEADERBOARD_FIELDS, check_rows, leaderboard_row
from tests.conftest import DEMO_DOCS, DEMO_QUESTIONS

GOLD = [
    {"id": "q1", "question": "Who?", "answer_variants": [["ann"]], "evidence": [{"document": "a.pdf", "page": 1}]},
    {"id": "q2", "question": "What?", "answer_variants": [["box"]],
     "evidence": [{"document": "a.pdf", "page": 2}, {"document": "b.pdf", "page": 1}]},
    {"id": "q3", "question": "When?", "answer_variants": [["1999"]], "evidence": [{"document": "b.pdf", "page": 3}]},
]


def search(query, pages):
    return {"type": "search", "query": query, "hits": [{"file": f, "page": p} for f, p in pages]}


def row(qid, answer, queries, citations=(), pages=()):
    question = next(g["question"] for g in GOLD if g["id"] == qid)
    return {"id": qid, "question": question, "answer": [answer], "citations": [dict(file=f, page=p) for f, p in citations],
            "search_history": [{"iteration": i, "query": q, "num_results": 1} for i, q in enumerate(queries, 1)],
            "iterations": len(queries),
            "trajectory": [search(q, pages[i] if i < len(pages) else []) for i, q in enumerate(queries)]}


A = [row("q1", "ann", ["who", "ann"], [("a.pdf", 1)], [[("a.pdf", 1)]]),
     row("q2", "cat", ["what"], [("c.pdf", 1)], [[("c.pdf", 1)]]),
     row("q3", "1999", ["when"], [("b.pdf", 3)], [[("b.pdf", 3)]])]
B = [row("q1", "bob", ["who", "bob"], [("a.pdf", 2)], [[("a.pdf", 1)], [("a.pdf", 2)]]),
     row("q2", "box", ["What", "box"], [("a.pdf", 2)], [[("c.pdf", 1)], [("a.pdf", 2), ("b.pdf", 1)]]),
     row("q3", "1999", ["when"], [("b.pdf", 3)], [[("b.pdf", 3)]])]


def test_diff_says_who_won_where_and_where_they_diverged():
    result = diff_runs(A, B, GOLD)
    q = {x["id"]: x for x in result["questions"]}
    assert [q[i]["outcome"] for i in ("q1", "q2", "q3")] == ["A only", "B only", "both"]
    assert q["q1"]["first_different_query"] == 2 and q["q3"]["first_different_query"] is None
    assert q["q2"]["first_different_query"] == 2  # case and spaces do not count as a difference
    assert q["q1"]["a_first_unique_page"] is None
    assert q["q1"]["b_first_unique_page"] == {"file": "a.pdf", "page": 2, "search": 2}
    assert q["q2"]["b_first_unique_page"] == {"file": "a.pdf", "page": 2, "search": 2}
    s = result["summary"]
    assert (s["A only"], s["B only"], s["both"], s["neither"], s["same_queries"]) == (1, 1, 1, 0, 1)
    assert s["by_hop_type"]["cross_doc"]["B only"] == 1 and s["by_hop_type"]["single"]["A only"] == 1
    assert s["loser_errors"]["A only"]["wrong_page"] == 1  # B cited a.pdf p.2 for q1
    assert s["loser_errors"]["B only"]["wrong_document"] == 1  # A cited c.pdf for q2
    text = format_diff(result, ("base", "new"))
    assert "base only right: 1" in text and "diverged at query 2" in text and "only new saw: a.pdf p.2 (search 2)" in text


def test_first_difference_counts_a_run_that_stopped():
    assert first_difference(["a"], ["a", "b"]) == 2 and first_difference([], []) is None


def test_check_rows_names_every_problem_by_line():
    rows = [
        {"id": "q1", "question": "Who?", "answer": ["ann"], "citations": [{"file": "a.pdf", "page": 0}],
         "search_history": []},
        {"id": "q9", "question": "Unknown?", "answer": ["x"], "citations": [], "search_history": []},
        {"id": "q2", "question": "What?", "answer": ["box"], "citations": []},
        {"id": "q1", "question": "Who? ", "answer": ["ann"], "citations": [], "search_history": []},
        {"id": "q3", "question": "When?", "answer": ["1999"], "citations": [{"file": "b.pdf", "page": "3"}],
         "search_history": [], "error": "backend: down"},
    ]
    problems = check_rows(list(enumerate(rows, 1)), GOLD)
    joined = "\n".join(problems)
    assert "line 1: citations[0] page 0 of a.pdf: pages are 1-based" in joined
    assert "line 2: question 'Unknown?'" in joined and "not in the question set" in joined
    assert "line 3: no 'search_history'" in joined
    assert "line 4: duplicate question (first at line 1)" in joined and "line 4: duplicate id 'q1'" in joined
    assert "line 5: citations[0] page must be an integer" in joined and "line 5: the run failed" in joined
    assert check_rows([(1, rows[1])]) == []  # without gold, nothing to match against


def test_leaderboard_row_has_exactly_the_harness_fields():
    out = leaderboard_row({**A[0], "model": "m", "usage": {}, "citations": [{"document": "a.pdf", "page": 1.0}]})
    assert tuple(out) == LEADERBOARD_FIELDS
    assert out["citations"] == [{"file": "a.pdf", "page": 1}] and out["iterations"] == 2


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    import os

    home = str(tmp / "home")
    old = os.environ.get("MADQA_HOME")
    os.environ["MADQA_HOME"] = home
    questions = tmp / "q.jsonl"
    questions.write_text("".join(DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines(keepends=True)[:6]))
    paths = {}
    for strategy in ("passthrough", "drift"):
        paths[strategy] = tmp / f"{strategy}.jsonl"
        assert main(["run", "--corpus", str(DEMO_DOCS), "--questions", str(questions), "-o", str(paths[strategy]),
                     "--strategy", strategy]) == 0
    yield tmp, questions, paths
    if old is None:
        os.environ.pop("MADQA_HOME", None)
    else:
        os.environ["MADQA_HOME"] = old


def test_diff_cli_end_to_end(demo_runs, capsys):
    _, questions, paths = demo_runs
    capsys.readouterr()
    assert main(["diff", str(paths["passthrough"]), str(paths["drift"]), "--gold", str(questions)]) == 0
    text = capsys.readouterr().out
    assert "summary over 6 questions" in text and "passthrough.jsonl · offline only right" in text and "== demo-001" in text
    assert "drift.jsonl · offline[query_strategy=drift]" in text and "A only" not in text and "= A" not in text  # named, not A and B
    assert main(["diff", str(paths["passthrough"]), str(paths["drift"]), "--gold", str(questions), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    s = data["summary"]
    assert s["A only"] + s["B only"] + s["both"] + s["neither"] == 6
    assert main(["diff", str(paths["passthrough"]), "/nonexistent.jsonl", "--gold", str(questions)]) == 2


def test_export_cli_writes_official_fields_and_prints_official_figures(demo_runs, capsys):
    tmp, questions, paths = demo_runs
    out = tmp / "board.jsonl"
    capsys.readouterr()
    assert main(["export", str(paths["passthrough"]), "--leaderboard", "-o", str(out), "--corpus", str(DEMO_DOCS),
                 "--gold", str(questions)]) == 0
    text = capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 6 and all(tuple(r) == LEADERBOARD_FIELDS for r in rows)
    assert "Accuracy (ANLS*>=0.5):" in text and "By Hop Type:" in text
    assert main(["export", str(paths["passthrough"]), "--leaderboard", "-o", str(out)]) == 2  # exists, no --force


def test_export_cli_refuses_a_bad_file_and_writes_nothing(demo_runs, capsys):
    tmp, questions, paths = demo_runs
    lines = paths["passthrough"].read_text().splitlines()
    bad = [json.loads(line) for line in lines]
    bad[1]["citations"] = [{"file": bad[1]["citations"][0]["file"] if bad[1]["citations"] else "finance/annual_report_2024.pdf",
                            "page": 999}]
    del bad[2]["search_history"]
    bad.append(dict(bad[0]))
    path = tmp / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in bad) + "{not json\n")
    out = tmp / "never.jsonl"
    capsys.readouterr()
    assert main(["export", str(path), "--leaderboard", "-o", str(out), "--corpus", str(DEMO_DOCS),
                 "--gold", str(questions)]) == 1
    err = capsys.readouterr().err
    assert "line 2: citations[0] page 999" in err and "out of range" in err
    assert "line 3: no 'search_history'" in err and "line 7: duplicate question (first at line 1)" in err
    assert "line 8: invalid JSON" in err and "refused" in err
    assert not out.exists()
