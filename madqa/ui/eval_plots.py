"""The Evaluate tab's three plots as data: accuracy by steps taken, the Kuiper curve, why answers were wrong.

Pure functions of the per-question records (``madqa.evaluation.report.per_question``), with notes on what a plot
leaves out, so an empty plot is said in words instead of drawn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import pandas as pd

from madqa.evaluation.report import ERROR_CATEGORIES, kuiper_curve_from_records


class PlotData(NamedTuple):
    accuracy: pd.DataFrame  # config, steps, accuracy, questions
    kuiper: pd.DataFrame  # config, k, deviation, steps
    errors: pd.DataFrame  # config, category, count
    notes: list[str]  # what a plot leaves out, per config


COUNTS = ("n", "tokens", "cost_usd", "latency_s", "steps")  # what a config's run used: shown even when runs failed


def is_score(path: str) -> bool:
    """Whether an overall number (a ``TABLE_ROWS`` path) scores the answers: not a count, tokens, cost, time, steps."""
    head = path.split(".", 1)[0]
    return not (head in COUNTS or head.startswith("n_"))


def failed_runs(result: Mapping[str, Any]) -> str | None:
    """"failed (N of M)" when N of a config's M runs failed (any cause: a key, a connection, a timeout), else None."""
    overall = result.get("overall") or {}
    failed = int(overall.get("n_run_errors") or 0)
    return f"failed ({failed} of {overall.get('n', 0)})" if failed else None


def plots(records_by_config: Mapping[str, Sequence[Mapping[str, Any]]]) -> PlotData:
    """Data of the three plots (accuracy by steps taken, Kuiper curve, error decomposition) and
    notes on what a plot leaves out: the Kuiper curve is undefined when every answer is right
    (or every one wrong), so such a config gets a note instead of a flat line."""
    accuracy, kuiper, errors, notes = [], [], [], []
    for name, records in records_by_config.items():
        failed = sum(1 for r in records if r.get("run_error") is not None)
        if failed:  # a failure is never plotted as a wrong answer
            notes.append(f"{name}: not plotted, failed ({failed} of {len(records)})")
            continue
        by_steps: dict[float, list[bool]] = {}
        for r in records:
            by_steps.setdefault(float(r["effort"]), []).append(bool(r["correct"]))
        for steps in sorted(by_steps):
            outcomes = by_steps[steps]
            accuracy.append({"config": name, "steps": steps, "accuracy": sum(outcomes) / len(outcomes),
                             "questions": len(outcomes)})
        kinds = {bool(r["correct"]) for r in records}
        if len(kinds) == 1:
            notes.append(f"{name}: no Kuiper curve, every answer was {'right' if True in kinds else 'wrong'}")
        else:
            kuiper += [{"config": name, "k": p["k"], "deviation": p["deviation"], "steps": p["effort"]}
                       for p in kuiper_curve_from_records(records)]
        if not any(r["error_category"] for r in records):
            notes.append(f"{name}: no wrong answer to decompose")
        counts = Counter(r["error_category"] for r in records if r["error_category"])
        errors += [{"config": name, "category": c.replace("_", " "), "count": counts.get(c, 0)}  # plain words
                   for c in ERROR_CATEGORIES]
    return PlotData(pd.DataFrame(accuracy, columns=["config", "steps", "accuracy", "questions"]),
            pd.DataFrame(kuiper, columns=["config", "k", "deviation", "steps"]),
            pd.DataFrame(errors, columns=["config", "category", "count"]), notes)


def nothing_to_plot(kuiper: pd.DataFrame, errors: pd.DataFrame, notes: Sequence[str]) -> dict[str, str]:
    """A line per plot that would be drawn empty ({"kuiper"|"errors": "nothing to plot: ..."}), so it is not drawn."""
    out = {}
    if kuiper.empty:
        why = "; ".join(n for n in notes if "Kuiper" in n) or "no questions were scored"
        out["kuiper"] = f"Kuiper curve — nothing to plot: {why} (it needs both right and wrong answers)."
    if errors.empty or not errors["count"].any():
        out["errors"] = "Why answers were wrong — nothing to plot: no answer was wrong."
    return out


def step_ticks(steps: pd.Series) -> tuple[list[str], list[str]]:
    """Step counts as axis categories in numeric order, so the axis reads 1, 2, 8 (never 0.5 or 7.5)."""
    label = [f"{v:g}" for v in steps]
    return label, [f"{v:g}" for v in sorted(set(steps))]

