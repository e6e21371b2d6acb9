"""Trajectory diff: why one run beat another, question by question.

Two prediction files scored against the same gold: per question which run was right, both
runs' queries side by side, where they diverged (the first query that differs; the first page
one run's searches returned that the other's never did), and a summary of who won where, by
hop type and by the loser's error kind (the report's error decomposition).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from madqa.evaluation import metrics as m
from madqa.evaluation.report import ERROR_CATEGORIES, per_question, search_queries

OUTCOMES = ("A only", "B only", "both", "neither")


def run_name(file_name: str, rows: Sequence[Any]) -> str:
    """A run named by its file and its config (``baseline.jsonl · offline``), not A or B: the web diff and
    ``madqa diff`` both say it so."""
    configs = sorted({str(r["config"]) for r in rows if isinstance(r, Mapping) and r.get("config")})
    return f"{file_name} · {', '.join(configs)}" if configs else file_name


def run_names(names: tuple[str, str]) -> tuple[str, str]:
    """Two runs' names, told apart by `` (first)``/`` (second)`` when their files and configs are named alike."""
    return (f"{names[0]} (first)", f"{names[1]} (second)") if names[0] == names[1] else names


def error_words(kind: str | None) -> str:
    """An error kind in words (``wrong_page`` -> ``wrong page``), from the report's glossary."""
    from madqa.evaluation.glossary import term

    return term(f"errors.{kind}").label.removeprefix("wrong answers: ") if kind else ""


def seen_pages(row: Mapping[str, Any]) -> list[tuple[Any, Any, int]]:
    """The pages the row's searches returned, in order of first appearance: (file, page, search number)."""
    out: dict[tuple[Any, Any], int] = {}
    number = 0
    for step in row.get("trajectory") or []:
        if not isinstance(step, Mapping) or step.get("type") != "search":
            continue
        number += 1
        for hit in step.get("hits") or []:
            if isinstance(hit, Mapping):
                key = (hit.get("file"), hit.get("page"))
                if isinstance(key[0], str) and isinstance(key[1], int):
                    out.setdefault(key, number)
    return [(f, p, n) for (f, p), n in out.items()]


def call_sequence(row: Mapping[str, Any]) -> list[str]:
    """Every tool call of the row in order: a search as its query (``search_in`` names its file), any other
    tool as ``→ name arguments``; the row's queries (``search_history``) when it called no other tool."""
    steps = [s for s in row.get("trajectory") or [] if isinstance(s, Mapping)]
    if not any(s.get("type") == "tool" or s.get("tool") not in (None, "search_documents") for s in steps):
        return search_queries(row)
    out: list[str] = []
    for step in steps:
        if not isinstance(step, Mapping):
            continue
        if step.get("type") == "search":
            query = str(step.get("executed_query") or step.get("query") or "")
            tool = step.get("tool") or "search_documents"
            out.append(query if tool == "search_documents" else f"{tool}: {query}")
        elif step.get("type") == "tool":
            arguments = step.get("arguments")
            shown = " ".join(f"{k}={v}" for k, v in arguments.items()) if isinstance(arguments, Mapping) else ""
            out.append(f"→ {step.get('name')}" + (f" {shown}" if shown else ""))
    return out


def first_difference(a: Sequence[str], b: Sequence[str]) -> int | None:
    """The 1-based position of the first query that differs (one run stopping counts), None if equal."""
    for i, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        if x.strip().lower() != y.strip().lower():
            return i
    return None if len(a) == len(b) else min(len(a), len(b)) + 1


def _first_unique(mine: list[tuple[Any, Any, int]], theirs: list[tuple[Any, Any, int]]) -> dict[str, Any] | None:
    other = {(f, p) for f, p, _ in theirs}
    for f, p, n in mine:
        if (f, p) not in other:
            return {"file": f, "page": p, "search": n}
    return None


def outcome(a_right: bool, b_right: bool) -> str:
    if a_right and b_right:
        return "both"
    if a_right:
        return "A only"
    return "B only" if b_right else "neither"


def diff_runs(rows_a: Sequence[Any], rows_b: Sequence[Any], gold: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Return ``{"questions": [...], "summary": {...}}`` for questions answered in both files.

    Each question: ``id``, ``question``, ``hop_type``, ``outcome`` (one of ``OUTCOMES``), per side
    ``a_right``/``b_right``, ``a_error``/``b_error`` (error kind or None), ``a_answer``/``b_answer``,
    ``a_queries``/``b_queries``, ``first_different_query`` (1-based or None), ``a_calls``/``b_calls`` (every
    tool call: ``call_sequence``) and ``first_different_call``, ``a_first_unique_page``/
    ``b_first_unique_page`` (``{file, page, search}`` or None). The summary counts outcomes overall,
    by hop type, and the loser's error kinds for each one-sided win.
    """
    records_a = {r["gold_index"]: r for r in reversed(per_question(rows_a, gold))}  # the first row counts
    records_b = {r["gold_index"]: r for r in reversed(per_question(rows_b, gold))}
    questions = []
    for gi in range(len(gold)):
        if gi not in records_a or gi not in records_b:
            continue
        ra, rb = records_a[gi], records_b[gi]
        row_a, row_b = rows_a[ra["index"]], rows_b[rb["index"]]
        qa, qb = search_queries(row_a), search_queries(row_b)
        pa, pb = seen_pages(row_a), seen_pages(row_b)
        questions.append({
            "id": gold[gi].get("id"), "question": gold[gi].get("question"), "hop_type": ra["hop_type"],
            "outcome": outcome(ra["correct"], rb["correct"]),
            "a_right": ra["correct"], "b_right": rb["correct"],
            "a_error": ra["error_category"], "b_error": rb["error_category"],
            "a_answer": row_a.get("answer"), "b_answer": row_b.get("answer"),
            "a_queries": qa, "b_queries": qb, "first_different_query": first_difference(qa, qb),
            "a_calls": (ca := call_sequence(row_a)), "b_calls": (cb := call_sequence(row_b)),
            "first_different_call": first_difference(ca, cb),
            "a_first_unique_page": _first_unique(pa, pb), "b_first_unique_page": _first_unique(pb, pa),
        })
    return {"questions": questions, "summary": summarise(questions, len(records_a), len(records_b))}


def summarise(questions: Sequence[Mapping[str, Any]], n_a: int, n_b: int) -> dict[str, Any]:
    counts = Counter(q["outcome"] for q in questions)
    by_hop = {hop: {o: sum(1 for q in questions if q["hop_type"] == hop and q["outcome"] == o) for o in OUTCOMES}
              for hop in m.HOP_TYPES}
    losers = {"A only": "b_error", "B only": "a_error"}
    loser_errors = {o: {c: sum(1 for q in questions if q["outcome"] == o and q[key] == c) for c in ERROR_CATEGORIES}
                    for o, key in losers.items()}
    neither = {c: {"A": sum(1 for q in questions if q["outcome"] == "neither" and q["a_error"] == c),
                   "B": sum(1 for q in questions if q["outcome"] == "neither" and q["b_error"] == c)}
               for c in ERROR_CATEGORIES}
    same = sum(1 for q in questions if q["first_different_query"] is None)
    return {"n": len(questions), **{o: counts.get(o, 0) for o in OUTCOMES},
            "by_hop_type": by_hop, "loser_errors": loser_errors, "neither_errors": neither,
            "same_queries": same, "n_only_a": n_a - len(questions), "n_only_b": n_b - len(questions)}


def _page(p: Mapping[str, Any] | None) -> str:
    return "-" if p is None else f"{p['file']} p.{p['page']} (search {p['search']})"


def _answer(value: Any) -> str:
    if isinstance(value, list):
        return " | ".join(str(v) for v in value) or "(refusal)"
    return "(refusal)" if value in (None, "") else str(value)


def format_diff(result: Mapping[str, Any], names: tuple[str, str] = ("A", "B"), width: int = 48,
                only: str | None = None) -> str:
    """The diff as plain text: per question (``only`` keeps one outcome), then the summary."""
    a, b = names
    label = {"A only": f"only {a}", "B only": f"only {b}", "both": "both", "neither": "neither"}
    lines: list[str] = []
    for q in result["questions"]:
        if only and q["outcome"] != only:
            continue
        mark = {True: "right", False: "wrong"}
        lines.append(f"== {q['id']} [{q['hop_type'].replace('_', ' ')}] {label[q['outcome']]} right: "
                     f"{str(q['question'])[:100]}")
        lines.append(f"   {a}: {mark[q['a_right']]}{' (' + error_words(q['a_error']) + ')' if q['a_error'] else ''}: "
                     f"{_answer(q['a_answer'])[:80]}")
        lines.append(f"   {b}: {mark[q['b_right']]}{' (' + error_words(q['b_error']) + ')' if q['b_error'] else ''}: "
                     f"{_answer(q['b_answer'])[:80]}")
        calls_a, calls_b = q.get("a_calls") or q["a_queries"], q.get("b_calls") or q["b_queries"]
        differ = q.get("first_different_call", q["first_different_query"])
        for i in range(max(len(calls_a), len(calls_b))):
            left = calls_a[i] if i < len(calls_a) else ""
            right = calls_b[i] if i < len(calls_b) else ""
            flag = "*" if differ == i + 1 else " "
            lines.append(f"  {flag}{i + 1:>2} {left[:width]:<{width}} | {right[:width]}")
        where = q["first_different_query"]
        lines.append(f"   diverged at query {where}" if where else "   same queries")
        lines.append(f"   first page only {a} saw: {_page(q['a_first_unique_page'])}; "
                     f"only {b} saw: {_page(q['b_first_unique_page'])}")
    return "\n".join(lines + ([""] if lines else []) + [format_summary(result["summary"], names)])


def format_summary(s: Mapping[str, Any], names: tuple[str, str] = ("A", "B")) -> str:
    a, b = names
    label = {"A only": f"{a} only", "B only": f"{b} only", "both": "both", "neither": "neither"}
    lines = [f"summary over {s['n']} questions answered in both ({a} first, {b} second):",
             "  " + ", ".join(f"{label[o]} right: {s[o]}" for o in OUTCOMES) + f"; same queries: {s['same_queries']}"]
    short = {"A only": "only first", "B only": "only second", "both": "both", "neither": "neither"}  # fits a column
    lines.append(f"  {'hop type':10} " + " ".join(f"{short[o]:>11}" for o in OUTCOMES) + "   (right)")
    for hop, counts in s["by_hop_type"].items():
        lines.append(f"  {hop.replace('_', ' '):10} " + " ".join(f"{counts[o]:>11}" for o in OUTCOMES))
    for o, errors in s["loser_errors"].items():
        loser = b if o == "A only" else a
        lines.append(f"  where {label[o]} was right, {loser} erred by: "
                     + ", ".join(f"{error_words(c)} {n}" for c, n in errors.items()))
    lines.append("  where neither was right: "
                 + ", ".join(f"{error_words(c)} {v['A']}/{v['B']}" for c, v in s["neither_errors"].items())
                 + f" ({a} / {b})")
    if s["n_only_a"] or s["n_only_b"]:
        lines.append(f"  not compared: {s['n_only_a']} questions only in {a}, {s['n_only_b']} only in {b}")
    return "\n".join(lines)
