"""What one question costs in images: every image part of every request on a scripted trajectory.

    python bench/context.py                 # the demo corpus, 8 searches then an answer; prints JSON then a table
    python bench/context.py --hang 5        # also: end-to-end time of `ask` against a provider that never answers,
                                            # with --set backend.timeout=5 (the default max_attempts, 3)

The model is played by a fake OpenAI Chat Completions server on 127.0.0.1 (tests/fake_providers.py),
reached through litellm's real client, so what is measured is exactly what would go over the wire.
Two context policies on the same trajectory: ``today`` (every page image stays in every later
request: ``context.images_kept=100``, what the loop did before madqa/context.py) and ``default``
(an image once, then its label and an excerpt). Image tokens per request are estimated with each
provider's published rule (bench/image_tokens.py, sources there) from the images' real pixel sizes.
Figures only: nothing asserts.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from bench import image_tokens  # noqa: E402
from tests import fake_providers as fp  # noqa: E402

DEMO_DOCS = REPO / "data" / "demo" / "docs"
QUERIES = ("revenue 2024", "employees", "board meeting", "safety", "invoice total", "sales region", "warranty",
           "audit")
QUESTION = "How many employees did Kestrel Dynamics have at the end of 2024, and what was its revenue?"
RULES = {"gpt-4o": "openai_tiles", "gpt-4.1-mini": "openai_patches", "claude": "anthropic", "gemini": "gemini"}
POLICIES = {"today": {"images_kept": 100}, "default": {}}


def _images(body: dict[str, Any], labels: set[str] | None = None) -> list[bytes]:
    """The decoded images of a request; ``labels`` collects the page label just before each."""
    out = []
    for m in body.get("messages") or []:
        parts = m.get("content") if isinstance(m.get("content"), list) else []
        for n, part in enumerate(parts):
            if part.get("type") == "image_url":
                out.append(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))
                if labels is not None and n and parts[n - 1].get("type") == "text":
                    labels.add(parts[n - 1]["text"])
    return out


def measure(policy: dict[str, Any] | None, home: Path, show_again: bool = False) -> dict[str, Any]:
    """Run the scripted trajectory once with ``policy`` as the context options; figures per request."""
    from madqa.agent import Agent
    from madqa.corpus import Corpus
    from madqa.index import ingest
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings, load_config
    from madqa.trace import Trace

    settings = Settings(home=home)
    registry = collect(get_plugin_manager())
    if not (home / "corpora").exists():
        ingest(DEMO_DOCS, settings, registry)
    corpus = Corpus.open(DEMO_DOCS, settings.corpora_dir)
    replies = [fp.search(q) for q in QUERIES]
    if show_again:
        replies.append(fp.show([{"file": "finance/annual_report_2024.pdf", "page": 8}]))
    replies.append(fp.answer(["1,240", "EUR 148.6 million"], [{"file": "finance/annual_report_2024.pdf", "page": 8}]))
    options: dict[str, Any] = {"backend": {"retry_base_delay": 0.01}}
    if policy is not None:
        options["context"] = policy
    with fp.FakeProvider("openai", replies) as provider:
        options["backend"]["api_base"] = provider.url
        config = load_config("offline").with_overrides(backend="litellm", model="openai/gpt-4o",
                                                       max_steps=len(replies) + 1, options=options)
        agent = Agent(corpus, config, registry, settings, {"api_key": "sk-bench"})
        row = Trace(QUESTION, config, "bench").consume(agent.run(QUESTION)).row()
    requests = []
    labels: set[str] = set()
    for r in provider.requests:
        images = _images(r["body"], labels)
        sizes = [fp._image_size(i) or (0, 0) for i in images]
        requests.append({"images": len(images), "image_bytes": sum(len(i) for i in images),
                         "request_bytes": r["bytes"],
                         "tokens": {name: sum(image_tokens.RULES[rule](w, h) for w, h in sizes)
                                    for name, rule in RULES.items()}})
    found = {(p["file"], p["page"]) for s in row["trajectory"] if s["type"] == "search" for p in s["new_pages"]}
    unseen = sorted(f"File: {f}, Page: {p}" for f, p in found if f"File: {f}, Page: {p}" not in labels)
    return {"requests": requests, "found_pages": len(found), "found_never_shown": unseen, "answer": row["answer"], "error": row["error"],
            "image_parts": sum(r["images"] for r in requests),
            "image_bytes": sum(r["image_bytes"] for r in requests),
            "request_bytes": sum(r["request_bytes"] for r in requests),
            "image_tokens": {name: sum(r["tokens"][name] for r in requests) for name in RULES},
            "last_request_images": requests[-1]["images"] if requests else 0,
            "rule_failures": [c.__dict__ for c in provider.failures()]}


def hang(timeout_s: float, home: Path) -> dict[str, Any]:
    """Seconds `madqa ask` takes against a provider that never answers, with --set backend.timeout."""
    from madqa.cli import main

    with fp.FakeProvider("openai", [fp.hang(timeout_s * 20)] * 10) as provider:
        started = time.monotonic()
        code = main(["ask", "--corpus", str(DEMO_DOCS), QUESTION, "--backend", "litellm", "--model", "openai/local",
                     "--api-base", provider.url, "--set", f"backend.timeout={timeout_s}", "--json"])
        elapsed = time.monotonic() - started
    return {"timeout_s": timeout_s, "attempts": len(provider.requests), "exit_code": code,
            "elapsed_s": round(elapsed, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hang", type=float, metavar="SECONDS", help="also time `ask` against a hanging provider")
    parser.add_argument("--policies", default="today,default", help="comma-separated: today, default, none "
                                                                    "(none: pass no context options)")
    args = parser.parse_args()
    home = Path(os.environ.get("MADQA_HOME") or tempfile.mkdtemp(prefix="madqa-bench-context-"))
    os.environ["MADQA_HOME"] = str(home)
    results: dict[str, Any] = {}
    for name in args.policies.split(","):
        results[name] = measure(None if name == "none" else POLICIES[name], home)
    if "default" in results:
        results["default_with_show_pages"] = measure(POLICIES["default"], home, show_again=True)
    if args.hang:
        results["hang"] = hang(args.hang, home)
    print(json.dumps(results, indent=1))
    print()
    print(f"{'policy':26} {'images/request':40} {'parts':>5} {'MB':>6} " + " ".join(f"{n:>13}" for n in RULES))
    for name, r in results.items():
        if name == "hang":
            continue
        per = ",".join(str(q["images"]) for q in r["requests"])
        print(f"{name:26} {per:40} {r['image_parts']:>5} {r['image_bytes'] / 1e6:>6.2f} "
              + " ".join(f"{r['image_tokens'][n]:>13,}" for n in RULES))
    if "today" in results and "default" in results:
        t, d = results["today"], results["default"]
        print(f"\ndefault / today: image parts {d['image_parts'] / t['image_parts']:.2f}, bytes "
              f"{d['image_bytes'] / t['image_bytes']:.2f}; pages found {d['found_pages']}, of which never shown as "
              f"an image: {len(d['found_never_shown'])}; "
              f"rule failures today {len(t['rule_failures'])}, default {len(d['rule_failures'])}")
    if "hang" in results:
        h = results["hang"]
        print(f"hanging provider, backend.timeout={h['timeout_s']:g}: {h['elapsed_s']} s end to end, "
              f"{h['attempts']} attempts, exit code {h['exit_code']}")


if __name__ == "__main__":
    main()
