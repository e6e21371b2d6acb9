"""In-process measurements: search per retriever, page images (ours and the reference's), loop, web app."""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import image_tokens
from bench.reference import ReferenceSearch, render_reference

# extra option sets tried on a registered retriever (skipped when the retriever rejects them)
RETRIEVER_VARIANTS: dict[str, list[dict[str, Any]]] = {"whoosh": [{"analyzer": "stemming"}]}


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def latency_summary(ms: list[float]) -> dict[str, float]:
    return {"p50": percentile(ms, 50), "p95": percentile(ms, 95), "p99": percentile(ms, 99),
            "mean": statistics.fmean(ms), "queries": len(ms)}


def _time_queries(search, queries: list[str], k: int = 5) -> tuple[list[float], int]:
    search(queries[0], k)  # open the searcher, load caches
    ms, empty = [], 0
    for q in queries:
        t = time.perf_counter()
        result = search(q, k)
        ms.append((time.perf_counter() - t) * 1000)
        hits = result.hits if hasattr(result, "hits") else result
        empty += not hits
    return ms, empty


def measure_search(corpus, registry, queries: list[str], ref_index: Path | None) -> dict:
    """p50/p95/p99 per registered retriever (and option variant) and for the reference's index."""
    out: dict[str, Any] = {}
    for name in registry.names("retriever"):
        component = registry.components[("retriever", name)]
        if component.unavailable:
            out[name] = {"skipped": f"unavailable: {component.unavailable}"}
            continue
        if (getattr(component.factory, "update_index", None) is None
                or not getattr(component.factory, "ingest_by_default", True)
                or (getattr(component.factory, "index_on_first_use", False)
                    and not any(corpus.retriever_dir(name).glob("*")))):
            # dense/hybrid embed every page on first use (hours at this scale on 2 CPU cores); milvus
            # builds its Lite collection on first use unless the corpus already uses it
            out[name] = {"skipped": "builds its index on first use, not at ingest (see docs/plugins.md)"}
            continue
        for options in [{}, *RETRIEVER_VARIANTS.get(name, [])]:
            label = name + "".join(f"[{k}={v}]" for k, v in options.items())
            try:
                retriever = registry.create("retriever", name, corpus, dict(options))
                ms, empty = _time_queries(retriever.search, queries)
            except Exception as exc:  # not built by ingest, needs a model, rejects the option: say so
                out[label] = {"skipped": f"{type(exc).__name__}: {str(exc)[:200]}"}
                continue
            out[label] = {**latency_summary(ms), "no_hits": empty}
    if ref_index is not None:
        ref = ReferenceSearch(ref_index)
        ms, empty = _time_queries(ref.search, queries)
        out["reference"] = {**latency_summary(ms), "no_hits": empty}
    return out


def sample_pages(corpus, n: int) -> list[tuple[str, int]]:
    """``n`` pages spread evenly over the corpus, in a fixed order."""
    refs = [(f, p) for f, d in sorted(corpus.documents.items()) for p in range(1, d.pages + 1)]
    step = max(1, len(refs) // n)
    return refs[::step][:n]


def measure_render(corpus, settings, n: int) -> dict:
    """Ours cold (first request) and warm (repeat, from the cache) vs the reference on every request."""
    from madqa.render import render_page

    refs = sample_pages(corpus, n)
    cold, warm, ref_ms, ours_bytes, ref_bytes, ours_size, ref_size = [], [], [], [], [], [], []
    for f, p in refs:
        t = time.perf_counter()
        image = render_page(corpus, f, p, settings)
        cold.append((time.perf_counter() - t) * 1000)
        ours_bytes.append(len(image.data))
        ours_size.append((image.width, image.height))
    for _ in range(3):
        for f, p in refs:
            t = time.perf_counter()
            render_page(corpus, f, p, settings)
            warm.append((time.perf_counter() - t) * 1000)
    for f, p in refs:
        t = time.perf_counter()
        data, w, h = render_reference(corpus.pdf_path(f), p)
        ref_ms.append((time.perf_counter() - t) * 1000)
        ref_bytes.append(len(data))
        ref_size.append((w, h))

    def tokens(sizes: list[tuple[int, int]]) -> dict[str, float]:
        per = [image_tokens.tokens_per_page(w, h) for w, h in sizes]
        return {rule: statistics.fmean(t[rule] for t in per) for rule in image_tokens.RULES}

    return {
        "pages": len(refs), "budget_px": settings.image_budget_px, "format": settings.image_format,
        "cold_ms_p50": statistics.median(cold), "cold_ms_p95": percentile(cold, 95),
        "warm_ms_p50": statistics.median(warm), "warm_ms_p95": percentile(warm, 95),
        "ref_ms_p50": statistics.median(ref_ms), "ref_ms_p95": percentile(ref_ms, 95),
        "bytes_per_page": statistics.fmean(ours_bytes), "ref_bytes_per_page": statistics.fmean(ref_bytes),
        "size_px": "{}x{}".format(*statistics.mode(ours_size)), "ref_size_px": "{}x{}".format(*statistics.mode(ref_size)),
        "tokens_per_page": tokens(ours_size), "ref_tokens_per_page": tokens(ref_size),
        "token_rules": image_tokens.SOURCES,
    }


def measure_loop(corpus, registry, settings, words: list[str]) -> dict:
    """Per-step time of everything but the model: scripted decisions, real search, cached renders."""
    from madqa.agent import Agent
    from madqa.settings import load_config
    from madqa.trace import Trace

    config = load_config("offline").with_overrides(backend="scripted", max_steps=10)
    script = [{"search": w} for w in words[:9]] + [{"answer": ["x"], "citations": []}]
    runs = []
    for _ in range(4):  # the first pass warms the page cache; the median of the rest is reported
        agent = Agent(corpus, config, registry, settings, {"script": list(script)})
        t = time.perf_counter()
        trace = Trace("q", config).consume(agent.run("q"))
        runs.append((time.perf_counter() - t) / trace.iterations * 1000)
    return {"steps": trace.iterations, "ms_per_step": statistics.median(runs[1:]), "first_pass_ms": runs[0]}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure_webapp(home: Path, questions: list[str]) -> dict:
    """Launch ``app.py`` on 127.0.0.1 and time, through gradio_client, Enter -> first streamed agent step."""
    from gradio_client import Client

    repo = Path(__file__).resolve().parent.parent
    port = _free_port()
    env = {**os.environ, "MADQA_HOME": str(home), "MADQA_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=repo, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        client = None
        while time.perf_counter() - started < 180 and client is None:
            try:
                client = Client(f"http://127.0.0.1:{port}/", verbose=False, download_files=False,
                                analytics_enabled=False)
            except Exception:
                time.sleep(0.5)
        if client is None:
            return {"skipped": "the app did not start within 180 s"}
        startup = time.perf_counter() - started
        first_update, first_step = [], []
        for q in questions:
            t = time.perf_counter()
            job = client.submit(question=q, history=[], api_name="/ask")
            got_update = got_step = None
            while not job.done() or got_step is None:
                outputs = job.outputs()
                if outputs and got_update is None:
                    got_update = time.perf_counter() - t
                if any(_has_step(o[1]) for o in outputs):
                    got_step = time.perf_counter() - t
                    break
                if job.done():
                    break
                time.sleep(0.002)
            job.result(timeout=120)
            first_update.append((got_update or 0) * 1000)
            first_step.append((got_step or float("nan")) * 1000)
        # the first question also waits for the demo corpus to be indexed: reported apart
        return {"method": "gradio_client against app.py on 127.0.0.1 (offline config, demo corpus)",
                "startup_s": startup, "first_question_first_step_ms": first_step[0],
                "first_update_ms_p50": statistics.median(first_update[1:]),
                "first_step_ms_p50": statistics.median(first_step[1:]), "questions": len(questions) - 1}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _has_step(chat: list[dict[str, Any]]) -> bool:
    """True once the chat holds an agent step (a settled message after the question)."""
    return any(m.get("role") == "assistant" and (m.get("metadata") or {}).get("status") != "pending"
               for m in chat or [])
