"""The cost curve: ingest time and peak memory (one process, and ``--cluster local:2``), index size and
search latency (whoosh, tantivy, milvus) on generated corpora of growing size, with a fitted growth.

    python -m bench.scale                                  # 10k, 30k and 100k pages
    python -m bench.scale --sizes 10000,30000 --json bench/.cache/scale.json --plot docs/scale.png
    python -m bench.scale --refit bench/.cache/scale.json --plot docs/scale.png   # fit + plot only
    python -m bench.scale --runs 46                        # madqa run: one process vs --cluster local:2

Every ingest is the real command (``python -m madqa index DIR --ocr never --json``) in a child
process; peak memory is the largest sum of RSS over that process and all its descendants (the
cluster's scheduler and workers included), sampled every 0.2 s. Search runs in a child process too:
the time to open each retriever (for milvus: building its Milvus Lite index on first use, BM25 only,
``dense=off``, since embedding 10k+ pages takes hours on 2 cores), then p50/p95 over 100 queries.
A size whose corpus or ingest would overrun ``--budget-s`` is skipped and said so. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "bench" / ".cache"
ENV = {"GRADIO_ANALYTICS_ENABLED": "False", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OMP_THREAD_LIMIT": "1"}
RETRIEVERS = (("whoosh", {}), ("tantivy", {}), ("milvus", {"dense": "off"}))


def _tree_sample(pid: int, cpu: dict[int, float]) -> float:
    """RSS (MB) of ``pid`` and its descendants now; records each one's CPU seconds so far in ``cpu``."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for p in procs:
        try:
            with p.oneshot():
                total += p.memory_info().rss
                times = p.cpu_times()
                cpu[p.pid] = times.user + times.system
        except psutil.Error:
            pass
    return total / 2**20


def timed(cmd: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    """Run ``cmd``; wall seconds, peak tree RSS (MB), CPU seconds of the command's own process and of
    its descendants (the cluster's workers; last sample, so a final < 0.2 s is missed), its JSON stdout."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env={**os.environ, **ENV, **env}, stdout=out,
                                stderr=subprocess.DEVNULL)
        peak = 0.0
        cpu: dict[int, float] = {}
        while proc.poll() is None:
            peak = max(peak, _tree_sample(proc.pid, cpu))
            if time.perf_counter() - started > timeout:
                proc.kill()
                proc.wait()
                return {"skipped": f"over the budget of {timeout:.0f} s"}
            time.sleep(0.2)
        out.seek(0)
        text = out.read()
    seconds = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        return {"failed": f"exit code {proc.returncode}"}
    driver = cpu.pop(proc.pid, 0.0)
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(peak), "cpu_driver_s": round(driver, 1),
            "cpu_children_s": round(sum(cpu.values()), 1), "output": _json_or_text(text)}


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:  # `madqa run` prints a summary line, not JSON
        return text.strip()


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def search_job(root: str, home: str) -> dict[str, Any]:
    """In a child process: open time, first query and p50/p95 of 100 queries per retriever."""
    from bench.corpus import make_queries
    from bench.measure import percentile
    from madqa.corpus import PAGES_DB, Corpus
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings

    settings = Settings.from_env(env={}, home=home)
    corpus = Corpus.open(root, settings.corpora_dir)
    registry = collect(get_plugin_manager(entry_points=False))
    texts = [p.text for _, p in zip(range(3000), corpus.iter_pages(), strict=False)]
    queries = make_queries(texts, 100)
    out: dict[str, Any] = {}
    for name, options in RETRIEVERS:
        if name not in registry.names("retriever"):
            out[name] = {"skipped": "not installed"}
            continue
        started = time.perf_counter()
        retriever = registry.create("retriever", name, corpus, options)
        opened = time.perf_counter() - started
        started = time.perf_counter()
        retriever.search(queries[0], 5)
        first = time.perf_counter() - started
        ms = []
        for q in queries:
            started = time.perf_counter()
            retriever.search(q, 5)
            ms.append((time.perf_counter() - started) * 1000)
        out[name] = {"open_s": round(opened, 2), "first_query_s": round(first, 2),
                     "p50_ms": round(percentile(ms, 50), 1), "p95_ms": round(percentile(ms, 95), 1),
                     "size_mb": round(_du(corpus.retriever_dir(name)) / 2**20, 1)}
    out["page_store_mb"] = round((corpus.gen_dir / PAGES_DB).stat().st_size / 2**20, 1)
    return out


def measure_size(pages: int, budget: float) -> dict[str, Any]:
    from bench.corpus import cached_corpus

    started = time.perf_counter()
    root = cached_corpus(CACHE, pages, max(1, pages // 23))
    row: dict[str, Any] = {"pages": pages, "generate_s": round(time.perf_counter() - started, 1)}
    for label, extra in (("single", []), ("cluster_local2", ["--cluster", "local:2"])):
        home = Path(tempfile.mkdtemp(prefix=f"scale-{label}-", dir=CACHE))
        cmd = [sys.executable, "-m", "madqa", "index", str(root), "--ocr", "never", "--json", *extra]
        result = timed(cmd, {"MADQA_HOME": str(home)}, budget)
        if "output" in result:
            result["pages_per_s"] = round(result["output"]["pages"] / result["seconds"], 1)
            result["home"] = str(home)
            del result["output"]
        row[label] = result
        print(json.dumps({label: result, "pages": pages}), file=sys.stderr, flush=True)
    home = row["single"].get("home")
    if home:
        result = timed([sys.executable, "-m", "bench.scale", "--search-job", str(root), home], {}, budget)
        row["search"] = result.get("output", result)
    return row


def measure_runs(limit: int, budget: float) -> dict[str, Any]:
    """``madqa run`` of the demo questions (offline backend) in one process and on ``--cluster local:2``."""
    out: dict[str, Any] = {}
    home = Path(tempfile.mkdtemp(prefix="scale-run-", dir=CACHE))
    docs, questions = REPO / "data" / "demo" / "docs", REPO / "data" / "demo" / "questions.jsonl"
    env = {"MADQA_HOME": str(home)}
    timed([sys.executable, "-m", "madqa", "index", str(docs), "--json"], env, budget)  # once, OCR included
    for label, extra in (("single", []), ("cluster_local2", ["--cluster", "local:2"])):
        pred = home / f"{label}.jsonl"
        cmd = [sys.executable, "-m", "madqa", "run", "--corpus", str(docs), "--questions", str(questions),
               "-o", str(pred), "--limit", str(limit), *extra]
        result = timed(cmd, env, budget)
        result["summary"] = result.pop("output", None)
        if "seconds" in result:
            result["questions_per_s"] = round(limit / result["seconds"], 3)
        out[label] = result
        print(json.dumps({f"run.{label}": result}), file=sys.stderr, flush=True)
    return out


def fit(xs: list[float], ys: list[float]) -> tuple[float, float] | None:
    """Least squares of log y = log a + b log x: (a, b), or None with fewer than two points."""
    points = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if y and y > 0]
    if len(points) < 2:
        return None
    mx = sum(p[0] for p in points) / len(points)
    my = sum(p[1] for p in points) / len(points)
    sxx = sum((p[0] - mx) ** 2 for p in points)
    b = sum((p[0] - mx) * (p[1] - my) for p in points) / sxx if sxx else 1.0
    return math.exp(my - b * mx), b


def curves(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Fitted growth of ingest time and memory (single, cluster) and the estimates at 1M / 10M pages."""
    out = {}
    for label in ("single", "cluster_local2"):
        for metric in ("seconds", "peak_rss_mb"):
            ok = [r for r in rows if isinstance(r.get(label), dict) and metric in r[label]]
            f = fit([r["pages"] for r in ok], [r[label][metric] for r in ok])
            if f:
                a, b = f
                out[f"{label}.{metric}"] = {"a": a, "exponent": round(b, 2), "points": len(ok),
                                            "estimate_1M": round(a * 1e6 ** b), "estimate_10M": round(a * 1e7 ** b)}
    return out


def plot(rows: list[dict[str, Any]], fits: dict[str, Any], path: Path) -> None:
    """A log-log PNG of ingest time and peak memory against pages, measured points and fitted lines."""
    from PIL import Image, ImageDraw

    width, height, pad = 900, 420, 60
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    panels = (("seconds", "ingest time (s)"), ("peak_rss_mb", "peak memory (MB)"))
    colors = {"single": (31, 119, 180), "cluster_local2": (214, 39, 40)}
    x_lo, x_hi = math.log10(5e3), math.log10(1.2e7)
    for i, (metric, title) in enumerate(panels):
        left, right = pad + i * width // 2, (i + 1) * width // 2 - 20
        top, bottom = 40, height - pad
        values = [r[label][metric] for r in rows for label in colors if metric in r.get(label, {})]
        values += [fits[k][e] for k in fits if k.endswith(metric) for e in ("estimate_10M",)]
        if not values:
            continue
        y_lo, y_hi = math.log10(max(1, min(values)) / 2), math.log10(max(values) * 2)

        def xy(x: float, y: float, left: int = left, right: int = right, top: int = top, bottom: int = bottom,
               y_lo: float = y_lo, y_hi: float = y_hi) -> tuple[float, float]:
            return (left + (math.log10(x) - x_lo) / (x_hi - x_lo) * (right - left),
                    bottom - (math.log10(max(y, 1e-9)) - y_lo) / (y_hi - y_lo) * (bottom - top))

        draw.rectangle([left, top, right, bottom], outline="black")
        draw.text((left, 15), f"{title} vs pages (log-log); dots measured, lines fitted", fill="black")
        for decade in range(4, 8):
            x, _ = xy(10 ** decade, 1)
            draw.line([x, bottom, x, bottom + 5], fill="black")
            draw.text((x - 12, bottom + 8), f"1e{decade}", fill="black")
        for decade in range(math.ceil(y_lo), math.floor(y_hi) + 1):
            _, y = xy(1e4, 10 ** decade)
            draw.line([left - 5, y, left, y], fill="black")
            draw.text((left - 45, y - 6), f"{10 ** decade:g}", fill="black")
        for n, (label, color) in enumerate(colors.items()):
            draw.text((left + 10, top + 8 + 14 * n), label, fill=color)
            f = fits.get(f"{label}.{metric}")
            if f:
                xs = [10 ** (x_lo + j * (x_hi - x_lo) / 50) for j in range(51)]
                draw.line([xy(x, f["a"] * x ** f["exponent"]) for x in xs], fill=color, width=2)
            for r in rows:
                if metric in r.get(label, {}):
                    x, y = xy(r["pages"], r[label][metric])
                    draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=color)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,30000,100000")
    parser.add_argument("--budget-s", type=float, default=3600, help="most seconds per ingest or search job")
    parser.add_argument("--json", type=Path, help="write the results here (rows are added as sizes finish)")
    parser.add_argument("--plot", type=Path, help="write the PNG plot here")
    parser.add_argument("--refit", type=Path, help="only fit and plot the rows of this JSON file")
    parser.add_argument("--runs", type=int, metavar="N", help="instead: time `madqa run` of N demo questions, "
                        "one process vs --cluster local:2")
    parser.add_argument("--search-job", nargs=2, metavar=("ROOT", "HOME"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.search_job:
        print(json.dumps(search_job(*args.search_job)))
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    if args.runs:
        print(json.dumps(measure_runs(args.runs, args.budget_s), indent=1))
        return
    if args.refit:
        rows = json.loads(args.refit.read_text(encoding="utf-8"))["rows"]
    else:
        rows = []
        for size in (int(s) for s in args.sizes.split(",")):
            rows.append(measure_size(size, args.budget_s))
            if args.json:
                args.json.write_text(json.dumps({"rows": rows}, indent=1), encoding="utf-8")
    fits = curves(rows)
    if args.plot:
        plot(rows, fits, args.plot)
    result = {"rows": rows, "fits": fits, "load_avg_1m": os.getloadavg()[0]}
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
