"""Scope on the command line and in question sets: ``--file NAME`` for ask, chat and search, ``file:NAME`` in
a search, a question row's ``scope``; a name that is no document is bad input (exit status 2)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from madqa.cli import main
from madqa.evaluation.questions import load_questions
from tests.conftest import make_pdf


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MADQA_CONFIG", raising=False)
    make_pdf(tmp_path / "docs" / "fin" / "report.pdf", ["Revenue in 2024 was 7.5 million.", "Headcount was 120."])
    make_pdf(tmp_path / "docs" / "memo.pdf", ["Memo: the board approved the budget on 3 May 2024. Revenue was discussed."])
    return tmp_path / "docs"


def _files(out: str) -> set[str]:
    return {line.split(". ", 1)[1].split(" p.")[0] for line in out.splitlines() if line[:1].isdigit()}


def test_search_within_a_file_by_flag_or_by_file_term(docs, capsys):
    assert main(["search", "--corpus", str(docs), "revenue"]) == 0
    assert _files(capsys.readouterr().out) == {"fin/report.pdf", "memo.pdf"}
    assert main(["search", "--corpus", str(docs), "revenue", "--file", "MEMO"]) == 0
    assert _files(capsys.readouterr().out) == {"memo.pdf"}
    assert main(["search", "--corpus", str(docs), "revenue file:report", "--json"]) == 0
    assert {h["file"] for h in json.loads(capsys.readouterr().out)} == {"fin/report.pdf"}
    assert main(["search", "--corpus", str(docs), "revenue", "--file", "memo", "--file", "report.pdf"]) == 0
    assert _files(capsys.readouterr().out) == {"fin/report.pdf", "memo.pdf"}


@pytest.mark.parametrize(("argv", "said"), [
    (["search", "revenue", "--file", "budget.pdf"], "'budget.pdf' is not a document of this collection"),
    (["search", "file:memo"], "only file: terms"),
    (["search", "revenue file:report", "--file", "memo"], "outside the chosen scope"),
    (["ask", "What was revenue?", "--file", "budget.pdf", "--config", "offline"], "fin/report.pdf, memo.pdf"),
])
def test_a_file_that_is_no_document_is_bad_input(docs, capsys, argv, said):
    assert main([argv[0], "--corpus", str(docs), *argv[1:]]) == 2
    captured = capsys.readouterr()
    assert said in captured.err and "Traceback" not in captured.err and "ANSWER" not in captured.out


def test_ask_searches_only_the_chosen_document_and_says_so(docs, capsys):
    assert main(["ask", "--corpus", str(docs), "What was the revenue in 2024?", "--file", "report",
                 "--config", "offline"]) == 0
    out = capsys.readouterr().out
    assert "searching only: fin/report.pdf" in out and "ANSWER: 7.5" in out and "memo.pdf" not in out
    assert main(["ask", "--corpus", str(docs), "What was the revenue in 2024?", "--file", "memo",
                 "--config", "offline", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    searched = {h["file"] for s in row["trajectory"] if s["type"] == "search" for h in s["hits"]}
    assert row["scope"] == ["memo.pdf"] and searched == {"memo.pdf"} and row["answer"] != ["7.5"]


def test_chat_keeps_the_scope_for_every_question(docs, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("What was the revenue in 2024?\nHow many employees?\n"))
    assert main(["chat", "--corpus", str(docs), "--file", "memo.pdf", "--config", "offline"]) == 0
    out = capsys.readouterr().out
    assert "searching only: memo.pdf" in out and "fin/report.pdf" not in out


def test_a_question_sets_scope_is_passed_to_the_run_and_kept_in_its_row(docs, tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(q) for q in [
        {"id": "in", "question": "What was the revenue in 2024?", "scope": ["report"], "answer_variants": [["7.5"]]},
        {"id": "out", "question": "What was the revenue in 2024?", "scope": "memo.pdf"},
        {"id": "all", "question": "What was the revenue in 2024?"},
    ]) + "\n", encoding="utf-8")
    out = tmp_path / "pred.jsonl"
    assert main(["run", "--corpus", str(docs), "--questions", str(questions), "-o", str(out), "--config", "offline"]) == 0
    rows = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert rows["in"]["scope"] == ["report"] and rows["in"]["answer"] == ["7.5"]
    searched = {h["file"] for s in rows["out"]["trajectory"] if s["type"] == "search" for h in s["hits"]}
    assert rows["out"]["scope"] == ["memo.pdf"] and searched == {"memo.pdf"}
    assert "scope" not in rows["all"] and rows["all"]["answer"] == ["7.5"]


def test_a_question_set_naming_no_document_stops_before_any_row(docs, tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "x", "question": "q?", "scope": ["budget.pdf"]}) + "\n", encoding="utf-8")
    out = tmp_path / "pred.jsonl"
    assert main(["run", "--corpus", str(docs), "--questions", str(questions), "-o", str(out), "--config", "offline"]) == 2
    assert "question 'x': scope: file 'budget.pdf' is not a document" in capsys.readouterr().err
    assert not out.exists() or not out.read_text()


@pytest.mark.parametrize("scope", [[], [""], [3], {"file": "a.pdf"}])
def test_a_malformed_scope_is_a_problem_of_its_line(tmp_path, scope):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "x", "question": "q?", "scope": scope}) + "\n", encoding="utf-8")
    questions, problems = load_questions(path)
    assert questions == [] and problems == [f"line 1: 'scope' must be a list of file names of the corpus, got {scope!r}"]
