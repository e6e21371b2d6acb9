"""``run`` killed with SIGKILL more than once (during a run and during its resume), plus a torn last
line: ``--resume`` still ends with every question answered exactly once, in valid rows.

A plugin backend that waits 20 ms and answers stands in for a model (a real one waits on the
network, not the CPU), so 150 questions take seconds and each kill lands mid-run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO, make_pdf

ENV_KEYS = ("PATH", "HOME", "LANG", "OMP_THREAD_LIMIT", "LITELLM_LOCAL_MODEL_COST_MAP")
WAITING_BACKEND = '''
import time
import madqa

class Waiting:
    def decide(self, messages, tools, force_answer):
        time.sleep(0.02)
        return madqa.ModelDecision(answer={"answer": ["42"], "citations": [{"file": "facts.pdf", "page": 1}]})

@madqa.hookimpl
def register_backends(register):
    register("waiting", lambda host, options: Waiting(), "waits 20 ms, then answers", takes_host=True)
'''


def row_count(path: Path) -> int:
    return len(path.read_bytes().splitlines()) if path.exists() else 0


def kill_after(argv: list[str], env: dict[str, str], out: Path, rows: int) -> int:
    """Start ``argv``, SIGKILL it once ``out`` has ``rows`` lines; returns the lines left behind."""
    proc = subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while proc.poll() is None and row_count(out) < rows and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return row_count(out)


def test_run_killed_twice_then_resumed_answers_every_question_once(tmp_path):
    docs = tmp_path / "docs"
    make_pdf(docs / "facts.pdf", ["The answer is 42."])
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "waiting.py").write_text(WAITING_BACKEND, encoding="utf-8")
    questions = [{"id": f"k{n:03}", "question": f"Question number {n}?"} for n in range(150)]
    qfile = tmp_path / "questions.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    out = tmp_path / "pred.jsonl"
    env = {**{k: os.environ[k] for k in ENV_KEYS if k in os.environ}, "MADQA_HOME": str(tmp_path / "home"),
           "MADQA_OCR": "never",
           "MADQA_PLUGINS_DIR": str(plugins)}
    subprocess.run([sys.executable, "-m", "madqa", "index", str(docs)], env=env, cwd=REPO, check=True,
                   capture_output=True, timeout=120)
    argv = [sys.executable, "-m", "madqa", "run", "--corpus", str(docs), "--questions", str(qfile),
            "-o", str(out), "--backend", "waiting", "--workers", "2"]
    first = kill_after(argv, env, out, 5)
    assert 5 <= first < len(questions), "the first kill should land mid-run"
    second = kill_after([*argv, "--resume"], env, out, first + 5)
    assert first < second < len(questions), "the second kill should land mid-resume"
    with open(out, "ab") as f:  # a row cut short by the kill, as a write interrupted half-way leaves it
        f.write(b'{"id": "' + questions[-1]["id"].encode() + b'", "question": "What')
    done = subprocess.run([*argv, "--resume"], env=env, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]  # every line valid JSON
    ids = [r["id"] for r in rows]
    assert sorted(ids) == sorted(q["id"] for q in questions) and len(set(ids)) == len(ids)
    assert all(r["error"] is None and r["answer"] == ["42"] for r in rows)
    assert not (tmp_path / "pred.jsonl.tmp").exists()
