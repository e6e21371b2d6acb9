"""Loading MADQA question sets from JSONL and Parquet."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from madqa.evaluation.questions import QuestionFileError, load_questions, normalise_question, to_plain

GOOD = {"id": "q1", "question": "What is the total?", "answer_variants": [["$5"], ["5 dollars"]],
        "evidence": [{"document": "a.pdf", "page": 3}], "document_category": "Invoice",
        "domain": "Finance"}


def _write_jsonl(path, lines):
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n",
                    encoding="utf-8")
    return path


def test_jsonl_good_and_problems(tmp_path):
    path = _write_jsonl(tmp_path / "dev.jsonl", [
        GOOD,                                                      # 1
        "{not json",                                               # 2
        {"question": "No id?"},                                    # 3
        {**GOOD, "id": "q4", "evidence": [{"document": "a.pdf", "page": "5"}]},   # 4
        {**GOOD, "question": "Same id again"},                     # 5 duplicate id, kept
        "",                                                        # 6 blank: skipped
        {"id": "q7", "question": "Test split, no gold"},           # 7
        {"id": 8, "question": "Int id"},                           # 8: the id "8" (issue 12: 1 and "1" are one id)
        {**GOOD, "id": "q9", "answer_variants": "$5"},             # 9
        {**GOOD, "id": "q10", "answer_variants": ["$5", ["5", 5]]},  # 10: normalised
        {**GOOD, "id": "q11", "domain": 3},                        # 11
        '"just a string"',                                         # 12
    ])
    questions, problems = load_questions(path)
    assert [q["id"] for q in questions] == ["q1", "q1", "q7", "8", "q10"]
    assert questions[0] == GOOD
    assert questions[2] == {"id": "q7", "question": "Test split, no gold", "answer_variants": None,
                            "evidence": None, "document_category": None, "domain": None}
    assert questions[4]["answer_variants"] == [["$5"], ["5", "5"]]
    assert problems[0].startswith("line 2: invalid JSON")
    assert problems[1] == "line 3: missing field 'id'"
    assert problems[2] == "line 4: evidence[0].page must be an integer, got '5'"
    assert problems[3] == "line 5: duplicate id 'q1' (first at line 1)"
    assert problems[4] == "line 9: 'answer_variants' must be a list, got str"
    assert problems[5] == "line 11: 'domain' must be a string, got int"
    assert problems[6] == "line 12: expected a JSON object, got str"
    assert len(problems) == 7


def test_jsonl_bad_utf8_line_is_a_problem(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'\xef\xbb\xbf' + json.dumps(GOOD).encode() + b'\n{"id": "\xff"}\n')
    questions, problems = load_questions(path)
    assert [q["id"] for q in questions] == ["q1"]
    assert problems == ["line 2: not valid UTF-8"]


def test_parquet_nested_fields_come_back_plain(tmp_path):
    rows = [GOOD, {"id": "q2", "question": "Two docs?", "answer_variants": [["a", "b"]],
                   "evidence": [{"document": "a.pdf", "page": 1}, {"document": "b.pdf", "page": 2}],
                   "document_category": None, "domain": "Legal"}]
    path = tmp_path / "dev.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    questions, problems = load_questions(path)
    assert problems == []
    assert questions == [GOOD, {**rows[1]}]
    assert type(questions[1]["evidence"][1]["page"]) is int


def test_parquet_problem_rows_named(tmp_path):
    path = tmp_path / "dev.parquet"
    pd.DataFrame([{"id": "q1", "question": "ok"}, {"id": None, "question": "no id"}]).to_parquet(path)
    questions, problems = load_questions(path)
    assert [q["id"] for q in questions] == ["q1"]
    assert problems == ["row 2: missing field 'id'"]


def test_pandas_numpy_values_are_normalised():
    raw = {"id": "q1", "question": "What?",
           "answer_variants": np.array([np.array(["A", "b"], dtype=object)], dtype=object),
           "evidence": np.array([{"document": "a.pdf", "page": np.int64(4)}], dtype=object),
           "document_category": float("nan"), "domain": "Legal"}
    question, problems = normalise_question(raw, "row 1")
    assert problems == []
    assert question == {"id": "q1", "question": "What?", "answer_variants": [["A", "b"]],
                        "evidence": [{"document": "a.pdf", "page": 4}],
                        "document_category": None, "domain": "Legal"}
    assert type(question["evidence"][0]["page"]) is int
    assert to_plain(np.float64(2.0)) == 2.0 and to_plain({1: np.bool_(True)}) == {"1": True}


def test_integral_float_page_accepted():
    question, problems = normalise_question(
        {"id": "q", "question": "?", "evidence": [{"document": "d.pdf", "page": 2.0}]}, "row 1")
    assert problems == [] and question["evidence"] == [{"document": "d.pdf", "page": 2}]
    _, problems = normalise_question(
        {"id": "q", "question": "?", "evidence": [{"document": "d.pdf", "page": True}]}, "row 1")
    assert problems == ["row 1: evidence[0].page must be an integer, got True"]


def test_unreadable_files(tmp_path):
    with pytest.raises(QuestionFileError, match="unknown question file type"):
        load_questions(tmp_path / "questions.csv")
    with pytest.raises(QuestionFileError):
        load_questions(tmp_path / "missing.jsonl")
    with pytest.raises(QuestionFileError):
        load_questions(tmp_path / "missing.parquet")
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"not parquet at all")
    with pytest.raises(QuestionFileError, match="cannot read Parquet"):
        load_questions(corrupt)
    assert issubclass(QuestionFileError, ValueError)
