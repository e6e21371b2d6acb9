"""Compare the embedded BM25 engines on one generated corpus: index pages/s and query latency.

    python bench/retrievers.py [--corpus bench/.cache/corpus-5000] [--queries 200] [--bm25s]

Indexes the same page texts with each retriever's own ``update_index`` (whoosh, tantivy) and, with
``--bm25s``, with the ``bm25s`` package (no boolean or phrase parsing: OR-of-words scoring only) for
reference; then runs the same queries (bare words, OR, phrases) through ``search``. Prints JSON.
Figures only; nothing here asserts. Reads the corpus folder; writes only to a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import pymupdf  # noqa: E402

import madqa  # noqa: E402
from madqa.corpus import PageText  # noqa: E402


def read_pages(root: Path) -> list[PageText]:
    pages = []
    for path in sorted(root.glob("*.pdf")):
        with pymupdf.open(path) as doc:
            pages += [PageText(path.name, i + 1, page.get_text(), "text") for i, page in enumerate(doc)]
    return pages


def make_queries(pages: list[PageText], n: int) -> list[str]:
    rng = random.Random(11)
    queries = []
    for _ in range(n):
        words = rng.choice(pages).text.split()
        start = rng.randrange(max(1, len(words) - 3))
        q, shape = words[start:start + rng.choice((1, 2, 3))], rng.random()
        queries.append(" OR ".join(q) if shape < 0.2 else f'"{" ".join(q)}"' if shape < 0.3 else " ".join(q))
    return queries


class FakeCorpus:
    """Just enough of a Corpus for a retriever: its index folder and page texts for snippets."""

    def __init__(self, folder: Path, pages: list[PageText]) -> None:
        self.folder, self.root = folder, folder
        self.texts = {(p.file, p.page): p.text for p in pages}

    def retriever_dir(self, name: str) -> Path:
        return self.folder / name

    def page_text(self, file: str, page: int) -> str:
        return self.texts.get((file, page), "")

    def iter_pages(self):
        return iter(PageText(f, p, t, "text") for (f, p), t in self.texts.items())


def latency(search, queries: list[str]) -> dict:
    search(queries[0])
    times = []
    for q in queries:
        t = time.perf_counter()
        search(q)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return {"p50_ms": round(times[len(times) // 2], 2), "p95_ms": round(times[int(len(times) * 0.95)], 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=str(REPO / "bench" / ".cache" / "corpus-5000"))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--bm25s", action="store_true", help="also measure the bm25s package, if installed")
    args = parser.parse_args()
    from madqa.plugins import collect, get_plugin_manager

    registry = collect(get_plugin_manager(entry_points=False))
    pages = read_pages(Path(args.corpus))
    queries = make_queries(pages, args.queries)
    out: dict = {"date": time.strftime("%Y-%m-%d"), "pages": len(pages), "cpus": os.cpu_count(),
                 "load_avg_1m": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        corpus = FakeCorpus(Path(tmp), pages)
        for name in ("whoosh", "tantivy"):
            factory = registry.get("retriever", name).factory
            t = time.perf_counter()
            factory.update_index(corpus.retriever_dir(name), None, pages, set(), madqa.Host())
            seconds = time.perf_counter() - t
            retriever = registry.create("retriever", name, corpus, {})
            out[name] = {"index_pages_per_s": round(len(pages) / seconds), **latency(
                lambda q, r=retriever: r.search(q, 5), queries)}
        if args.bm25s:
            import bm25s
            import numpy as np

            t = time.perf_counter()
            model = bm25s.BM25()
            model.index(bm25s.tokenize([p.text for p in pages], stopwords="en", show_progress=False),
                        show_progress=False)
            seconds = time.perf_counter() - t

            def search(q: str) -> None:
                tokens = bm25s.tokenize([q.replace('"', " ")], stopwords="en", show_progress=False)
                if len(tokens.vocab):
                    model.retrieve(tokens, k=5, show_progress=False)

            out["bm25s (OR of words only)"] = {"index_pages_per_s": round(len(pages) / seconds),
                                               **latency(search, queries), "numpy": np.__version__}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
