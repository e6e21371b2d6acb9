"""madqa.pdf_reader.DocumentReader.read_all: the worker reads one file ahead of the caller, and a worker
that dies or is left early never costs another file its result."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from madqa.errors import CorpusError
from madqa.pdf_reader import POOL, DocumentReader, ReadLimits
from tests.attacks import bomb_pdf
from tests.conftest import make_pdf


def _files(folder: Path, count: int) -> list[Path]:
    return [make_pdf(folder / f"f{i}.pdf", [f"capybara page {p} of file {i}" for p in range(1, 4)])
            for i in range(count)]


def _reader(registry, **limits: int) -> DocumentReader:
    return DocumentReader(registry.create("page_reader", "text", {}), None, "never", ReadLimits(**limits))


def _jobs(paths: list[Path]) -> list[tuple]:
    return [(path, path.name, {}, None) for path in paths]


def test_the_worker_reads_the_next_file_while_the_caller_holds_this_one(tmp_path, registry):
    paths = _files(tmp_path, 3)
    reader = _reader(registry)
    try:
        results = reader.read_all(_jobs(paths))
        count, pages, warnings = next(results)
        assert (count, [p.text.strip() for p in pages][:1], warnings) == (3, ["capybara page 1 of file 0"], [])
        # f1.pdf was asked for before f0.pdf's result came back: its messages are already on their way
        assert reader.worker is not None and reader.worker.conn.poll(30)
        rest = list(results)
        assert [[p.file for p in pages] for _, pages, _ in rest] == [["f1.pdf"] * 3, ["f2.pdf"] * 3]
        assert "of file 2" in rest[1][1][2].text and reader.in_flight == 0
    finally:
        reader.close()


def test_a_reader_left_early_stops_its_worker_instead_of_pooling_it(tmp_path, registry):
    paths = _files(tmp_path, 3)
    reader = _reader(registry)
    results = reader.read_all(_jobs(paths))
    next(results)
    worker = reader.worker
    results.close()  # the caller gave up (an ingest failed) with f1.pdf asked for
    reader.close()
    assert worker is not None and not worker.alive() and worker not in POOL._idle
    again = _reader(registry)  # a pooled worker with f1.pdf's messages left would hand them over here
    try:
        _, pages, _ = again.read(paths[2], "f2.pdf", {})
        assert {p.file for p in pages} == {"f2.pdf"} and "of file 2" in pages[0].text
    finally:
        again.close()


@pytest.mark.slow
def test_the_file_asked_of_a_worker_that_died_is_asked_again(tmp_path, registry):
    good = _files(tmp_path, 2)
    bomb = bomb_pdf(tmp_path / "bomb.pdf", 40)
    reader = _reader(registry, memory_mb=300)
    try:
        first, failed, last = reader.read_all(_jobs([good[0], bomb, good[1]]))
    finally:
        reader.close()
    assert first[0] == 3
    assert isinstance(failed, CorpusError) and "needs more than 300 MB of memory" in str(failed)
    assert last[0] == 3 and {p.file for p in last[1]} == {"f1.pdf"}  # read by a fresh worker


INGEST_IMPORTS = ("from madqa.index import ingest\n"
                  "from madqa.plugins import collect, get_plugin_manager\n"
                  "from madqa.settings import Settings\n")


def _run_script(path: Path, code: str) -> subprocess.CompletedProcess:
    """``code`` run as a user's script at ``path``, in a Python of its own (madqa from this checkout).
    ``run`` returns once every holder of its output pipes is gone: an orphaned reader's last words too."""
    path.write_text(code, encoding="utf-8")
    repo = Path(__file__).resolve().parent.parent
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=repo,
                          env={**os.environ, "PYTHONPATH": str(repo)})


def test_a_script_calling_ingest_at_module_level_needs_no_main_guard(tmp_path):
    """Under multiprocessing's spawn the reader re-ran the caller's script, whose own ingest then waited
    for the corpus lock the script held: both waited for ever."""
    make_pdf(tmp_path / "docs" / "a.pdf", ["capybara facts, page one", "capybara facts, page two"])
    done = _run_script(tmp_path / "unguarded.py", INGEST_IMPORTS +
                       f"settings = Settings.from_env(env={{}}, home={str(tmp_path / 'home')!r})\n"
                       f"report = ingest({str(tmp_path / 'docs')!r}, settings,"
                       " collect(get_plugin_manager(entry_points=False)), ocr='never')\n"
                       "print('RAN', report.files, report.pages, report.failures)\n")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["RAN 1 2 []"]  # the script's body ran once: not again in a reader


def test_a_worker_whose_parent_exits_mid_ingest_ends_quietly(tmp_path):
    """A web app stopped while a background thread ingests: its reader finds the socket reset (messages
    unread), which must end it without a traceback on the terminal."""
    for n in range(3):
        make_pdf(tmp_path / "docs" / f"f{n}.pdf", [f"capybara {n} page {p} " * 50 for p in range(1, 30)])
    done = _run_script(tmp_path / "leaves.py", "import threading\n" + INGEST_IMPORTS +
                       "started = threading.Event()\n"
                       f"settings = Settings.from_env(env={{}}, home={str(tmp_path / 'home')!r})\n"
                       "threading.Thread(target=ingest, daemon=True, args=("
                       f"{str(tmp_path / 'docs')!r}, settings, collect(get_plugin_manager(entry_points=False))),"
                       " kwargs={'ocr': 'never', 'page_progress': lambda *a: started.set()}).start()\n"
                       "started.wait(60)\n"
                       "print('LEFT')\n")
    assert done.stdout.strip() == "LEFT"
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
