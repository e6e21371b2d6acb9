"""Timed jobs run in a child process, so each one's peak memory (ru_maxrss) is its own.

    python -m bench.jobs ingest CORPUS HOME          # our ingest: text layer + every retriever index
    python -m bench.jobs our-index CORPUS HOME OUT   # only our retrievers' indexing, on the ingested texts
    python -m bench.jobs ref-index CORPUS HOME OUT   # the reference baseline's index, on the same texts

Each prints one JSON object: pages, seconds (wall), cpu_s (user+sys of the job and its children) and
peak_rss_mb (the job's peak plus its largest child's: an ingest may index in a child process while it
reads, so both are resident at once).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _usage() -> dict:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"peak_rss_mb": (me.ru_maxrss + kids.ru_maxrss) / 1024, "self_peak_rss_mb": me.ru_maxrss / 1024,
            "child_peak_rss_mb": kids.ru_maxrss / 1024,
            "cpu_s": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
            "self_cpu_s": me.ru_utime + me.ru_stime, "child_cpu_s": kids.ru_utime + kids.ru_stime}


def _corpus(root: str, home: str):  # noqa: ANN202 - (corpus, settings, registry)
    from madqa.corpus import Corpus
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings

    settings = Settings.from_env(env={}, home=home)
    return Corpus.open(root, settings.corpora_dir), settings, collect(get_plugin_manager(entry_points=False))


def ingest_job(root: str, home: str) -> dict:
    from madqa.index import ingest
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings

    settings = Settings.from_env(env={}, home=home)
    report = ingest(root, settings, collect(get_plugin_manager(entry_points=False)), ocr="never")
    return {"pages": report.pages, "files": report.files, "seconds": report.elapsed_s}


def our_index_job(root: str, home: str, out: str) -> dict:
    from madqa.indexers import index_names

    corpus, _, registry = _corpus(root, home)
    pages = list(corpus.iter_pages())
    base = _peak_mb()
    timings = {}
    for name in index_names(registry, None):  # what a default ingest writes (not dense: it embeds every page)
        update = registry.get("retriever", name).factory.update_index
        started = time.perf_counter()
        update(Path(out) / name, None, pages, set())
        timings[name] = time.perf_counter() - started
    return {"pages": len(pages), "seconds_by_retriever": timings, "seconds": sum(timings.values()),
            "rss_before_mb": base}


def ref_index_job(root: str, home: str, out: str) -> dict:
    from bench.reference import build_reference_index

    corpus, _, _ = _corpus(root, home)
    totals = {f: d.pages for f, d in corpus.documents.items()}
    rows = [(p.file, p.page, totals[p.file], p.text) for p in corpus.iter_pages()]
    base = _peak_mb()
    return {"pages": len(rows), "seconds": build_reference_index(Path(out), rows), "rss_before_mb": base}


JOBS = {"ingest": ingest_job, "our-index": our_index_job, "ref-index": ref_index_job}


def run(job: str, *args: str) -> dict:
    """Run ``job`` in a fresh interpreter from the repository root; its JSON result plus pages/s."""
    import subprocess

    repo = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "bench.jobs", job, *map(str, args)], capture_output=True,
                         text=True, cwd=repo, check=False)
    if out.returncode:
        raise RuntimeError(f"bench job {job} failed:\n{out.stderr[-3000:]}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    data["pages_per_s"] = data["pages"] / data["seconds"] if data["seconds"] else None
    data["pages_per_cpu_s"] = data["pages"] / data["cpu_s"] if data.get("cpu_s") else None
    return data


if __name__ == "__main__":
    result = JOBS[sys.argv[1]](*sys.argv[2:])
    result.update(_usage())
    print(json.dumps(result))
