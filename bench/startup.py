"""CLI start-up with a litellm model: how long `madqa ask` takes before its first model request.

    python bench/startup.py [--runs 3]

Starts a fake OpenAI-compatible server on 127.0.0.1 (tests/fake_providers.py) that answers the demo's
first question in two turns, then runs, as a user would,

    madqa ask --corpus data/demo/docs --backend litellm --model openai/x --set backend.api_base=<fake> Q

in a fresh interpreter ``--runs`` times each way, interleaved (the demo corpus indexed once first,
under a temporary MADQA_HOME). "before" is MADQA_FAST_EXIT=0: the interpreter's full last garbage
collection at exit, over litellm's thousands of modules; "after" is the default: the collector frozen
at exit, after every exit handler (madqa_plugins/litellm/litellm_import.py). (Importing litellm early in a background
thread was tried and measured: no gain on this machine, the import is CPU-bound under the GIL.)
Prints JSON: per run the wall time, the time from the process's start to the fake's first request
(start-up before any model work) and from its last request to the process's end (the exit), and
``import litellm`` alone in a fresh interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests import fake_providers as fp  # noqa: E402

QUESTION = "What was Kestrel Dynamics' total revenue in 2024 according to the consolidated income statement?"


def replies() -> list[fp.Reply]:
    return [fp.search("total revenue 2024"),
            fp.answer(["148,612"], [{"file": "finance/annual_report_2024.pdf", "page": 6}])]


def env(home: str, early: bool) -> dict[str, str]:
    out = {**os.environ, "MADQA_HOME": home, "PYTHONPATH": str(REPO), "GRADIO_ANALYTICS_ENABLED": "False",
           "OPENAI_API_KEY": "sk-bench"}
    out.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)  # as a user has it: madqa sets it
    if not early:
        out["MADQA_FAST_EXIT"] = "0"
    return out


def one_run(home: str, early: bool) -> dict[str, Any]:
    with fp.FakeProvider("openai", replies(), model="openai/x") as provider:
        command = [sys.executable, "-m", "madqa", "ask", "--corpus", str(REPO / "data/demo/docs"),
                   "--backend", "litellm", "--model", "openai/x", "--set", f"backend.api_base={provider.url}",
                   QUESTION]
        started = time.monotonic()
        done = subprocess.run(command, env=env(home, early), capture_output=True, text=True, timeout=600)
        ended = time.monotonic()
        first = provider.times[0] - started if provider.times else None
    if done.returncode != 0 or "148,612" not in done.stdout:
        raise SystemExit(f"madqa ask failed ({done.returncode}): {done.stdout[-500:]} {done.stderr[-1500:]}")
    last = provider.times[-1] - started
    return {"wall_s": round(ended - started, 2), "to_first_request_s": round(first, 2) if first else None,
            "after_last_request_s": round(ended - started - last, 2)}


def import_alone() -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "import litellm"], env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
                   check=True, capture_output=True)
    return round(time.monotonic() - started, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="madqa-startup-")
    subprocess.run([sys.executable, "-m", "madqa", "index", str(REPO / "data/demo/docs")], env=env(home, True),
                   check=True, capture_output=True)
    result: dict[str, Any] = {"import_litellm_s": [import_alone() for _ in range(args.runs)]}
    pairs = [(one_run(home, False), one_run(home, True)) for _ in range(args.runs)]  # interleaved: same load
    for label, early in (("before", False), ("after", True)):
        runs = [pair[early] for pair in pairs]
        result[label] = {"runs": runs, **{f"median_{k}": statistics.median(r[k] for r in runs)
                                          for k in ("wall_s", "to_first_request_s", "after_last_request_s")}}
    result["load_average"] = os.getloadavg()[0]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
