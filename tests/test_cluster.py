"""Ingest and batch runs on a real Dask cluster of separate processes on 127.0.0.1 (a scheduler and two
workers started here), with a worker killed mid-run: the results equal a single-process run's."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from madqa.cluster import check_url, executor
from madqa.corpus import Corpus
from madqa.errors import ClusterError
from madqa.evaluation.questions import load_questions
from madqa.evaluation.runner import run_batch
from madqa.index import ingest
from madqa.settings import load_config
from tests.conftest import make_pdf

distributed = pytest.importorskip("distributed", reason="the cluster needs requirements-optional.txt")
REPO = Path(__file__).resolve().parent.parent
QUESTIONS = REPO / "data" / "demo" / "questions.jsonl"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaskProcesses:
    """``dask scheduler`` and ``dask worker`` processes (no nanny: a killed worker stays dead)."""

    def __init__(self, tmp: Path) -> None:
        self.port = _free_port()
        self.url = f"tcp://127.0.0.1:{self.port}"
        self.env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.tmp = tmp
        self.scheduler = self._start("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                                     str(self.port), "--dashboard-address", "127.0.0.1:0")
        self.workers: list[subprocess.Popen] = []

    def _start(self, module: str, *args: str) -> subprocess.Popen:
        with open(self.tmp / f"{module.rsplit('.', 1)[-1]}-{time.monotonic_ns()}.log", "w") as log:
            return subprocess.Popen([sys.executable, "-m", module, *args], cwd=REPO, env=self.env,
                                    stdout=log, stderr=subprocess.STDOUT)

    def top_up(self, n: int = 2) -> None:
        """Have ``n`` live workers connected (start replacements for killed ones)."""
        self.workers = [w for w in self.workers if w.poll() is None]
        while len(self.workers) < n:
            self.workers.append(self._start("distributed.cli.dask_worker", self.url, "--nthreads", "1",
                                            "--no-nanny", "--host", "127.0.0.1",
                                            "--dashboard-address", "127.0.0.1:0"))
        with distributed.Client(self.url, timeout=60) as client:
            client.wait_for_workers(n, timeout=180)
            deadline = time.monotonic() + 60  # the scheduler forgets a killed worker after its heartbeat
            while len(client.scheduler_info(n_workers=-1)["workers"]) > n and time.monotonic() < deadline:
                time.sleep(0.5)

    def stop(self) -> None:
        for proc in [*self.workers, self.scheduler]:
            proc.terminate()
        for proc in [*self.workers, self.scheduler]:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a loaded machine: kill, and reap it so no zombie is left
                proc.kill()
                proc.wait(timeout=30)


@pytest.fixture(scope="module")
def dask_processes(tmp_path_factory: pytest.TempPathFactory):
    procs = DaskProcesses(tmp_path_factory.mktemp("dask"))
    try:
        yield procs
    finally:
        procs.stop()


@pytest.fixture
def cluster(dask_processes: DaskProcesses) -> DaskProcesses:
    dask_processes.top_up(2)
    return dask_processes


def _answers(rows: list[dict]) -> dict[str, tuple]:
    return {r["id"]: (r["answer"], r["citations"], r["search_history"], r.get("error")) for r in rows}


def _file_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_urls_are_checked_with_a_clear_error():
    assert check_url("local:2") == "local:2" and check_url("tcp://10.0.0.5:8786")
    for bad, message in (("ray://h:10001", "Ray is not supported"), ("local:0", "1 <= N"),
                         ("http://h:1", "expected local:N")):
        with pytest.raises(ClusterError, match=message):
            check_url(bad)
    with pytest.raises(ClusterError, match="cannot reach the Dask scheduler"):
        executor(f"tcp://127.0.0.1:{_free_port()}", connect_timeout=2)


def test_cluster_ingest_with_a_worker_killed_equals_a_local_ingest(tmp_path, cluster, registry):
    from madqa.settings import Settings

    root = tmp_path / "docs"
    for n in range(8):
        make_pdf(root / f"f{n}.pdf", [f"file {n} page {p} zeppelin{n * 10 + p}" for p in range(1, 4)])
    (root / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    local = Settings.from_env(env={}, home=tmp_path / "local")
    remote = Settings.from_env(env={}, home=tmp_path / "remote")
    expected = ingest(root, local, registry, ocr="never")
    killed: list[int] = []

    def progress(file: str, done: int, total: int) -> None:
        if done == 3 and not killed:  # files 1-2 are in; the rest are running or queued on the workers
            cluster.workers[0].send_signal(signal.SIGKILL)
            killed.append(cluster.workers[0].pid)

    with executor(cluster.url) as ex:
        report = ingest(root, remote, registry, ocr="never", executor=ex, progress=progress)
    assert killed and cluster.workers[0].wait(timeout=30) == -signal.SIGKILL
    assert (report.files, report.pages, report.failures) == (expected.files, expected.pages, expected.failures)
    a, b = Corpus.open(root, local.corpora_dir), Corpus.open(root, remote.corpora_dir)
    assert [(p.file, p.page, p.text, p.source) for p in a.iter_pages()] == \
           [(p.file, p.page, p.text, p.source) for p in b.iter_pages()]
    assert a.manifest["documents"] == b.manifest["documents"]


def test_a_cluster_worker_reads_all_its_files_in_one_reader_process(tmp_path, cluster, registry):
    """A new limited reader per file cost ~0.6 CPU-s each on the workers (most of the cluster's CPU)."""
    from madqa.settings import Settings

    psutil = pytest.importorskip("psutil")
    root = tmp_path / "docs"
    for n in range(8):
        make_pdf(root / f"f{n}.pdf", [f"file {n} page {p}" for p in range(1, 3)])
    readers: set[int] = set()

    def progress(file: str, done: int, total: int) -> None:  # between files: which readers are alive
        for worker in cluster.workers:
            for child in psutil.Process(worker.pid).children():
                with contextlib.suppress(psutil.Error):
                    if "madqa.pdf_reader" in " ".join(child.cmdline()):
                        readers.add(child.pid)

    with executor(cluster.url) as ex:
        report = ingest(root, Settings.from_env(env={}, home=tmp_path / "home"), registry, ocr="never",
                        executor=ex, progress=progress)
    progress("", 0, 0)
    assert (report.files, report.pages, report.failures) == (8, 16, [])
    assert 1 <= len(readers) <= len(cluster.workers), readers


def test_cluster_run_with_a_worker_killed_answers_like_one_process(tmp_path, cluster, demo_corpus, demo_settings):
    from madqa.plugins import collect, get_plugin_manager

    registry = collect(get_plugin_manager(entry_points=False))
    questions, _ = load_questions(QUESTIONS)
    questions = questions[:6]
    config = load_config("offline")
    single = run_batch(questions, demo_corpus, config, registry, demo_settings, out_path=tmp_path / "one.jsonl")
    killed: list[int] = []

    def on_row(row: dict, question: dict) -> None:
        if not killed:  # the first row is in: kill a worker while others are still answering
            cluster.workers[1].send_signal(signal.SIGKILL)
            killed.append(cluster.workers[1].pid)

    with executor(cluster.url) as ex:
        rows = run_batch(questions, demo_corpus, config, registry, demo_settings, out_path=tmp_path / "c.jsonl",
                         executor=ex, on_row=on_row)
    assert killed and cluster.workers[1].wait(timeout=30) == -signal.SIGKILL
    ids = _file_ids(tmp_path / "c.jsonl")
    assert sorted(ids) == sorted(q["id"] for q in questions) and len(ids) == len(set(ids))  # once each
    assert _answers(rows) == _answers(single)  # the offline backend is deterministic


def test_cluster_resume_answers_every_question_exactly_once(tmp_path, cluster, demo_corpus, demo_settings):
    from madqa.plugins import collect, get_plugin_manager

    registry = collect(get_plugin_manager(entry_points=False))
    questions, _ = load_questions(QUESTIONS)
    questions = questions[:5]
    config = load_config("offline")
    single = run_batch(questions, demo_corpus, config, registry, demo_settings, out_path=tmp_path / "one.jsonl")
    out = tmp_path / "c.jsonl"
    lines = (tmp_path / "one.jsonl").read_text(encoding="utf-8").splitlines()
    errored = {**json.loads(lines[3]), "error": "backend: timed out"}
    out.write_text("\n".join([*lines[:3], json.dumps(errored), lines[4][:20]]) + "\n", encoding="utf-8")
    with executor(cluster.url) as ex:
        rows = run_batch(questions, demo_corpus, config, registry, demo_settings, out_path=out, resume=True,
                         executor=ex)
    ids = _file_ids(out)
    assert sorted(ids) == sorted(q["id"] for q in questions) and len(ids) == len(set(ids))
    assert _answers(rows) == _answers(single)


def test_cli_index_on_a_local_cluster_and_run_on_a_scheduler(tmp_path, capsys, monkeypatch, cluster):
    from madqa.cli import main

    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["The zeppelin report", "Revenue was 42 million"])
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "What was the revenue?"}) + "\n", encoding="utf-8")
    assert main(["index", str(root), "--cluster", "local:1", "--ocr", "never"]) == 0
    assert "indexed 1 files, 2 pages" in capsys.readouterr().out
    out = tmp_path / "pred.jsonl"
    assert main(["run", "--corpus", str(root), "--questions", str(questions), "-o", str(out),
                 "--cluster", cluster.url]) == 0
    assert _file_ids(out) == ["q1"]
    assert main(["index", str(root), "--cluster", "ray://127.0.0.1:10001"]) == 2
    assert "Ray is not supported" in capsys.readouterr().err
