"""Benchmark at MADQA scale, side by side with the paper's reference baseline; prints JSON then a table.

    python bench/run.py            # 800 PDFs / 18,619 pages (generated once, cached in bench/.cache)
    python bench/run.py --small    # the same measurements on 24 PDFs / 480 pages, in about a minute
    python bench/run.py --pages N --docs D --skip webapp,legibility

Measures ingest+index throughput (text layer) and peak memory, search latency per registered
retriever, page images cold/warm with bytes and approximate image tokens per page, the agent
loop's own overhead per step, the web app's time to its first streamed step, and legibility
(OCR of the image we send) at several budgets. The reference approach (OxRML/MADQA's baseline:
pdf2image at 200 DPI, PNG, no cache; Whoosh with the default analyzer) is measured in the same run
on the same pages and queries. Figures only: nothing here asserts; targets are reported as met or not.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import jobs, legibility, measure  # noqa: E402
from bench.corpus import DOMAIN, cached_corpus, make_queries  # noqa: E402
from bench.report import markdown, print_table, targets  # noqa: E402

DEMO_DOCS = REPO / "data" / "demo" / "docs"
LEGIBILITY_BUDGETS = (1_200_000, 800_000, 600_000, 400_000)


def machine() -> str:
    try:
        os_name = Path("/etc/os-release").read_text().split('PRETTY_NAME="')[1].split('"')[0]
    except (OSError, IndexError):
        os_name = platform.platform()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cores} cores ({os.cpu_count()} reported), {os_name}, Python {platform.python_version()}"


def run(pages: int, docs: int, queries: int, render_pages: int, legibility_pages: int | None,
        skip: set[str], cache: Path) -> dict:
    from madqa.corpus import Corpus
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings

    t = time.perf_counter()
    root = cached_corpus(cache, pages, docs, workers=min(2, os.cpu_count() or 1))
    print(f"corpus {root.name} ready in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "machine": machine(), "pages": pages, "docs": docs}
    with tempfile.TemporaryDirectory() as tmp:
        home, tmp = Path(tmp) / "home", Path(tmp)
        step = _stepper()
        results["ingest"] = jobs.run("ingest", root, home)
        step("ingest")
        results["index_only"] = jobs.run("our-index", root, home, tmp / "our-index")
        step("our index")
        results["ref_index"] = jobs.run("ref-index", root, home, tmp / "ref-index")
        step("reference index")
        settings = Settings.from_env(env={}, home=home)
        registry = collect(get_plugin_manager(entry_points=False))
        corpus = Corpus.open(root, settings.corpora_dir)
        query_list = make_queries([p.text for p in corpus.iter_pages()], queries)
        results["search_ms"] = measure.measure_search(corpus, registry, query_list, tmp / "ref-index")
        step("search")
        results["render"] = measure.measure_render(corpus, settings, render_pages)
        step("render")
        results["loop"] = measure.measure_loop(corpus, registry, settings, DOMAIN)
        step("loop")
        if "webapp" not in skip:
            results["webapp"] = measure.measure_webapp(tmp / "app-home", [
                "What was the operating income (EBIT) in 2023, in EUR thousand?",
                "How many staff did Kestrel Dynamics have at the end of 2024?",
                "Who signed the board minutes?", "What is the dividend proposal?",
                "What was the total revenue in 2024?", "Which engine does the Bell 407 use?"])
            step("web app")
        if "legibility" not in skip and legibility.available():
            demo_settings = Settings.from_env(env={}, home=tmp / "demo-home")
            from madqa.index import ingest

            ingest(DEMO_DOCS, demo_settings, registry, ocr="never")
            demo = Corpus.open(DEMO_DOCS, demo_settings.corpora_dir)
            results["legibility"] = legibility.measure(demo, demo_settings, list(LEGIBILITY_BUDGETS),
                                                       legibility_pages)
            step("legibility")
    results["targets"] = targets(results)
    return results


def _stepper():  # noqa: ANN202 - a progress printer
    last = [time.perf_counter()]

    def step(name: str) -> None:
        now = time.perf_counter()
        print(f"{name}: {now - last[0]:.1f}s", file=sys.stderr)
        last[0] = now

    return step


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="24 PDFs / 480 pages, about a minute")
    parser.add_argument("--pages", type=int)
    parser.add_argument("--docs", type=int)
    parser.add_argument("--queries", type=int)
    parser.add_argument("--skip", default="", help="comma-separated: webapp, legibility")
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown here")
    args = parser.parse_args(argv)
    pages = args.pages or (480 if args.small else 18_619)
    docs = args.docs or max(1, pages // 20 if args.small or args.pages else 800)
    results = run(pages, docs, args.queries or (100 if args.small else 300), 12 if args.small else 40,
                  6 if args.small else None, {s.strip() for s in args.skip.split(",") if s.strip()},
                  REPO / "bench" / ".cache")
    text = json.dumps(results, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text)
    if args.markdown:
        args.markdown.write_text(markdown(results) + "\n")
    print_table(results)


if __name__ == "__main__":
    main()
