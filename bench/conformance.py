"""The provider conformance matrix: provider x rule x result, as a Markdown table.

    python bench/conformance.py            # about a minute per provider on an idle machine

Each provider's fake server (tests/fake_providers.py) checks every request of a full multi-step
question (three searches, a show_pages, an answer; once with images, once as a text-only model)
against that provider's documented request rules, then plays the error replies (429 with
Retry-After, 400 with a reason, 500, a hang past backend.timeout, arguments that are not JSON).
The same scenarios are tests in tests/test_providers.py; this prints what they found.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests import fake_providers as fp  # noqa: E402

full_question = fp.full_question


def corpus_env() -> tuple[Any, Any, Any]:
    return fp.corpus_env(tempfile.mkdtemp(prefix="madqa-conformance-"))


def ask(env: tuple[Any, Any, Any], provider: fp.FakeProvider, **backend: Any) -> dict[str, Any]:
    return fp.ask(env, provider, api_key="sk-conformance-key", **{"retry_max_delay": 1.0, **backend})


def rule_cells(checks: list[fp.Check]) -> dict[str, str]:
    cells = {}
    for rule in fp.RULES:
        mine = [c for c in checks if c.rule == rule]
        if not mine:
            cells[rule] = "n/a"
            continue
        bad = [c for c in mine if not c.ok]
        cells[rule] = (f"pass ({len(mine)} requests)" if not bad
                       else f"FAIL {len(bad)}/{len(mine)}: {bad[0].detail[:80]}")
    return cells


def errors(env: tuple[Any, Any, Any], kind: str) -> dict[str, str]:
    out = {}
    with fp.FakeProvider(kind, [fp.error(429, "slow down", **{"Retry-After": "0.5"}), *full_question()]) as p:
        row = ask(env, p)
        waited = p.times[1] - p.times[0]
    out["429 + Retry-After 0.5 s"] = (f"retried after {waited:.2f} s, answered" if row["answer"] and waited >= 0.5
                                      else f"FAIL: {row['error']}, waited {waited:.2f} s")
    reason = "Unrecognized request argument supplied: logprobs"
    with fp.FakeProvider(kind, [fp.search("revenue"), fp.error(400, reason)]) as p:
        row = ask(env, p)
    out["400 with a reason"] = ("reason shown, not retried" if reason in (row["error"] or "") and len(p.requests) == 2
                                else f"FAIL: {row['error']}")
    with fp.FakeProvider(kind, [fp.error(500, "internal trouble")] * 3) as p:
        row = ask(env, p)
    out["500"] = (f"{len(p.requests)} attempts, then reported" if "server error" in (row["error"] or "")
                  else f"FAIL: {row['error']}")
    with fp.FakeProvider(kind, [fp.hang(8)] * 2) as p:
        started = time.monotonic()
        row = ask(env, p, timeout=1, max_attempts=2)
        elapsed = time.monotonic() - started
    out["hang, timeout=1 s, 2 attempts"] = (f"ended in {elapsed:.1f} s" if "did not answer in time" in
                                            (row["error"] or "") else f"FAIL: {row['error']}")
    if kind == "openai":
        with fp.FakeProvider(kind, [fp.raw_call("search_documents", '{"query": "revenue'), *full_question()]) as p:
            row = ask(env, p)
        repaired = "not valid JSON" in p.requests[1]["body"]["messages"][-1].get("content", "")
        out["tool arguments not JSON"] = ("one repair turn, then answered" if repaired and row["answer"]
                                          else f"FAIL: {row['error']}")
    else:
        out["tool arguments not JSON"] = "n/a (arguments are a JSON object on this wire)"
    return out


def main() -> None:
    env = corpus_env()
    table: dict[str, dict[str, str]] = {}
    for kind in fp.KINDS:
        with fp.FakeProvider(kind, full_question()) as p:
            row = ask(env, p)
        with fp.FakeProvider(kind, full_question()) as q:
            text_row = ask(env, q, vision=False)
        cells = rule_cells(p.checks + q.checks)
        cells["full question answered"] = "yes" if row["answer"] == ["62,500"] and not row["error"] else "NO"
        cells["text-only model answered"] = "yes" if text_row["answer"] == ["62,500"] else "NO"
        cells.update(errors(env, kind))
        table[f"{kind} ({fp.MODELS[kind]})"] = cells
        print(f"{kind} done", file=sys.stderr)
    providers = list(table)
    rows = list(next(iter(table.values())))
    print("| rule | " + " | ".join(providers) + " |")
    print("|---|" + "---|" * len(providers))
    for rule in rows:
        print(f"| {rule} | " + " | ".join(table[p].get(rule, "n/a") for p in providers) + " |")


if __name__ == "__main__":
    main()
