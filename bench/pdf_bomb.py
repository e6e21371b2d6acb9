"""Decompression-bomb PDFs at ingest: peak RSS of the whole process tree, wall time, and what was reported.

    python bench/pdf_bomb.py                         # one 40 MB bomb beside 3 ordinary PDFs
    python bench/pdf_bomb.py --mb 80 --bombs 2       # bigger, several
    python bench/pdf_bomb.py --repo /path/to/other/checkout --kill-after 300   # the same on another checkout

The ingest runs in a child process (``ingest()``, the path both ``madqa index`` and the web app's uploads
take); this script samples the RSS of that process and all its descendants every 50 ms from /proc, and
kills the tree after ``--kill-after`` seconds. Figures only: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.attacks import bomb_pdf  # noqa: E402
from tests.conftest import make_pdf  # noqa: E402

CHILD = (
    "import json, sys; sys.path.insert(0, sys.argv[1])\n"
    "from madqa.index import ingest\nfrom madqa.plugins import collect, get_plugin_manager\n"
    "from madqa.settings import Settings\n"
    "r = ingest(sys.argv[3], Settings.from_env(home=sys.argv[2]), collect(get_plugin_manager(entry_points=False)),"
    " ocr='never')\n"
    "print(json.dumps({'files': r.files, 'pages': r.pages, 'failures': r.failures, 'warnings': r.warnings}))\n"
)


def tree(pid: int) -> list[int]:
    """``pid`` and every descendant, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def rss_mb(pids: list[int]) -> float:
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=int, default=40, help="MB each bomb's page stream inflates to")
    ap.add_argument("--bombs", type=int, default=1)
    ap.add_argument("--kill-after", type=float, default=600)
    ap.add_argument("--repo", type=Path, default=REPO, help="checkout whose madqa is measured")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        sizes = [bomb_pdf(docs / f"bomb{i}.pdf", args.mb).stat().st_size for i in range(args.bombs)]
        for i in range(3):
            make_pdf(docs / f"ordinary{i}.pdf", [f"ordinary page {p} of file {i} about capybaras" for p in range(5)])
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(args.repo.resolve()), str(Path(tmp) / "home"),
                                 str(docs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True)
        peak, killed = 0.0, False
        while proc.poll() is None:
            peak = max(peak, rss_mb(tree(proc.pid)))
            if time.perf_counter() - started > args.kill_after:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
                break
            time.sleep(0.05)
        out, err = proc.communicate()
        elapsed = time.perf_counter() - started
    result = {"repo": str(args.repo), "bomb_kb": [round(s / 1024) for s in sizes], "inflates_to_mb": args.mb,
              "peak_tree_rss_mb": round(peak), "seconds": round(elapsed, 1), "killed": killed}
    if not killed and proc.returncode == 0:
        result.update(json.loads(out.strip().splitlines()[-1]))
    elif not killed:
        result["error"] = err[-800:]
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
