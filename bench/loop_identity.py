#!/usr/bin/env python3
"""Same behaviour before and after a change of the loop: every step the agent yields, recorded and compared.

    # 1. record, on the code before the change (a checkout of it first on the path):
    PYTHONPATH=/path/to/before python bench/loop_identity.py tests --out before/ [pytest args...]
    PYTHONPATH=/path/to/before python bench/loop_identity.py sets --out before/
    # 2. the same on the code after it, into after/
    # 3. compare:
    python bench/loop_identity.py compare before/ after/

``tests`` runs pytest (default: the suite's loop tests, no browser) with a plugin that wraps
``madqa.agent.Agent.run`` and ``run_steered`` and records every item they yield (steps, proposed calls;
what a person sent back), per test: the test suite's scripted trajectories and its provider fakes (the
litellm backend against fake servers on 127.0.0.1). ``sets`` runs ``madqa run`` with the offline config
over every committed real-document set fetched under bench/.cache/ and keeps the prediction rows. Both
drop what is timing (``elapsed_s``, ``latency_s``), temporary paths and the line numbers of tracebacks
(a plugin's traceback names the loop's frames, which a refactor moves); everything else must be equal:
answer, citations, flags, refusal, error, search history, trajectory.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SETS = ("realdocs", "realdocs2", "realdocs3", "realdocs4", "heldout_realdocs",
        "heldout2", "heldout3", "heldout4", "heldout5")
LOOP_TESTS = ("test_agent", "test_budget", "test_citations", "test_context", "test_conversation", "test_crashes",
              "test_drift_strategy", "test_image_budget", "test_litellm_backend", "test_litellm_negotiation",
              "test_litellm_limits", "test_llm_rewrite", "test_model_failures", "test_model_matrix",
              "test_offline_backend", "test_offline_closest", "test_oracle", "test_providers", "test_quotes",
              "test_refusals", "test_repair", "test_runner", "test_scope", "test_tools", "test_tool_text",
              "test_search_limits", "test_rerankers", "test_bad_input", "test_human", "test_ui_visitor")
TIMING = {"elapsed_s", "latency_s"}
ELAPSED = re.compile(r"time taken=[\d.]+ seconds|after [\d.]+ ?s\b")  # a timeout says how long it waited
TMP = re.compile(r"/tmp/[^\s'\"),:]+|/work/[^\s'\"),:]+")
FRAME = re.compile(r'File "[^"]+", line \d+, in \S+')
ADDRESS = re.compile(r"127\.0\.0\.1:\d+|localhost:\d+| at 0x[0-9a-f]+")
RANDOM_ID = re.compile(r"\b(call_|toolu_|chatcmpl-)?[0-9a-zA-Z]{24,}\b|\b()[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")  # ids litellm draws for a server that sends none


def normal(value: Any) -> Any:
    """``value`` as JSON with timing fields dropped and run-specific text (paths, ports, frames) masked."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {"__kind": type(value).__name__, **{f.name: getattr(value, f.name) for f in dataclasses.fields(value)}}
    if isinstance(value, dict):
        return {str(k): normal(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list | tuple | set | frozenset):
        items = [normal(v) for v in value]
        return sorted(items, key=json.dumps) if isinstance(value, set | frozenset) else items
    if isinstance(value, str):
        text = FRAME.sub("File <frame>", RANDOM_ID.sub(r"\1<random>", ADDRESS.sub("<addr>", TMP.sub("<path>", ELAPSED.sub("<time>", value)))))
        if "Traceback (most recent call last)" in text:  # only what was raised, not where the loop stood
            text = "\n".join(line for line in text.splitlines() if not line.startswith((" ", "File <frame>")))
        return text
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if callable(value):
        return "<callable>"
    return value


class Recorder:
    """A pytest plugin: wraps the agent's two entry points and writes one JSON line per test."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.streams: list[list[Any]] = []

    def pytest_configure(self, config: Any) -> None:
        from madqa.agent import Agent

        recorder = self
        run, run_steered = Agent.run, Agent.run_steered

        def wrapped(gen: Any, question: str) -> Any:
            stream: list[Any] = [normal(question)]
            recorder.streams.append(stream)
            try:
                item = next(gen)
                while True:
                    stream.append(normal(item))
                    reply = yield item
                    if reply is not None:
                        stream.append({"__reply": normal(reply)})
                    item = gen.send(reply)
            except StopIteration:
                return

        def recorded_run(self: Any, question: str, *args: Any, **kwargs: Any) -> Any:
            return wrapped(run(self, question, *args, **kwargs), question)

        def recorded_steered(self: Any, question: str, *args: Any, **kwargs: Any) -> Any:
            return wrapped(run_steered(self, question, *args, **kwargs), question)

        Agent.run = recorded_run  # type: ignore[method-assign]
        Agent.run_steered = recorded_steered  # type: ignore[method-assign]

    def pytest_runtest_setup(self, item: Any) -> None:
        self.streams = []

    def pytest_runtest_teardown(self, item: Any) -> None:
        if self.streams:
            with self.out.open("a", encoding="utf-8") as f:
                streams = sorted(self.streams, key=json.dumps)  # threads (workers) may interleave
                f.write(json.dumps({"test": item.nodeid, "streams": streams}, sort_keys=True) + "\n")


def record_tests(out: Path, pytest_args: list[str]) -> int:
    import pytest

    out.mkdir(parents=True, exist_ok=True)
    target = out / "tests.jsonl"
    target.unlink(missing_ok=True)
    args = pytest_args or [*(f"tests/{name}.py" for name in LOOP_TESTS if (REPO / "tests" / f"{name}.py").exists()),
                           "-m", "not browser", "-q", "-p", "no:cacheprovider"]
    os.chdir(REPO)
    return int(pytest.main(args, plugins=[Recorder(target)]))


def record_sets(out: Path, home: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MADQA_HOME": str(home)}
    for name in SETS:
        docs = REPO / "bench" / ".cache" / name / "docs"
        if not docs.is_dir():
            print(f"{name}: not fetched (python data/{name}/fetch.py), skipped", file=sys.stderr)
            continue
        questions = [p for p in (REPO / "data" / name / q for q in ("questions.jsonl", "unanswerable.jsonl"))
                     if p.exists()]
        merged = out / f"{name}.questions.jsonl"
        merged.write_text("".join(p.read_text(encoding="utf-8") for p in questions), encoding="utf-8")
        pred = out / f"{name}.jsonl"
        pred.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "madqa", "run", "--corpus", str(docs), "--questions", str(merged),
               "-o", str(pred), "--config", "offline"]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        print(f"{name}: exit {done.returncode}, {sum(1 for _ in pred.open()) if pred.exists() else 0} rows",
              file=sys.stderr)
        if done.returncode not in (0, 1):
            print(done.stderr[-2000:], file=sys.stderr)
    return 0


def _rows(path: Path) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            key = row.get("test") or f"{row.get('config')}:{row.get('id')}"
            rows[key] = normal(row)
    return rows


def compare(before: Path, after: Path) -> int:
    """Prints, per file, how many rows are equal; exits 1 on any difference (the first few are shown)."""
    bad = 0
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for old in sorted(before.glob("*.jsonl")):
        if old.name.endswith(".questions.jsonl"):
            continue
        new = after / old.name
        a, b = _rows(old), _rows(new) if new.exists() else {}
        added = sorted(set(b) - set(a))  # a test written after the change has no "before"
        if added:
            print(f"{old.name}: {len(added)} new (not compared): {', '.join(added[:3])}{' ...' if len(added) > 3 else ''}")
        for key in sorted(a):
            same = a[key] == b.get(key)
            counts[old.name][0 if same else 1] += 1
            if not same:
                bad += 1
                if bad <= 5:
                    print(f"DIFFERENT {old.name} {key}:\n  before {json.dumps(a.get(key))[:1500]}\n"
                          f"  after  {json.dumps(b.get(key))[:1500]}")
    for name, (same, different) in counts.items():
        print(f"{name}: {same} equal, {different} different")
    print("equal" if not bad else f"{bad} rows differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("tests", "sets", "compare"))
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--home", type=Path, default=REPO / "bench" / ".cache" / "loop-identity-home")
    args, rest = parser.parse_known_args(argv)
    if args.what == "compare":
        return compare(Path(args.paths[0]), Path(args.paths[1]))
    if args.out is None:
        parser.error("--out DIR is needed")
    if args.what == "tests":
        return record_tests(args.out, [*args.paths, *rest])
    return record_sets(args.out, args.home)


if __name__ == "__main__":
    sys.exit(main())
