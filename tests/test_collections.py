"""Operator collections (issue 28): specs from ``--corpus`` / ``MADQA_COLLECTIONS``, their errors, their question
sets, and a collection indexed in rounds, searchable from its first round, reused whole on the next start."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from madqa.collection_index import SharedCollection, stored_state
from madqa.collections import CollectionSpec, load_question_set, parse_spec, served_collections
from madqa.corpus import Corpus
from madqa.errors import SettingsError
from madqa.index import ingest
from madqa.settings import Settings
from tests.conftest import make_pdf


def test_a_spec_names_a_folder_a_language_and_a_question_set(tmp_path: Path) -> None:
    assert parse_spec(str(tmp_path / "My Papers")) == CollectionSpec("My_Papers", tmp_path / "My Papers")
    assert parse_spec(f"law={tmp_path}/gesetze:de") == CollectionSpec("law", tmp_path / "gesetze", "de")
    assert parse_spec(f"law={tmp_path}/a:b") == CollectionSpec("law", tmp_path / "a:b")  # no language: a path
    spec = parse_spec(f"bench={tmp_path}/pdfs:en#{tmp_path}/q.jsonl")
    assert (spec.name, spec.folder, spec.language, spec.questions) == ("bench", tmp_path / "pdfs", "en",
                                                                        tmp_path / "q.jsonl")
    assert parse_spec("~/papers").folder == Path.home() / "papers"
    assert parse_spec(f"fr={tmp_path}/docs:fra").language == "fr"  # a Tesseract name, as its code


def test_a_collection_is_indexed_in_its_language(tmp_path: Path, registry) -> None:
    folder = tmp_path / "gesetze"
    make_pdf(folder / "a.pdf", ["Die Installation der Pakete wird im Handbuch beschrieben."])
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    collection = SharedCollection(parse_spec(f"law={folder}:de"), settings, registry)
    assert collection.wait(300) and collection.error is None
    assert collection.get().language == "de"


@pytest.mark.parametrize("text, words", [
    ("", "empty collection"),
    ("name=", "names no folder"),
    ("demo=/tmp", "is taken"),
    ("Mine=/tmp", "is taken"),
    ("bad name=/tmp", "must be 1-40 letters"),
    ("x=/tmp#", "nothing after '#'"),
    ("x=/tmp:xx", "unknown language 'xx'; supported: en"),
])
def test_a_bad_spec_is_a_settings_error_that_says_what_is_wrong(text: str, words: str) -> None:
    with pytest.raises(SettingsError, match=words):
        parse_spec(text)


def test_missing_unreadable_or_twice_named_folders_are_start_up_errors_naming_them(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=f"folder '{tmp_path}/nowhere' does not exist"):
        served_collections("", [f"papers={tmp_path}/nowhere"])
    (tmp_path / "file.pdf").write_bytes(b"%PDF")
    with pytest.raises(SettingsError, match="is not a folder"):
        served_collections(f"{tmp_path}/file.pdf")
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / "a").mkdir(parents=True)
    with pytest.raises(SettingsError, match="two collections are named 'a'"):
        served_collections(f"{tmp_path}/a", [f"{tmp_path}/b/a"])
    with pytest.raises(SettingsError, match="question file .*q.jsonl"):
        served_collections(f"x={tmp_path}/a#{tmp_path}/q.jsonl")
    both = served_collections(f"one={tmp_path}/a; two={tmp_path}/b", [f"three={tmp_path}/b/a"])
    assert [s.name for s in both] == ["one", "two", "three"]


def test_an_unreadable_folder_is_a_start_up_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o000)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("running as root: permissions do not stop reading")
        with pytest.raises(SettingsError, match="cannot be read"):
            served_collections(f"{locked}")
    finally:
        locked.chmod(0o755)


def test_the_settings_carry_collections_and_the_demo_switch(tmp_path: Path) -> None:
    settings = Settings.from_env(env={"MADQA_COLLECTIONS": f"p={tmp_path}", "MADQA_DEMO": "0"})
    assert settings.collections == f"p={tmp_path}" and settings.demo is False
    assert Settings.from_env(env={}).demo is True


def test_a_question_set_is_found_beside_named_by_the_spec_or_from_a_madqa_dataset(tmp_path: Path) -> None:
    docs = tmp_path / "set" / "docs"
    docs.mkdir(parents=True)
    rows = [{"id": "q1", "question": "How many staff?", "answer_variants": [["42"]]}]
    (tmp_path / "set" / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [q["id"] for q in load_question_set(parse_spec(f"s={docs}"))] == ["q1"]
    assert load_question_set(parse_spec(f"s={docs}/sub")) == []  # in or beside, not two levels up
    named = tmp_path / "mine.jsonl"
    named.write_text(json.dumps({"id": "n1", "question": "Who?"}) + "\n")
    assert [q["id"] for q in load_question_set(parse_spec(f"s={docs}#{named}"))] == ["n1"]
    # a local MADQA dataset (madqa run --dataset PATH): its PDFs and its dev split
    import pyarrow as pa
    import pyarrow.parquet as pq

    dataset = tmp_path / "madqa"
    make_pdf(dataset / "pdfs" / "a.pdf", ["alpha"])
    (dataset / "data").mkdir()
    pq.write_table(pa.table({"id": ["d1"], "question": ["What?"]}), dataset / "data" / "dev-00000-of-00001.parquet")
    spec = parse_spec(f"madqa={dataset}")
    assert spec.documents == dataset / "pdfs"
    assert [q["id"] for q in load_question_set(spec)] == ["d1"]


def make_collection(folder: Path, n: int) -> None:
    for i in range(n):
        make_pdf(folder / f"doc{i:02d}.pdf", [f"Document {i} says the code word is word{i}x."])


def test_a_collection_is_searchable_from_its_first_round_and_grows_to_the_whole(tmp_path: Path, registry) -> None:
    folder = tmp_path / "papers"
    make_collection(folder, 7)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a PDF")
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    collection = SharedCollection(CollectionSpec("papers", folder), settings, registry, first_round=2)
    assert collection.wait(300)
    assert collection.error is None
    sizes = [r.files for r in collection.reports]
    assert sizes[0] == 2 - 1 or sizes[0] == 2  # the broken file may be among the first two read
    assert len(collection.reports) >= 3 and sizes == sorted(sizes)  # rounds: the collection grew, never shrank
    assert [r.pending for r in collection.reports][-1] == 0
    state = collection.state()
    assert (state.files, state.indexed_files, state.pending, state.indexing) == (8, 7, 0, False)
    assert [f for f, _ in state.failures] == ["broken.pdf"]  # reported, never stopping the others
    corpus = collection.get()
    assert sorted(corpus.documents) == [f"doc{i:02d}.pdf" for i in range(7)]
    stored = stored_state(collection.spec, settings)
    assert (stored.files, stored.indexed_files, stored.pages, [f for f, _ in stored.failures]) == (8, 7, 7, ["broken.pdf"])

    # the next start serves the stored generation and reads no file again
    again = SharedCollection(CollectionSpec("papers", folder), settings, registry, first_round=2)
    assert again.wait(300)
    assert again.indexed_now is False
    report = again.reports[-1]
    assert (report.added, report.updated, report.unchanged) == (0, 0, 7)
    assert [f for f, _ in again.state().failures] == ["broken.pdf"]  # a failed file is tried again each start

    # a new file: one round reads it alone
    make_pdf(folder / "new.pdf", ["The new code word is fresh."])
    third = SharedCollection(CollectionSpec("papers", folder), settings, registry, first_round=2)
    assert third.wait(300)
    assert (third.reports[-1].added, third.reports[-1].unchanged) == (1, 7)


def test_an_ingest_reading_at_most_some_files_keeps_the_previous_version_of_the_others(tmp_path: Path,
                                                                                       registry) -> None:
    folder = tmp_path / "docs"
    make_collection(folder, 3)
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    ingest(folder, settings, registry)
    for i in range(3):  # every file changes; only one is read this time
        make_pdf(folder / f"doc{i:02d}.pdf", [f"Changed document {i}."])
    make_pdf(folder / "zz-added.pdf", ["Added."])  # read last: files are read in path order
    report = ingest(folder, settings, registry, read_at_most=1)
    assert (report.updated, report.added, report.pending, report.files) == (1, 0, 3, 3)
    corpus = Corpus.open(folder, settings.corpora_dir)
    texts = {p.file: p.text for p in corpus.iter_pages()}
    assert texts["doc00.pdf"].startswith("Changed") and texts["doc01.pdf"].startswith("Document 1")
    corpus.close()
    report = ingest(folder, settings, registry, read_at_most=10)
    assert (report.updated, report.added, report.pending, report.files) == (2, 1, 0, 4)


def test_a_deferred_file_read_with_other_options_is_not_kept_in_its_old_version(tmp_path: Path) -> None:
    """Its previous pages would pass for this ingest's (another OCR language of a scanned file, say)."""
    from types import SimpleNamespace

    from madqa.ingest_plan import defer_reads

    old = SimpleNamespace(sha256="old")
    previous = SimpleNamespace(documents={"a.pdf": old, "b.pdf": old})
    plan = [("a.pdf", tmp_path / "a.pdf", "new", False), ("b.pdf", tmp_path / "b.pdf", "new", False)]
    kept, deferred = defer_reads(plan, previous, lambda doc: True, 1)
    assert deferred == 1 and kept[1] == ("b.pdf", tmp_path / "b.pdf", "old", True)  # same options: the old one
    kept, deferred = defer_reads(plan, previous, lambda doc: False, 1)
    assert deferred == 1 and [row[0] for row in kept] == ["a.pdf"]  # other options: it waits, unread


def test_madqa_collections_lists_what_the_app_would_serve_and_how_far_each_is_indexed(
        tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from madqa.cli import main

    folder = tmp_path / "papers"
    make_collection(folder, 3)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 no")
    home = tmp_path / "home"
    monkeypatch.setenv("MADQA_HOME", str(home))
    monkeypatch.setenv("MADQA_COLLECTIONS", f"papers={folder}:de")
    assert main(["collections", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert list(rows) == ["demo", "papers"]
    assert (rows["papers"]["files"], rows["papers"]["indexed_files"], rows["papers"]["pending"],
            rows["papers"]["language"]) == (4, 0, 4, "de")
    ingest(folder, Settings.from_env(env={}, home=home), registry)
    assert main(["collections", "--no-demo", "--corpus", f"more={tmp_path}", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert list(rows) == ["papers", "more"]
    papers = rows["papers"]
    assert (papers["files"], papers["indexed_files"], papers["pages"], papers["pending"]) == (4, 3, 3, 0)
    assert [f["file"] for f in papers["failures"]] == ["broken.pdf"]
    assert main(["collections"]) == 0
    out = capsys.readouterr().out
    assert "papers" in out and "broken.pdf could not be indexed" in out
    assert main(["collections", "--corpus", f"{tmp_path}/nowhere"]) == 2
    assert "nowhere' does not exist" in capsys.readouterr().err
