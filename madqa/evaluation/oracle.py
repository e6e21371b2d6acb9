"""The oracle gap: how much of a run's loss is retrieval, and how much is reading.

A run (``madqa run``) and its oracle twin (``madqa run --oracle``: the first search returns the
gold evidence pages) are scored against the same gold. Every question the run got wrong falls
in one of two bins: *lost to retrieval* (the oracle run got it right: the pages were the
problem) or *lost to reading* (wrong even with the gold pages in front of the model). The
paper's human + oracle condition (99.4%) is this measurement with a person reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from madqa.evaluation import metrics as m
from madqa.evaluation.report import per_question

GAP_BINS = ("lost_to_retrieval", "lost_to_reading", "right_both", "right_without_oracle_only")


def _first_correct(records: Sequence[Mapping[str, Any]]) -> dict[int, bool]:
    """Correctness per gold index; the first prediction of a question counts (like ``accuracy_strict``)."""
    out: dict[int, bool] = {}
    for r in records:
        out.setdefault(r["gold_index"], bool(r["correct"]))
    return out


def gap_bin(right: bool, right_with_oracle: bool) -> str:
    """Which bin a question falls in (see ``GAP_BINS``)."""
    if right:
        return "right_both" if right_with_oracle else "right_without_oracle_only"
    return "lost_to_retrieval" if right_with_oracle else "lost_to_reading"


def _summary(pairs: list[tuple[bool, bool]]) -> dict[str, Any]:
    n = len(pairs)
    counts = {b: 0 for b in GAP_BINS}
    for right, oracle_right in pairs:
        counts[gap_bin(right, oracle_right)] += 1
    wrong = counts["lost_to_retrieval"] + counts["lost_to_reading"]
    return {
        "n": n,
        "accuracy": sum(r for r, _ in pairs) / n if n else None,
        "oracle_accuracy": sum(o for _, o in pairs) / n if n else None,
        "gap": (sum(o for _, o in pairs) - sum(r for r, _ in pairs)) / n if n else None,
        **counts,
        "n_wrong": wrong,
        "share_of_errors_retrieval": counts["lost_to_retrieval"] / wrong if wrong else None,
        "share_of_errors_reading": counts["lost_to_reading"] / wrong if wrong else None,
    }


def oracle_gap(rows: Sequence[Any], oracle_rows: Sequence[Any], gold: Sequence[Mapping[str, Any]]
               ) -> dict[str, Any]:
    """Return ``{"overall", "by_hop_type", "questions", "n_only_run", "n_only_oracle"}``.

    Only questions answered in both files count. ``overall`` (and each hop type) has ``n``,
    ``accuracy``, ``oracle_accuracy``, ``gap`` (their difference), a count per ``GAP_BINS`` bin,
    and each bin's share of the run's wrong answers. ``questions`` lists ``{id, bin, hop_type}``.
    """
    run = _first_correct(per_question(rows, gold))
    oracle = _first_correct(per_question(oracle_rows, gold))
    common = [gi for gi in range(len(gold)) if gi in run and gi in oracle]
    hops = {gi: m.hop_type(gold[gi].get("evidence")) for gi in common}
    by_hop = {hop: _summary([(run[gi], oracle[gi]) for gi in common if hops[gi] == hop]) for hop in m.HOP_TYPES}
    return {
        "overall": _summary([(run[gi], oracle[gi]) for gi in common]),
        "by_hop_type": by_hop,
        "questions": [{"id": gold[gi].get("id"), "bin": gap_bin(run[gi], oracle[gi]), "hop_type": hops[gi]}
                      for gi in common],
        "n_only_run": sum(1 for gi in run if gi not in oracle),
        "n_only_oracle": sum(1 for gi in oracle if gi not in run),
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def format_gap(gap: Mapping[str, Any]) -> str:
    """The oracle gap as plain text: overall, then one line per hop type."""
    o = gap["overall"]
    lines = [
        f"oracle gap on {o['n']} questions answered in both files",
        f"  accuracy without the oracle: {_pct(o['accuracy'])}   with the gold pages: {_pct(o['oracle_accuracy'])}"
        f"   gap: {_pct(o['gap'])}",
        f"  lost to retrieval (right with the gold pages, wrong without): {o['lost_to_retrieval']}"
        f" ({_pct(o['share_of_errors_retrieval'])} of the {o['n_wrong']} wrong answers)",
        f"  lost to reading (wrong even with the gold pages): {o['lost_to_reading']}"
        f" ({_pct(o['share_of_errors_reading'])} of the wrong answers)",
        f"  right both ways: {o['right_both']}; right only without the oracle: {o['right_without_oracle_only']}",
    ]
    for hop, s in gap["by_hop_type"].items():
        if s["n"]:
            lines.append(f"  {hop:10} n={s['n']:<4} accuracy {_pct(s['accuracy'])} -> oracle {_pct(s['oracle_accuracy'])};"
                         f" lost to retrieval {s['lost_to_retrieval']}, to reading {s['lost_to_reading']}")
    if gap["n_only_run"] or gap["n_only_oracle"]:
        lines.append(f"  not compared: {gap['n_only_run']} questions only in the run, "
                     f"{gap['n_only_oracle']} only in the oracle file")
    return "\n".join(lines)
