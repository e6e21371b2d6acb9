"""What each question-file bomb of issue 39 costs the reader that refuses it: a fresh process per payload
reads it the way the web app and the CLI do, and reports the refusal, the seconds, and how far its peak
resident memory (VmHWM) grew past what it was after the imports.

    PYTHONPATH=$PWD python -m bench.file_bombs [--out FOLDER]

Prints one JSON object per payload. ``tests/test_file_bombs.py`` asserts the refusals and that the growth
stays far under the issue's +1 GB; the figures themselves come from here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

READERS = {".parquet": "questions", ".jsonl": "questions", ".toml": "config"}

CHILD = r"""
import json, sys, time
from pathlib import Path

def hwm_kb():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

from madqa.errors import MadqaError
from madqa.evaluation.questions import load_questions
from madqa.evaluation.report import load_predictions
from madqa.settings import load_config
import pyarrow.parquet  # imported before the baseline, as the app has it

kind, path = sys.argv[1], sys.argv[2]
read = {"questions": load_questions, "predictions": load_predictions, "config": load_config}[kind]
before, start = hwm_kb(), time.monotonic()
try:
    result = read(path)
    outcome = {"refused": False, "read": len(result[0]) if isinstance(result, tuple) else 1,
               "problems": len(result[1]) if isinstance(result, tuple) else 0}
except MadqaError as exc:
    outcome = {"refused": True, "message": str(exc)}
outcome.update(seconds=round(time.monotonic() - start, 3), peak_growth_mb=round((hwm_kb() - before) / 1024, 1))
print(json.dumps(outcome))
"""


def measure(path: Path, kind: str) -> dict[str, Any]:
    """Read ``path`` as ``kind`` ("questions", "predictions", "config") in a fresh process; its outcome."""
    proc = subprocess.run([sys.executable, "-c", CHILD, kind, str(path)], capture_output=True, text=True,
                          timeout=300, check=False)
    if proc.returncode:
        return {"refused": False, "crashed": proc.returncode, "stderr": proc.stderr[-2000:]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    from tests.attacks import FILE_BOMBS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, help="where the payloads are written (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.out or Path(tmp)
        for name, make in FILE_BOMBS.items():
            path = make(folder / name)
            kinds = [READERS[path.suffix]] + (["predictions"] if path.suffix == ".jsonl" else [])
            for kind in kinds:
                print(json.dumps({"payload": name, "on_disk_kb": round(path.stat().st_size / 1024),
                                  "reader": kind, **measure(path, kind)}), flush=True)


if __name__ == "__main__":
    main()
