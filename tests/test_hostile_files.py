"""Hostile question and prediction files (issue 12, items 5, 9, 13): each bad line is rejected alone with a
clear reason; nothing already answered is lost or overwritten; no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from madqa.corpus import Corpus
from madqa.index import ingest
from tests.conftest import make_pdf
from tests.test_bad_input import cli

ATTACKS = Path(__file__).parent / "fixtures" / "attacks"


@pytest.fixture
def small_corpus(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "facts.pdf", ["The capybara count in 2024 was 412. Café numbers.", "Nothing here."])
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().decode("utf-8").splitlines()]


def test_lone_surrogates_in_questions_are_run_written_and_resumed(tmp_path, small_corpus, settings):
    questions = ATTACKS / "surrogate_questions.jsonl"
    out = tmp_path / "pred.jsonl"
    run = ("run", "--corpus", str(small_corpus.root), "--questions", str(questions), "-o", str(out))
    proc = cli(*run, home=settings.home)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    rows = rows_of(out)  # valid UTF-8, valid JSON
    assert sorted(r["id"] for r in rows) == ["ok", "s1", "s2"] and all(r["error"] is None for r in rows)
    assert "\ufffd" in next(r for r in rows if r["id"] == "s1")["question"]
    # a kill tore the last line inside a UTF-8 character: --resume keeps the rest and answers it again
    data = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(data[:2]) + b'{"id": "' + data[2].split(b'"')[3] + b'", "question": "caf\xc3')
    proc = cli(*run, "--resume", home=settings.home)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    rows = rows_of(out)
    assert sorted(r["id"] for r in rows) == ["ok", "s1", "s2"]


def test_ask_json_with_a_lone_surrogate_prints_valid_json(small_corpus, settings):
    proc = cli("ask", "--corpus", str(small_corpus.root), "capybara \udc80 count?", "--json", home=settings.home)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["question"] == "capybara \ufffd count?"


def test_hostile_question_lines_are_rejected_alone_and_no_answer_is_lost(tmp_path, small_corpus, settings):
    questions = ATTACKS / "hostile_questions.jsonl"
    out = tmp_path / "pred.jsonl"
    run = ("run", "--corpus", str(small_corpus.root), "--questions", str(questions), "-o", str(out))
    proc = cli(*run, home=settings.home)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "line 2: nested too deeply to read" in proc.stderr
    assert "line 3: Exceeds the limit" in proc.stderr  # Python's own words for the 5,000-digit integer
    assert "line 5: duplicate id '1' (first at line 4): left out" in proc.stderr  # 1 and "1" are one id
    assert "line 6: duplicate id 'ok1' (first at line 1): left out" in proc.stderr
    rows = rows_of(out)
    assert sorted(r["id"] for r in rows) == ["1", "ok1", "ok2"]
    # a kill lost the last row: --resume answers it again and keeps every other answer
    out.write_bytes(b"".join(out.read_bytes().splitlines(keepends=True)[:2]))
    proc = cli(*run, "--resume", home=settings.home)
    assert proc.returncode == 0, proc.stderr
    assert sorted(r["id"] for r in rows_of(out)) == ["1", "ok1", "ok2"]


def test_run_refuses_to_overwrite_predictions_or_the_questions_file(tmp_path, small_corpus, settings):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "a", "question": "Capybara count?"}) + "\n", encoding="utf-8")
    kept = tmp_path / "pred.jsonl"
    kept.write_text('{"id": "earlier", "answer": ["kept"]}\n', encoding="utf-8")
    base = ("run", "--corpus", str(small_corpus.root), "--questions", str(questions))
    proc = cli(*base, "-o", str(kept), home=settings.home)
    assert proc.returncode == 2 and "already holds predictions; add --resume" in proc.stderr
    assert kept.read_text(encoding="utf-8") == '{"id": "earlier", "answer": ["kept"]}\n'
    proc = cli(*base, "-o", str(questions), "--resume", home=settings.home)
    assert proc.returncode == 2 and "is the questions file" in proc.stderr
    assert json.loads(questions.read_text(encoding="utf-8"))["id"] == "a"


def test_evaluate_download_folders_are_deleted(tmp_path, monkeypatch):
    import tempfile

    from madqa.ui.evaluate import EvalFolders

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folders = EvalFolders()
    made = [Path(tempfile.mkdtemp(prefix="madqa-eval-")) for _ in range(EvalFolders.KEEP + 3)]
    for folder in made:
        (folder / "predictions.jsonl").write_text("{}\n", encoding="utf-8")
        folders.returned(folder)
    assert sorted(tmp_path.glob("madqa-eval-*")) == sorted(made[-EvalFolders.KEEP:])
    folders.clear()  # at exit
    assert not list(tmp_path.glob("madqa-eval-*"))


@pytest.mark.slow
def test_a_parquet_bomb_is_refused_from_its_metadata_before_any_row_is_read(tmp_path):
    from madqa.evaluation.questions import QuestionFileError, load_questions
    from tests.attacks import parquet_bomb

    bomb = parquet_bomb(tmp_path / "bomb.parquet", strings=4, mb=64)  # 256 MB of text
    assert bomb.stat().st_size < 200_000
    with pytest.raises(QuestionFileError, match=r"bomb.parquet unpacks to 256 MB; a question file may unpack to "
                                                r"at most 200 MB"):
        load_questions(bomb)


def test_question_files_too_big_or_questions_too_long_are_refused(tmp_path):
    from madqa.evaluation.questions import QuestionFileError, load_questions

    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:
        f.truncate(51 * 2**20)  # sparse: 51 MB on paper
    with pytest.raises(QuestionFileError, match="big.jsonl is 51 MB; a question file may be at most 50 MB"):
        load_questions(big)
    long = tmp_path / "long.jsonl"
    long.write_text(json.dumps({"id": "x", "question": "why " * 600}) + "\n"
                    + json.dumps({"id": "y", "question": "Capybara count?"}) + "\n", encoding="utf-8")
    questions, problems = load_questions(long)
    assert [q["id"] for q in questions] == ["y"]
    assert problems == ["line 1: 'question' has 2,400 characters; at most 2,000"]
