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
