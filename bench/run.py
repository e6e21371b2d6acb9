"""Benchmark the ground the agent stands on; prints JSON then a readable table.

    python bench/run.py            # 5,000+ pages (generated once, cached in bench/.cache)
    python bench/run.py --small    # the same measurements on ~300 pages, for a quick run
    python bench/run.py --pages N  # another size

Measures: ingest+index throughput (text layer) and peak memory, search latency over queries
drawn from the corpus vocabulary, page images cold and warm with bytes per page, and the agent
loop's own overhead per step with the scripted backend. Figures only; nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import pymupdf  # noqa: E402

WORDS = ("revenue income margin capital equity asset liability dividend audit board director committee "
         "engine turbine rotor blade pressure valve sensor voltage current battery charger module firmware "
         "patient dosage clinical trial protocol adverse safety efficacy placebo cohort enrollment "
         "contract clause tenant landlord lease premises indemnity warranty termination notice arbitration "
         "school student teacher curriculum grade assessment enrollment budget district policy schedule "
         "invoice payment shipping delivery customer supplier order quantity price discount tax total").split()


def make_corpus(root: Path, pages: int, pages_per_doc: int = 20, seed: int = 7) -> None:
    """Write ``pages`` pages of varied text with a table on every fourth page."""
    rng = random.Random(seed)
    vocab = WORDS + [f"{rng.choice(WORDS)[:4]}{n}" for n in range(3000)]  # rare tokens, Zipf-ish use
    weights = [1 / (i + 1) for i in range(len(vocab))]
    root.mkdir(parents=True, exist_ok=True)
    for d in range(0, pages, pages_per_doc):
        doc = pymupdf.open()
        for p in range(min(pages_per_doc, pages - d)):
            page = doc.new_page()
            text = " ".join(rng.choices(vocab, weights, k=380))
            page.insert_textbox(pymupdf.Rect(50, 50, 545, 560), text, fontsize=10)
            if p % 4 == 0:
                y = 580
                for row in range(8):
                    cells = [rng.choice(WORDS), str(rng.randint(100, 99999)), f"{rng.uniform(0, 100):.1f}%"]
                    for c, cell in enumerate(cells):
                        page.insert_text((60 + c * 160, y), cell, fontsize=9)
                    page.draw_line((55, y + 4), (540, y + 4), width=0.3)
                    y += 18
        doc.save(root / f"doc{d // pages_per_doc:04}.pdf",
                 garbage=0, deflate=True)
        doc.close()


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def measure_ingest(root: Path, home: Path) -> dict:
    """Ingest in a child process so its peak memory (ru_maxrss) is the ingest's alone."""
    code = ("import json,sys,resource; from madqa.settings import Settings; from madqa.plugins import collect, "
            "get_plugin_manager; from madqa.index import ingest; s=Settings.from_env(env={}, home=sys.argv[2]); "
            "r=ingest(sys.argv[1], s, collect(get_plugin_manager(entry_points=False)), ocr='never'); "
            "print(json.dumps({'pages': r.pages, 'seconds': r.elapsed_s, "
            "'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024}))")
    out = subprocess.run([sys.executable, "-c", code, str(root), str(home)], capture_output=True, text=True,
                         cwd=REPO, check=True)
    data = json.loads(out.stdout)
    data["pages_per_s"] = data["pages"] / data["seconds"]
    return data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--pages", type=int)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    pages = args.pages or (300 if args.small else 5000)
    root = REPO / "bench" / ".cache" / f"corpus-{pages}"
    if not (root / ".done").exists():
        t = time.perf_counter()
        make_corpus(root, pages)
        (root / ".done").write_text("ok")
        print(f"generated {pages} pages in {time.perf_counter() - t:.1f}s", file=sys.stderr)

    from madqa.corpus import Corpus
    from madqa.plugins import collect, get_plugin_manager
    from madqa.render import render_page
    from madqa.settings import Settings

    results: dict = {"machine": f"{platform.node()} {os.cpu_count()} cores, Python {platform.python_version()}",
                     "date": time.strftime("%Y-%m-%d"), "pages": pages}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        results["ingest"] = measure_ingest(root, home)
        settings = Settings.from_env(env={}, home=home)
        registry = collect(get_plugin_manager(entry_points=False))
        corpus = Corpus.open(root, settings.corpora_dir)
        retriever = registry.create("retriever", "whoosh", corpus, {})
        rng = random.Random(11)
        texts = [p.text.split() for p in corpus.iter_pages()]
        queries = []
        for _ in range(args.queries):
            words = rng.choice(texts)
            start = rng.randrange(max(1, len(words) - 3))
            shape = rng.random()
            q = words[start:start + rng.choice((1, 2, 3))]
            queries.append(" OR ".join(q) if shape < 0.2 else f'"{" ".join(q)}"' if shape < 0.3 else " ".join(q))
        retriever.search(queries[0], 5)  # open the searcher
        lat = []
        for q in queries:
            t = time.perf_counter()
            retriever.search(q, 5)
            lat.append((time.perf_counter() - t) * 1000)
        results["search_ms"] = {"p50": percentile(lat, 50), "p95": percentile(lat, 95), "p99": percentile(lat, 99),
                                "queries": len(lat)}
        refs = [(f, p) for f, d in sorted(corpus.documents.items()) for p in (1, 2, 3)][:30]
        cold, warm, sizes = [], [], []
        for f, p in refs:
            t = time.perf_counter()
            image = render_page(corpus, f, p, settings)
            cold.append((time.perf_counter() - t) * 1000)
            sizes.append(len(image.data))
        for f, p in refs:
            t = time.perf_counter()
            render_page(corpus, f, p, settings)
            warm.append((time.perf_counter() - t) * 1000)
        results["render"] = {"cold_ms_p50": statistics.median(cold), "warm_ms_p50": statistics.median(warm),
                             "warm_ms_p95": percentile(warm, 95), "bytes_per_page_mean": statistics.mean(sizes),
                             "budget_px": settings.image_budget_px, "format": settings.image_format}
        results["loop"] = measure_loop(corpus, registry, settings)
    print(json.dumps(results, indent=1))
    print_table(results)


def measure_loop(corpus, registry, settings) -> dict:
    """Per-step time of everything but the model: scripted decisions, real search, cached renders."""
    from madqa.agent import Agent
    from madqa.settings import load_config
    from madqa.trace import Trace

    config = load_config("offline").with_overrides(backend="scripted", max_steps=10)
    words = WORDS[:9]
    script = [{"search": w} for w in words] + [{"answer": ["x"], "citations": []}]
    for _ in range(2):  # the first pass warms the page cache
        agent = Agent(corpus, config, registry, settings, {"script": list(script)})
        t = time.perf_counter()
        trace = Trace("q", config).consume(agent.run("q"))
        elapsed = time.perf_counter() - t
    steps = trace.iterations
    return {"steps": steps, "ms_per_step": elapsed / steps * 1000}


def print_table(r: dict) -> None:
    rows = [
        ("pages", f"{r['pages']:,}"),
        ("ingest+index, text layer", f"{r['ingest']['pages_per_s']:.0f} pages/s ({r['ingest']['seconds']:.1f}s)"),
        ("ingest peak memory", f"{r['ingest']['peak_rss_mb']:.0f} MB"),
        ("search p50 / p95 / p99", "{p50:.1f} / {p95:.1f} / {p99:.1f} ms".format(**r["search_ms"])),
        ("render cold (p50)", f"{r['render']['cold_ms_p50']:.1f} ms"),
        ("render warm (p50 / p95)", f"{r['render']['warm_ms_p50']:.2f} / {r['render']['warm_ms_p95']:.2f} ms"),
        ("bytes per page", f"{r['render']['bytes_per_page_mean'] / 1024:.0f} KiB {r['render']['format']} "
                           f"@ {r['render']['budget_px']:,} px"),
        ("loop overhead", f"{r['loop']['ms_per_step']:.2f} ms/step (scripted backend, warm cache)"),
    ]
    width = max(len(k) for k, _ in rows)
    print(f"\n{r['date']} · {r['machine']}")
    for k, v in rows:
        print(f"  {k.ljust(width)}  {v}")


if __name__ == "__main__":
    main()
