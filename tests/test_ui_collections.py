"""The web app serving an operator's collection (issue 28), in-process: ``app.py --corpus`` on a folder of real
PDFs made here is indexed in the background, opened on, answered from by two visitors at once, evaluated with its
own question set, and a second start reuses its index without reading a file again."""

from __future__ import annotations

import gc
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from gradio_client import Client

import app as app_module
from madqa.collections import served_collections
from madqa.plugins import collect, get_plugin_manager
from madqa.settings import Settings
from madqa.ui import build_app, launch_options
from madqa.ui.build import stop_app
from madqa.ui.collection_picker import collection_label, collection_status
from tests.browser_support import GRADIO_QUIRKS, close_app
from tests.test_ui_api import free_port, text

pytestmark = GRADIO_QUIRKS
FACTS = {
    "widgets.pdf": ["The zorblax quarterly widget count was 4711 units.", "Second page: nothing about widgets."],
    "ferries.pdf": ["The Quillmarsh ferry carried 8316 passengers in March."],
    "orchard/apples.pdf": ["The Brackenfold orchard harvested 2950 crates of apples."],
}


def make_papers(folder: Path) -> Path:
    from tests.conftest import make_pdf

    for name, pages in FACTS.items():
        make_pdf(folder / name, pages)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really a PDF")
    rows = [{"id": "p1", "question": "How many passengers did the Quillmarsh ferry carry in March?",
             "answer_variants": [["8316"]], "evidence": [{"document": "ferries.pdf", "page": 1}]},
            {"id": "p2", "question": "How many crates of apples did the Brackenfold orchard harvest?",
             "answer_variants": [["2950"]], "evidence": [{"document": "orchard/apples.pdf", "page": 1}]}]
    (folder / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def served_papers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    folder = make_papers(tmp_path_factory.mktemp("papers"))
    home = tmp_path_factory.mktemp("collections-home")
    settings = Settings.from_env(env={}, home=home, web_requests_per_minute=100_000, web_jobs_per_client=100)
    registry = collect(get_plugin_manager(entry_points=False))
    app = build_app(settings, registry, collections=served_collections("", [f"papers={folder}"]))
    options = {**launch_options(settings, app), "server_name": "127.0.0.1", "server_port": free_port(),
               "prevent_thread_lock": True, "quiet": True}
    app.launch(**options)
    gc.collect()
    try:
        yield SimpleNamespace(url=f"http://127.0.0.1:{options['server_port']}/", app=app, folder=folder,
                              settings=settings, registry=registry)
    finally:
        close_app(app)
        gc.collect()


def client(server: SimpleNamespace) -> Client:
    return Client(server.url, verbose=False, download_files=False, analytics_enabled=False)


def test_the_collection_is_indexed_served_and_reports_its_bad_file(served_papers: SimpleNamespace) -> None:
    sessions = served_papers.app.madqa_sessions
    assert list(sessions.shared) == ["demo", "papers"] and sessions.default_key == "papers"
    papers = sessions.shared["papers"]
    assert papers.wait(300) and papers.error is None
    assert sorted(papers.get().documents) == ["ferries.pdf", "orchard/apples.pdf", "widgets.pdf"]
    state = papers.state()
    assert (state.files, state.indexed_files, state.pages) == (4, 3, 4)
    assert [f for f, _ in state.failures] == ["broken.pdf"]
    assert "**papers** ready: 3 documents, 4 pages" in collection_status(papers)
    assert "1 file could not be indexed: broken\\.pdf (corrupt PDF" in collection_status(papers)  # Markdown-escaped
    assert collection_label(papers) == "papers — 3 documents, 4 pages, 1 failed"


def test_two_visitors_ask_the_collection_at_once(served_papers: SimpleNamespace) -> None:
    served_papers.app.madqa_sessions.shared["papers"].wait(300)
    questions = {"zorblax": ("How many zorblax widgets were counted?", "4711", "widgets.pdf"),
                 "ferry": ("How many passengers did the Quillmarsh ferry carry in March?", "8316", "ferries.pdf")}
    answers: dict[str, Any] = {}

    def visit(key: str) -> None:
        question = questions[key][0]
        answers[key] = client(served_papers).predict(question=question, history=[], api_name="/ask")[1][-1]

    threads = [threading.Thread(target=visit, args=(key,)) for key in questions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    for key, (_, number, file) in questions.items():
        assert number in text(answers[key])
        assert answers[key]["options"][0]["label"] == f"📄 {file} · p.1"


def test_evaluate_runs_the_collections_own_question_set(served_papers: SimpleNamespace) -> None:
    served_papers.app.madqa_sessions.shared["papers"].wait(300)
    result = client(served_papers).predict(
        question_file=None, configs=["offline"], limit=0, workers=1, api_key="", api_name="/evaluate")
    status, per_question = result[0], result[6]  # the outputs' order: tests/test_ui_api.py
    assert "Ran 2 questions of **the papers question set** through 1 config on **the collection papers**" in status
    assert sorted(row[1] for row in per_question["data"]) == ["p1", "p2"]


def test_a_second_start_reuses_the_index_without_reading_a_file(served_papers: SimpleNamespace) -> None:
    first = served_papers.app.madqa_sessions.shared["papers"]
    first.wait(300)
    again = build_app(served_papers.settings, served_papers.registry,
                      collections=served_collections("", [f"papers={served_papers.folder}"]), demo=False)
    try:
        papers = again.madqa_sessions.shared["papers"]
        assert list(again.madqa_sessions.shared) == ["papers"]  # the demo is off
        assert papers.wait(300)
        report = papers.reports[-1]
        assert (report.added, report.updated, report.unchanged) == (0, 0, 3) and not papers.indexed_now
        assert sorted(papers.get().documents) == sorted(first.get().documents)
    finally:
        stop_app(again)


def test_app_py_names_a_missing_folder_and_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MADQA_COLLECTIONS", raising=False)
    assert app_module.main(["--corpus", f"papers={tmp_path}/nowhere"]) == 2
    assert f"madqa: collection papers: folder '{tmp_path}/nowhere' does not exist" in capsys.readouterr().err
    monkeypatch.setenv("MADQA_COLLECTIONS", f"{tmp_path}/also-missing")
    assert app_module.main([]) == 2
    assert "also-missing' does not exist" in capsys.readouterr().err


def test_a_collection_whose_folder_went_is_said_unavailable_in_the_page(tmp_path: Path) -> None:
    """A folder removed after the start (the start itself refuses a missing one): said in the status, no crash."""
    folder = make_papers(tmp_path / "gone")
    settings = Settings.from_env(env={}, home=tmp_path / "home", collections=f"gone={folder}", demo=False)
    specs = served_collections(settings.collections)
    shutil.rmtree(folder)
    app = build_app(settings, collect(get_plugin_manager(entry_points=False)), collections=specs)
    try:
        gone = app.madqa_sessions.shared["gone"]
        assert gone.wait(60) and gone.corpus is None and "is missing" in (gone.error or "")
        assert collection_status(gone).startswith("⚠ **gone** is unavailable: the folder of gone")
        assert collection_label(gone) == "gone — unavailable"
    finally:
        stop_app(app)


def test_a_collection_still_indexing_answers_from_what_is_indexed_and_says_how_much(tmp_path: Path,
                                                                                    registry) -> None:
    from madqa.agent import Agent
    from madqa.collection_index import SharedCollection
    from madqa.collections import CollectionSpec
    from madqa.settings import PipelineConfig
    from madqa.types import AnswerStep
    from madqa.ui.collection_picker import partial_note
    from tests.conftest import make_pdf

    folder = tmp_path / "growing"
    make_pdf(folder / "a-ferries.pdf", ["The Quillmarsh ferry carried 8316 passengers in March."])
    for i in range(5):
        make_pdf(folder / f"b-filler{i}.pdf", [f"Filler document {i} about nothing in particular."])
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    collection = SharedCollection(CollectionSpec("growing", folder), settings, registry, first_round=1)
    seen: list[tuple[str, str | None]] = []
    reading = collection._progress

    def during_rounds(file: str, done: int, total: int) -> None:  # what a visitor would get while files are read
        reading(file, done, total)
        corpus = collection.corpus
        if corpus is not None and not seen:
            steps = list(Agent(corpus, PipelineConfig(), registry, settings).run(
                "How many passengers did the Quillmarsh ferry carry in March?"))
            answer = next(s for s in steps if isinstance(s, AnswerStep))
            seen.append((partial_note(collection), " ".join(answer.answer)))

    collection._progress = during_rounds
    assert collection.wait(300) and collection.error is None
    note, answer = seen[0]
    assert note == "growing is still being indexed: searching 1 of 6 files (1 page) indexed so far"
    assert "8316" in answer  # answered from the first round's file, not an error
    assert partial_note(collection) == ""  # whole now: nothing to say
