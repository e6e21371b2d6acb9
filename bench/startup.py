"""CLI start-up with a litellm model: how long `madqa ask` takes before its first model request.

    python bench/startup.py [--runs 3]

Starts a fake OpenAI-compatible server on 127.0.0.1 (tests/fake_providers.py) that answers the demo's
first question in two turns, then runs, as a user would,

    madqa ask --corpus data/demo/docs --backend litellm --model openai/x --set backend.api_base=<fake> Q

in a fresh interpreter ``--runs`` times (the demo corpus indexed once first, under a temporary
MADQA_HOME). Prints JSON: per run the wall time, the time from the process's start to the fake's
first request (what start-up costs before any model work), and the time after the last reply;
``import litellm`` alone in a fresh interpreter; and with MADQA_NO_EARLY_IMPORT=1 the same run
without the early background import of litellm (the "before" figure).
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
        out["MADQA_NO_EARLY_IMPORT"] = "1"
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
    return {"wall_s": round(ended - started, 2), "to_first_request_s": round(first, 2) if first else None}


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
    for label, early in (("without_early_import", False), ("with_early_import", True)):
        runs = [pair[early] for pair in pairs]
        result[label] = {"runs": runs, "median_wall_s": statistics.median(r["wall_s"] for r in runs),
                         "median_to_first_request_s": statistics.median(r["to_first_request_s"] for r in runs)}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
