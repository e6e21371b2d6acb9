"""Batch runs: rows as they finish, resume after errors and torn lines, and a run killed mid-way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from madqa.corpus import Corpus
from madqa.evaluation.runner import run_batch
from madqa.index import ingest
from madqa.settings import load_config
from tests.conftest import REPO, make_pdf

QUESTIONS = [{"id": f"q{n}", "question": f"What is fact {n}?", "answer_variants": [[f"value {n}"]],
              "evidence": [{"document": "facts.pdf", "page": 1}]} for n in range(6)]


@pytest.fixture
def corpus(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "facts.pdf", ["fact 0 is value 0. fact 1 is value 1.", "other page"])
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


def scripted(corpus, registry, settings, out, **kw):
    config = load_config("offline").with_overrides(backend="scripted")
    script = [{"search": "fact"}, {"answer": ["value 0"], "citations": [{"file": "facts.pdf", "page": 1}]}]
    return run_batch(QUESTIONS, corpus, config, registry, settings, out_path=out,
                     backend_options={"script": script}, **kw)


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_rows_are_written_in_the_madqa_format(tmp_path, corpus, registry, settings):
    out = tmp_path / "pred.jsonl"
    seen = []
    rows = run_batch(QUESTIONS[:2], corpus, load_config("offline").with_overrides(backend="scripted"),
                     registry, settings, out_path=out, on_row=lambda row, q: seen.append(q["id"]),
                     backend_options={"script": [{"search": "fact"}, {"answer": ["value 0"], "citations": []}]})
    assert [r["id"] for r in rows] == ["q0", "q1"] == seen
    written = lines(out)
    assert written == [json.loads(json.dumps(r)) for r in rows]  # the rows as JSON holds them (tuples as lists)
    for key in ("id", "question", "answer", "citations", "search_history", "iterations", "model",
                "config", "trajectory", "usage", "cost_usd", "latency_s", "error"):
        assert key in written[0]
    assert written[0]["answer"] == ["value 0"] and written[0]["search_history"][0]["query"] == "fact"


def test_resume_keeps_answers_retries_errors_and_drops_torn_lines(tmp_path, corpus, registry, settings):
    out = tmp_path / "pred.jsonl"
    good = {"id": "q0", "question": "What is fact 0?", "answer": ["kept"], "citations": [], "error": None}
    bad = {"id": "q1", "question": "What is fact 1?", "answer": [], "citations": [], "error": "backend: 503"}
    out.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n" + '{"id": "q2", "quest', encoding="utf-8")
    rows = scripted(corpus, registry, settings, out, resume=True, workers=3)
    written = lines(out)
    assert sorted(r["id"] for r in written) == [f"q{n}" for n in range(6)]  # each exactly once
    assert next(r for r in written if r["id"] == "q0")["answer"] == ["kept"]  # not re-run
    assert next(r for r in written if r["id"] == "q1")["error"] is None  # retried
    assert len(rows) == 6


def test_without_resume_the_file_starts_afresh(tmp_path, corpus, registry, settings):
    out = tmp_path / "pred.jsonl"
    out.write_text('{"id": "old"}\n', encoding="utf-8")
    scripted(corpus, registry, settings, out, limit=2)
    assert [r["id"] for r in lines(out)] == ["q0", "q1"]


SLOW_BACKEND = '''
import time
import madqa

class Slow:
    def decide(self, messages, tools, force_answer):
        time.sleep(0.05)
        return madqa.ModelDecision(answer={"answer": ["slow"], "citations": []})

@madqa.hookimpl
def register_backends(register):
    register("slow", lambda host, options: Slow(), "sleeps, then answers", takes_host=True)
'''


def plugin_run(tmp_path, backend: str, source: str, prefix: str, count: int) -> tuple[list[str], dict[str, str], Path]:
    """An indexed one-PDF corpus, ``count`` questions and the backend plugin ``source``: the ``madqa run`` argv
    that asks them of ``backend`` (no --workers yet), its environment and its output file."""
    root = tmp_path / "docs"
    make_pdf(root / "facts.pdf", ["facts"])
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / f"{backend}.py").write_text(source, encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps({"id": f"{prefix}{n}", "question": f"question {n}?"}) + "\n"
                                 for n in range(count)), encoding="utf-8")
    out = tmp_path / "pred.jsonl"
    env = {**os.environ, "MADQA_HOME": str(tmp_path / "home"), "MADQA_PLUGINS_DIR": str(plugins)}
    subprocess.run([sys.executable, "-m", "madqa", "index", str(root)], env=env, cwd=REPO, check=True,
                   capture_output=True, timeout=120)
    return ([sys.executable, "-m", "madqa", "run", "--corpus", str(root), "--questions", str(questions),
             "-o", str(out), "--backend", backend], env, out)


def test_killed_run_resumes_with_every_question_once(tmp_path):
    argv, env, out = plugin_run(tmp_path, "slow", SLOW_BACKEND, "k", 80)
    argv += ["--workers", "2"]
    proc = subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 10):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = len(out.read_text().splitlines())
    assert 10 <= partial < 80, "the kill should land mid-run"
    done = subprocess.run([*argv, "--resume"], env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    ids = [r["id"] for r in lines(out)]
    assert sorted(ids) == sorted(f"k{n}" for n in range(80)) and len(ids) == 80


STUCK_BACKEND = '''
import time
import madqa

class Stuck:
    """The first call answers; every later one waits like a model server that hangs (far past the test)."""
    calls = 0

    def decide(self, messages, tools, force_answer):
        Stuck.calls += 1
        if Stuck.calls > 1:
            time.sleep(600)
        return madqa.ModelDecision(answer={"answer": ["first"], "citations": []})

@madqa.hookimpl
def register_backends(register):
    register("stuck", lambda host, options: Stuck(), "answers once, then hangs", takes_host=True)
'''


def test_ctrl_c_stops_a_run_of_several_workers_without_waiting_for_their_calls(tmp_path):
    argv, env, out = plugin_run(tmp_path, "stuck", STUCK_BACKEND, "s", 6)
    proc = subprocess.Popen([*argv, "--workers", "3"], env=env, cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or not out.read_text()):
        time.sleep(0.05)
    time.sleep(0.5)  # the other workers are inside their hanging calls now
    proc.send_signal(signal.SIGINT)
    try:  # a thread pool waited for the hanging calls (600 s each) before the process could end
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the run kept waiting for its model calls after Ctrl-C")
    assert proc.returncode == 130 and "madqa: interrupted" in err and "Traceback" not in err, err
    assert len(lines(out)) == 1  # the answered row, kept; none written for the calls cut short


def test_eval_cli_json_and_table(tmp_path):
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS[:2]), encoding="utf-8")
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps({"question": "What is fact 0?", "answer": ["value 0"],
                             "citations": [{"file": "facts.pdf", "page": 1}],
                             "search_history": [{"iteration": 1, "query": "fact", "num_results": 1}],
                             "iterations": 2}) + "\n", encoding="utf-8")
    b.write_text(json.dumps({"id": "q1", "question": "different text", "answer": 42, "citations": []}) + "\n"
                 + "not json\n", encoding="utf-8")
    env = {**os.environ, "MADQA_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-W", "error", "-m", "madqa", "eval", str(a), str(b), "--gold", str(gold),
                           "--json"], capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)  # pure JSON on stdout; warnings on stderr
    assert "line 2" in proc.stderr
    assert set(result) == {"a", "b"}
    for key in ("n", "n_gold", "accuracy", "anls", "doc_f1", "page_f1", "kuiper", "wasted_effort_ratio",
                "query_drift", "evidence_recall", "first_query_success", "errors"):
        assert key in result["a"]["overall"]
    assert set(result["a"]["by_hop_type"]) == {"single", "cross_page", "cross_doc"}
    assert result["a"]["overall"]["accuracy"] == 1.0 and result["a"]["overall"]["page_f1"] == 1.0
    assert result["b"]["overall"]["n"] == 1 and result["b"]["overall"]["accuracy"] == 0.0  # numeric answer, no crash
    assert result["b"]["overall"]["n_missing"] == 1
    table = subprocess.run([sys.executable, "-m", "madqa", "eval", str(a), str(b), "--gold", str(gold)],
                           capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert table.returncode == 0 and table.stdout.splitlines()[0].split() == ["metric", "a", "b"]


@pytest.mark.parametrize("resume", [False, True])
def test_a_config_that_cannot_be_built_raises_before_the_output_is_touched(tmp_path, corpus, registry, settings,
                                                                            resume):
    from madqa.errors import PluginError

    out = tmp_path / "pred.jsonl"
    kept = '{"id": "q0", "question": "What is fact 0?", "answer": ["kept"], "citations": [], "error": null}\n'
    out.write_text(kept, encoding="utf-8")
    config = load_config("offline").with_overrides(backend="no-such-backend")
    with pytest.raises(PluginError, match="no-such-backend"):
        run_batch(QUESTIONS, corpus, config, registry, settings, out_path=out, resume=resume)
    assert out.read_text(encoding="utf-8") == kept  # not one error row per question, nothing dropped


@pytest.mark.parametrize("flags", [
    ["--backend", "no-such-backend"],
    ["--backend", "litellm", "--model", "no-such-provider/x"],
    ["--backend", "litellm", "--model", "openai/x", "--set", "backend.force_tool_choice=sometimes"],
    ["--set", "retriever.no_such_option=1"],
    ["--backend", "litellm", "--model", "openai/x", "--api-base", "127.0.0.1:8000/v1"],
])
def test_cli_run_with_a_config_that_cannot_start_exits_2_with_one_line_and_writes_nothing(
        tmp_path, corpus, settings, monkeypatch, capsys, flags):
    from madqa.cli import main

    monkeypatch.setenv("MADQA_HOME", str(settings.home))
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    out = tmp_path / "pred.jsonl"
    code = main(["run", "--corpus", str(corpus.root), "--questions", str(questions), "-o", str(out), *flags])
    err = capsys.readouterr().err
    assert code == 2, err
    assert [line for line in err.splitlines() if line.startswith("madqa:")] == [err.strip().splitlines()[-1]]
    assert "Traceback" not in err and "failed" not in err
    assert not out.exists() or out.read_text(encoding="utf-8") == ""
