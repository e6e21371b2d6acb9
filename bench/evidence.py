"""Search plugins side by side: every strategy x retriever (x reranker) on three question sets.

    python bench/evidence.py                 # all sets, all combinations; markdown tables + JSON
    python bench/evidence.py --sets demo     # one set
    python bench/evidence.py --sets realdocs,realdocs-unanswerable   # the real-document set (fetched first)
    python bench/evidence.py --sets heldout-realdocs                 # its held-out twin, never tuned on
    python bench/evidence.py --json out.json # also write the figures
    python bench/evidence.py --sets realdocs --strategies passthrough --searchers whoosh:none,milvus:none:dense=off

Runs the offline backend (no model) in-process, as ``madqa run`` + ``madqa eval`` would, on:
``demo`` (data/demo, 46 questions), ``heldout`` (data/heldout/build_heldout.py: synonyms and
abbreviations) and ``paraphrase`` (data/heldout/build_paraphrase.py: questions that avoid their
evidence's words), ``realdocs`` (data/realdocs: real PDFs from Debian documentation packages, fetched
by data/realdocs/fetch.py on first use; figures also by question ``kind``) and ``realdocs-unanswerable``
(its questions the documents cannot answer: only the refusal rate means something there), and
``heldout-realdocs`` (data/heldout_realdocs: other Debian packages' PDFs, fetched the same way, never
tuned on). Combinations whose parts are unavailable (the optional embedding model) are
listed as skipped with the reason. Figures only; nothing here asserts.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

from madqa.corpus import Corpus  # noqa: E402
from madqa.evaluation.metrics import is_empty_answer  # noqa: E402
from madqa.evaluation.questions import load_questions  # noqa: E402
from madqa.evaluation.report import evaluate  # noqa: E402
from madqa.evaluation.runner import run_batch  # noqa: E402
from madqa.index import ingest  # noqa: E402
from madqa.plugins import collect, get_plugin_manager  # noqa: E402
from madqa.settings import Settings, load_config  # noqa: E402

STRATEGIES = ("passthrough", "relax", "drift")
SEARCHERS = (("whoosh", "none"), ("tantivy", "none"), ("dense", "none"), ("hybrid", "none"), ("whoosh", "embedding"))
REALDOCS = REPO / "data" / "realdocs"
HELDOUT_REALDOCS = REPO / "data" / "heldout_realdocs"
COLUMNS = ("accuracy", "evidence_recall", "first_query_success", "query_drift", "mean_steps", "page_f1")


def question_set(name: str, cache: Path) -> tuple[Path, Path]:
    """(docs folder, questions file) of a set, building the held-out ones once into ``cache``."""
    if name == "demo":
        return REPO / "data" / "demo" / "docs", REPO / "data" / "demo" / "questions.jsonl"
    if name in ("realdocs", "realdocs-unanswerable"):
        return realdocs_docs(), REALDOCS / ("questions.jsonl" if name == "realdocs" else "unanswerable.jsonl")
    if name == "heldout-realdocs":
        return realdocs_docs(HELDOUT_REALDOCS), HELDOUT_REALDOCS / "questions.jsonl"
    if name not in ("heldout", "paraphrase"):
        raise SystemExit(f"unknown set {name!r}: choose from demo, heldout, paraphrase, realdocs, "
                         "realdocs-unanswerable, heldout-realdocs")
    script = REPO / "data" / "heldout" / ("build_heldout.py" if name == "heldout" else "build_paraphrase.py")
    out = cache / name
    if not (out / "questions.jsonl").is_file():
        spec = importlib.util.spec_from_file_location(f"build_{name}", script)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.path.insert(0, str(script.parent))
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        (module.build if hasattr(module, "build") else module.main)(out)
    return out / "docs", out / "questions.jsonl"


def realdocs_docs(folder: Path = REALDOCS) -> Path:
    """A real-document set's docs folder (data/realdocs or data/heldout_realdocs), fetched (a no-op when
    present and verified) by the set's own fetch.py."""
    spec = importlib.util.spec_from_file_location(f"{folder.name}_fetch", folder / "fetch.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    if module.main([]) != 0:
        raise SystemExit(f"data/{folder.name}/fetch.py failed; see its message above")
    return module.DEFAULT_OUT


def figures(predictions: list[dict[str, Any]], questions: list[dict[str, Any]]) -> dict[str, Any]:
    """The table's figures for some questions (and their predictions), plus the refusal rate."""
    overall = evaluate(predictions, questions)["overall"]
    refused = sum(is_empty_answer(p.get("answer")) for p in predictions)
    return {"n": len(questions), "accuracy": overall["accuracy"], "evidence_recall": overall["evidence_recall"],
            "first_query_success": overall["first_query_success"], "query_drift": overall["query_drift"],
            "query_drift_n": overall["query_drift_n"], "mean_steps": overall["steps"]["mean"],
            "page_f1": overall["page_f1"], "refusal_rate": refused / len(predictions) if predictions else None}


def measure(set_name: str, docs: Path, questions_file: Path, settings: Settings, registry: Any,
            strategies: tuple[str, ...], searchers: tuple[tuple[str, ...], ...] = SEARCHERS) -> list[dict[str, Any]]:
    ingest(docs, settings, registry, ocr="auto")
    corpus = Corpus.open(docs, settings.corpora_dir)
    questions, problems = load_questions(questions_file)
    assert not problems, problems
    rows: list[dict[str, Any]] = []
    base = load_config("offline")
    for strategy in strategies:
        for retriever, reranker, *settings_of in searchers:
            options = dict(item.split("=", 1) for item in settings_of[0].split(";")) if settings_of else {}
            label = f"{retriever} ({', '.join(f'{k}={v}' for k, v in options.items())})" if options else retriever
            entry = {"set": set_name, "strategy": strategy, "retriever": label, "reranker": reranker,
                     "n": len(questions)}
            parts = {(kind, name): registry.components.get((kind, name))
                     for kind, name in (("retriever", retriever), ("reranker", reranker))}
            missing = [f"{kind} {name}: {'not installed' if c is None else c.unavailable}"
                       for (kind, name), c in parts.items() if c is None or c.unavailable]
            if missing:
                rows.append({**entry, "skipped": "; ".join(missing)})
                continue
            config = base.with_overrides(query_strategy=strategy, retriever=retriever, reranker=reranker,
                                         options={"retriever": options} if options else None)
            started = time.perf_counter()
            predictions = run_batch(questions, corpus, config, registry, settings)
            rows.append({**entry, "seconds": round(time.perf_counter() - started, 1),
                         **figures(predictions, questions)})
            kinds = sorted({q["kind"] for q in questions if q.get("kind")})
            if kinds:  # the real-document set labels each question ordinary / synonym / ... / scan
                by_id = {p.get("id"): p for p in predictions}
                rows[-1]["by_kind"] = {}
                for kind in kinds:
                    subset = [q for q in questions if q.get("kind") == kind]
                    rows[-1]["by_kind"][kind] = figures([by_id[q["id"]] for q in subset if q["id"] in by_id],
                                                        subset)
            print(f"  {set_name:10} {strategy:12} {retriever:8} {reranker:9} "
                  f"accuracy {rows[-1]['accuracy']:.3f} ({rows[-1]['seconds']} s)", file=sys.stderr)
    corpus.close()
    return rows


def _cell(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def markdown(rows: list[dict[str, Any]]) -> str:
    out = []
    for set_name in dict.fromkeys(r["set"] for r in rows):
        subset = [r for r in rows if r["set"] == set_name]
        out += [f"**{set_name}** ({subset[0]['n']} questions)", "",
                "| strategy | retriever | reranker | accuracy | evidence recall | first-query success "
                "| query drift (n) | mean steps | page F1 | refusal rate |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in subset:
            if "skipped" in r:
                out.append(f"| {r['strategy']} | {r['retriever']} | {r['reranker']} | skipped: {r['skipped']} "
                           "| | | | | | |")
                continue
            drift = f"{_cell(r['query_drift'])} ({r['query_drift_n']})"
            out.append(f"| {r['strategy']} | {r['retriever']} | {r['reranker']} | {_cell(r['accuracy'])} "
                       f"| {_cell(r['evidence_recall'])} | {_cell(r['first_query_success'])} | {drift} "
                       f"| {_cell(r['mean_steps'], 2)} | {_cell(r['page_f1'])} | {_cell(r['refusal_rate'])} |")
        out.append("")
        with_kinds = [r for r in subset if r.get("by_kind")]
        if with_kinds:
            out += [f"**{set_name}** by question kind (accuracy / evidence recall / first-query success / "
                    "refusal rate)", "", "| strategy | retriever | reranker | kind | n | accuracy | evidence recall "
                    "| first-query success | refusal rate |", "|---|---|---|---|---|---|---|---|---|"]
            for r in with_kinds:
                for kind, f in r["by_kind"].items():
                    out.append(f"| {r['strategy']} | {r['retriever']} | {r['reranker']} | {kind} | {f['n']} "
                               f"| {_cell(f['accuracy'])} | {_cell(f['evidence_recall'])} "
                               f"| {_cell(f['first_query_success'])} | {_cell(f['refusal_rate'])} |")
            out.append("")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="demo,heldout,paraphrase")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--searchers", metavar="R:K[:OPT=V;...],...", help="retriever:reranker pairs instead of "
                        "the default five, e.g. whoosh:none,milvus:none,milvus:none:dense=off (then the retriever's "
                        "options)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--home", metavar="DIR", help="keep the indexes in DIR between runs (the dense index "
                        "of a real corpus takes long to embed); default a temporary folder")
    args = parser.parse_args()
    searchers = tuple(tuple(pair.split(":", 2)) for pair in args.searchers.split(",")) if args.searchers else SEARCHERS
    cache = REPO / "bench" / ".cache" / "evidence"
    rows: list[dict[str, Any]] = []
    with (contextlib.nullcontext(args.home) if args.home else tempfile.TemporaryDirectory(prefix="madqa-evidence-")) \
            as home:
        settings = Settings.from_env(env={}, home=Path(home))
        registry = collect(get_plugin_manager())
        for set_name in args.sets.split(","):
            docs, questions = question_set(set_name, cache)
            rows += measure(set_name, docs, questions, settings, registry, tuple(args.strategies.split(",")),
                            searchers)
    print(json.dumps(rows, indent=1))
    print(markdown(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
