"""The cost curve: ingest time and peak memory (one process, and ``--cluster local:2``), index size and
search latency (whoosh, tantivy, milvus; dense at small sizes) on generated corpora, with a fitted growth.

    nice -n 10 python -m bench.scale                       # 10k, 30k and 100k pages
    python -m bench.scale --sizes 10000,30000 --json bench/.cache/scale.json --plot docs/scale.png
    python -m bench.scale --sizes 1000 --dense-up-to 1000  # the dense retriever's build, where it fits
    python -m bench.scale --refit docs/img/scale-rows.json --plot docs/img/scale.png   # fit + plot only
    python -m bench.scale --runs 46                        # madqa run: one process vs --cluster local:2
    python -m bench.scale --sizes 10000 --cluster-only     # the cluster ingest alone, after a change

Corpora are plain generated PDFs (``bench/plain_pdf.py``: ``bench/corpus.py``'s text, written without
a layout engine, so 100k pages take minutes, not hours), ~23 pages per PDF. Every ingest is the real
command (``python -m madqa index DIR --ocr never --json``, which writes whoosh and tantivy) in a child
process; peak memory is the largest sum of RSS over that process and all its descendants (the
cluster's scheduler and workers included), sampled every 0.2 s. Each retriever is then opened and
queried in a child process of its own (its peak memory): the open time (for milvus and dense:
building their index on first use; milvus BM25 only, ``dense=off``), then p50/p95 of up to 100
queries in the agents' shapes, stopped after ``--query-budget-s``. A job over ``--budget-s`` is
killed and said so. Prints JSON; nothing is asserted.
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
RETRIEVERS = (("whoosh", {}), ("tantivy", {}), ("milvus", {"dense": "off"}), ("dense", {}))


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
                _kill_descendants(proc.pid)  # the cluster's workers and the indexing child too
                proc.kill()
                proc.wait()
                return {"skipped": f"over the budget of {timeout:.0f} s", "cpu_so_far_s": round(sum(cpu.values()), 1),
                        "peak_rss_mb": round(peak), "load_avg_1m": os.getloadavg()[0]}
            time.sleep(0.2)
        out.seek(0)
        text = out.read()
    seconds = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        return {"failed": f"exit code {proc.returncode}"}
    driver = cpu.pop(proc.pid, 0.0)
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(peak), "cpu_driver_s": round(driver, 1),
            "cpu_children_s": round(sum(cpu.values()), 1), "load_avg_1m": os.getloadavg()[0],
            "output": _json_or_text(text)}


def _kill_descendants(pid: int) -> None:
    import psutil

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        try:
            child.kill()
        except psutil.Error:
            pass


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:  # `madqa run` prints a summary line, not JSON
        return text.strip()


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def search_job(root: str, home: str, name: str, budget: float) -> dict[str, Any]:
    """In a child process: open (for milvus and dense: build on first use) one retriever, then time
    up to 100 queries, stopping when ``budget`` seconds of querying are spent (how many ran is said)."""
    from bench.corpus import make_queries
    from bench.measure import percentile
    from madqa.corpus import Corpus
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings

    settings = Settings.from_env(env={}, home=home)
    corpus = Corpus.open(root, settings.corpora_dir)
    registry = collect(get_plugin_manager(entry_points=False))
    if name not in registry.names("retriever"):
        return {"skipped": "not installed"}
    texts = [p.text for _, p in zip(range(3000), corpus.iter_pages(), strict=False)]
    queries = make_queries(texts, 100)
    started = time.perf_counter()
    retriever = registry.create("retriever", name, corpus, dict(RETRIEVERS)[name])
    opened = time.perf_counter() - started
    ms: list[float] = []
    phrase_ms: list[float] = []
    spent = time.perf_counter()
    cpu_ms: list[float] = []  # this process's CPU per query: what a loaded machine does not inflate
    for q in queries:
        started, cpu = time.perf_counter(), time.process_time()
        retriever.search(q, 5)
        ms.append((time.perf_counter() - started) * 1000)
        cpu_ms.append((time.process_time() - cpu) * 1000)
        if q.startswith('"'):
            phrase_ms.append(ms[-1])
        if time.perf_counter() - spent > budget:
            break
    out = {"open_s": round(opened, 2), "first_query_ms": round(ms[0], 1), "queries": len(ms),
           "p50_ms": round(percentile(ms[1:] or ms, 50), 1), "p95_ms": round(percentile(ms[1:] or ms, 95), 1),
           "cpu_p50_ms": round(percentile(cpu_ms[1:] or cpu_ms, 50), 1),
           "cpu_p95_ms": round(percentile(cpu_ms[1:] or cpu_ms, 95), 1),
           "phrase_p50_ms": round(percentile(phrase_ms, 50), 1) if phrase_ms else None,
           "size_mb": round(_du(corpus.retriever_dir(name)) / 2**20, 1)}
    meta = corpus.retriever_dir(name) / "meta.json"
    if name == "dense" and meta.is_file():
        windows = json.loads(meta.read_text(encoding="utf-8")).get("embedded_windows", 0)
        out.update(windows=windows, windows_per_s=round(windows / opened, 1) if opened else None)
    return out


def measure_size(pages: int, budget: float, cluster_up_to: int, dense_up_to: int,
                 query_budget: float, corpus: Path | None = None,
                 retrievers: tuple[str, ...] = tuple(n for n, _ in RETRIEVERS),
                 search_budget: float | None = None, cluster_only: bool = False) -> dict[str, Any]:
    """One corpus size: generate (cached), ingest in one process (and on ``--cluster local:2`` up to
    ``cluster_up_to`` pages), then each retriever in a child process of its own (its peak memory)."""
    from bench.plain_pdf import cached_plain_corpus

    started = time.perf_counter()
    root = corpus or cached_plain_corpus(CACHE, pages, max(1, pages // 23), workers=min(2, os.cpu_count() or 1))
    row: dict[str, Any] = {"pages": pages, "corpus": str(root), "pdfs": len(list(root.rglob("*.pdf"))),
                           "generate_s": round(time.perf_counter() - started, 1), "pdf_mb": round(_du(root) / 2**20, 1)}
    labels = ([] if cluster_only else [("single", [])]) + \
        ([("cluster_local2", ["--cluster", "local:2"])] if pages <= cluster_up_to else [])
    for label, extra in labels:
        home = Path(tempfile.mkdtemp(prefix=f"scale-{label}-", dir=CACHE))
        cmd = [sys.executable, "-m", "madqa", "index", str(root), "--ocr", "never", "--json", *extra]
        result = timed(cmd, {"MADQA_HOME": str(home)}, budget)
        if "output" in result:
            cpu_s = result["cpu_driver_s"] + result["cpu_children_s"]
            result["pages_per_s"] = round(result["output"]["pages"] / result["seconds"], 1)
            result["pages_per_cpu_s"] = round(result["output"]["pages"] / cpu_s, 1) if cpu_s else None
            result["home"] = str(home)
            del result["output"]
        row[label] = result
        print(json.dumps({label: result, "pages": pages}), file=sys.stderr, flush=True)
    home = row.get("single", {}).get("home")
    if not home:
        return row
    row["search"] = {}
    for name in retrievers:
        if name == "dense" and pages > dense_up_to:
            row["search"][name] = {"skipped": f"embedding {pages:,} pages is over --dense-up-to {dense_up_to:,}"}
            continue
        result = timed([sys.executable, "-m", "bench.scale", "--search-job", str(root), home, name,
                        str(query_budget)], {}, search_budget or budget)
        out = result.pop("output", None)
        row["search"][name] = {**out, "peak_rss_mb": result["peak_rss_mb"]} if isinstance(out, dict) else result
        print(json.dumps({name: row["search"][name], "pages": pages}), file=sys.stderr, flush=True)
    from madqa.corpus import PAGES_DB, Corpus
    from madqa.settings import Settings

    corpus = Corpus.open(root, Settings.from_env(env={}, home=home).corpora_dir)
    row["page_store_mb"] = round((corpus.gen_dir / PAGES_DB).stat().st_size / 2**20, 1)
    row["home_mb"] = round(_du(Path(home)) / 2**20, 1)
    corpus.close()
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


def _value(job: dict[str, Any], metric: str) -> float | None:
    """A job's figure; ``cpu_s`` is the driver's and its children's CPU seconds (wall time on a shared
    machine is mostly waiting for a core, so the CPU is what a fit of cost can use)."""
    if metric == "cpu_s" and "cpu_s" not in job and "cpu_driver_s" in job and "seconds" in job:
        return job["cpu_driver_s"] + job.get("cpu_children_s", 0.0)
    return job.get(metric)


def curves(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Fitted growth of ingest time and memory (single, cluster) and the estimates at 1M / 10M pages."""
    out = {}
    for label in ("single", "cluster_local2"):
        for metric in ("seconds", "cpu_s", "peak_rss_mb"):
            ok = [r for r in rows if isinstance(r.get(label), dict) and _value(r[label], metric) is not None]
            f = fit([r["pages"] for r in ok], [_value(r[label], metric) for r in ok])
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
    panels = (("cpu_s", "ingest CPU (s)"), ("peak_rss_mb", "peak memory (MB)"))
    colors = {"single": (31, 119, 180), "cluster_local2": (214, 39, 40)}
    x_lo, x_hi = math.log10(2e2), math.log10(1.2e7)
    for i, (metric, title) in enumerate(panels):
        left, right = pad + i * width // 2, (i + 1) * width // 2 - 20
        top, bottom = 40, height - pad
        values = [_value(r[label], metric) for r in rows for label in colors
                  if isinstance(r.get(label), dict) and _value(r[label], metric) is not None]
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
        for decade in range(3, 8):
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
                if isinstance(r.get(label), dict) and _value(r[label], metric) is not None:
                    x, y = xy(r["pages"], _value(r[label], metric))
                    draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=color)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,30000,100000")
    parser.add_argument("--corpus", type=Path, help="measure this folder of PDFs instead (e.g. bench/run.py's "
                        "corpus); --sizes is then only its page count")
    parser.add_argument("--retrievers", default=",".join(n for n, _ in RETRIEVERS), help="which to open and query")
    parser.add_argument("--budget-s", type=float, default=1500, help="most seconds per ingest or search job")
    parser.add_argument("--search-budget-s", type=float, help="most seconds per search job (open + queries); "
                        "default --budget-s")
    parser.add_argument("--query-budget-s", type=float, default=120, help="most seconds of queries per retriever")
    parser.add_argument("--cluster-up-to", type=int, default=10_000, help="ingest on --cluster local:2 too, up "
                        "to this many pages")
    parser.add_argument("--cluster-only", action="store_true", help="only the --cluster local:2 ingest (no "
                        "single-process ingest, no searches): re-measure the cluster after a change")
    parser.add_argument("--dense-up-to", type=int, default=2_000, help="measure the dense retriever (embedding "
                        "every page on first use) up to this many pages")
    parser.add_argument("--json", type=Path, help="write the results here (rows are added as sizes finish)")
    parser.add_argument("--plot", type=Path, help="write the PNG plot here")
    parser.add_argument("--refit", type=Path, help="only fit and plot the rows of this JSON file")
    parser.add_argument("--runs", type=int, metavar="N", help="instead: time `madqa run` of N demo questions, "
                        "one process vs --cluster local:2")
    parser.add_argument("--search-job", nargs=4, metavar=("ROOT", "HOME", "NAME", "BUDGET"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.search_job:
        root, home, name, budget = args.search_job
        print(json.dumps(search_job(root, home, name, float(budget))))
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
            rows.append(measure_size(size, args.budget_s, args.cluster_up_to, args.dense_up_to,
                                     args.query_budget_s, args.corpus, tuple(args.retrievers.split(",")),
                                     args.search_budget_s, args.cluster_only))
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
