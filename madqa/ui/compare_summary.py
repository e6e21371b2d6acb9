"""Compare's summary table: one column per config, what each run did and whether its answer was right.

Pure functions of prediction rows (no Gradio), like ``madqa.ui.messages``; a failed or not-run config is
never scored (its cells say so)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from madqa.evaluation.metrics import anls_star, is_correct
from madqa.evaluation.report import query_drift, search_queries
from madqa.ui.messages import page_label


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def failed_run(row: Mapping[str, Any]) -> bool:
    """A row whose run failed (an ``error`` and no answer): it has no score, right or wrong."""
    return bool(row.get("error")) and not any(str(a).strip() for a in row.get("answer") or [])


def verdict(row: Mapping[str, Any], score: float | None) -> str:
    """right / wrong for a scored run; "not run" or "failed" (never "wrong") for a row with an error."""
    if failed_run(row):
        return "not run" if str(row["error"]).startswith(("not run", "did not run")) else "failed"
    return "right" if score is not None and is_correct(score) else "wrong"


def summary_rows(rows: Sequence[Mapping[str, Any]], gold: Mapping[str, Any] | None = None) -> list[list[str]]:
    """The Compare table: one line per measure, one column per run (prediction rows from ``Trace.row``)."""
    def line(label: str, values: Iterable[Any]) -> list[str]:
        return [label, *(_fmt(v) for v in values)]

    table = [
        line("backend/model", [f"{r.get('backend')}/{r.get('model')}" for r in rows]),
        line("answer", [" | ".join(r.get("answer") or []) or "(no answer)" for r in rows]),
        line("citations", [", ".join(page_label(c) for c in r.get("citations") or []) or "none" for r in rows]),
        line("steps", [r.get("iterations") for r in rows]),
        line("searches", [len(r.get("search_history") or []) for r in rows]),
        line("query drift", [query_drift(search_queries(r)) for r in rows]),
    ]
    tokens = [(r.get("usage") or {}).get("total_tokens") for r in rows]
    costs = [r.get("cost_usd") for r in rows]
    if any(tokens):  # hidden when no run used a model (the offline baseline has neither)
        table.append(line("tokens", tokens))
    if any(costs):
        table.append(line("cost (USD)", costs))
    table.append(line("time (s)", [r.get("latency_s") for r in rows]))
    if any(r.get("error") for r in rows):
        table.append(line("error", [r.get("error") or "" for r in rows]))
    variants = (gold or {}).get("answer_variants")
    if variants:
        # a run that failed or never ran has no score: never "0.000, wrong"
        scores = [None if failed_run(r) else anls_star(r.get("answer"), variants) for r in rows]
        table.append(line("ANLS*", scores))
        table.append(line("right?", [verdict(r, s) for r, s in zip(rows, scores, strict=True)]))
        gold_text = " / ".join(" | ".join(v) if isinstance(v, list) else str(v) for v in variants)
        table.append([f"gold answer: {gold_text}", *([""] * len(rows))])  # once, not per column
    return table  # plain-text cells (the table's datatype is str): nothing in them renders
