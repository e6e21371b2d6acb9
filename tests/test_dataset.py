"""``madqa run --dataset PATH --split S``: a local copy of the Hugging Face MADQA layout, built here
(generated PDFs, Parquet question files written with pyarrow), indexed once and run."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from madqa.cli import main
from madqa.errors import CorpusError
from madqa.evaluation.dataset import open_dataset
from tests.conftest import make_pdf

DEV = [
    {"id": "d1", "question": "What is the boiling point of water in the lab manual?",
     "answer_variants": [["100 degrees"]], "evidence": [{"document": "lab_manual.pdf", "page": 2}],
     "document_category": "manual", "domain": "science"},
    {"id": "d2", "question": "Who signed the lease agreement?", "answer_variants": [["Ada Byron"]],
     "evidence": [{"document": "lease.pdf", "page": 1}], "document_category": "contract", "domain": "legal"},
]
TEST = [{"id": "t1", "question": "Who signed the lease agreement?", "answer_variants": None, "evidence": None,
         "document_category": "contract", "domain": "legal"}]


def write_split(path, rows):
    """A Parquet file with the dataset's columns and nested types (lists of lists, list of structs)."""
    schema = pa.schema([
        ("id", pa.string()), ("question", pa.string()),
        ("answer_variants", pa.list_(pa.list_(pa.string()))),
        ("evidence", pa.list_(pa.struct([("document", pa.string()), ("page", pa.int64())]))),
        ("document_category", pa.string()), ("domain", pa.string()),
    ])
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


@pytest.fixture
def dataset(tmp_path):
    root = tmp_path / "MADQA"
    write_split(root / "data" / "dev-00000-of-00001.parquet", DEV)
    write_split(root / "data" / "test-00000-of-00001.parquet", TEST)
    (root / "documents").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([{"document": d, "url": f"https://example.org/{d}"}
                                          for d in ("lab_manual.pdf", "lease.pdf", "not_downloaded.pdf")]),
                   root / "documents" / "links-00000-of-00001.parquet")
    make_pdf(root / "pdfs" / "lab_manual.pdf", ["Lab manual. Safety first.",
                                                 "Water boils at 100 degrees at sea level."])
    make_pdf(root / "pdfs" / "lease.pdf", ["Lease agreement signed by Ada Byron, tenant."])
    return root


def test_open_dataset_reads_the_split_and_finds_the_pdfs(dataset):
    data = open_dataset(dataset, "dev")
    assert [q["id"] for q in data.questions] == ["d1", "d2"] and data.problems == []
    assert data.questions[0]["evidence"] == [{"document": "lab_manual.pdf", "page": 2}]
    assert data.docs_dir == dataset / "pdfs"
    assert data.missing_documents == ["not_downloaded.pdf"]
    test = open_dataset(dataset, "test")
    assert test.questions[0]["answer_variants"] is None


def test_bad_layouts_get_clear_errors(dataset, tmp_path):
    with pytest.raises(CorpusError, match="no Parquet file for split 'train'.*found splits: dev, test"):
        open_dataset(dataset, "train")
    with pytest.raises(CorpusError, match="unknown split"):
        open_dataset(dataset, "validation")
    with pytest.raises(CorpusError, match="does not exist"):
        open_dataset(tmp_path / "nowhere", "dev")
    empty = tmp_path / "nopdfs"
    write_split(empty / "data" / "dev-00000-of-00001.parquet", DEV)
    with pytest.raises(CorpusError, match="no PDFs found"):
        open_dataset(empty, "dev")


def test_run_dataset_indexes_once_and_runs_the_split(dataset, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    out = tmp_path / "dev.jsonl"
    assert main(["run", "--dataset", str(dataset), "--split", "dev", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "indexed 2 files" in err and "1 documents" in err and "not_downloaded.pdf" in err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["d1", "d2"]
    assert any(h["file"] == "lease.pdf" for s in rows[1]["trajectory"] if s["type"] == "search" for h in s["hits"])
    # the second run opens the index made by the first
    assert main(["run", "--dataset", str(dataset), "--split", "dev", "-o", str(tmp_path / "again.jsonl"),
                 "--oracle"]) == 0
    assert "indexed" not in capsys.readouterr().err
    again = [json.loads(line) for line in (tmp_path / "again.jsonl").read_text().splitlines()]
    first = next(s for s in again[0]["trajectory"] if s["type"] == "search")
    assert [(h["file"], h["page"]) for h in first["hits"]] == [("lab_manual.pdf", 2)]
    gold = tmp_path / "dev.parquet"
    write_split(gold, DEV)
    assert main(["eval", str(out), "--gold", str(gold)]) == 0


def test_run_dataset_refuses_mixed_inputs(dataset, tmp_path, capsys):
    assert main(["run", "--dataset", str(dataset), "--corpus", str(dataset), "-o", str(tmp_path / "x.jsonl")]) == 2
    assert "leave out --corpus" in capsys.readouterr().err
    assert main(["run", "-o", str(tmp_path / "x.jsonl")]) == 2
    assert "--dataset PATH" in capsys.readouterr().err
