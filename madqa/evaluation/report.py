"""Run-level report: the official MADQA numbers plus our own diagnostics.

``evaluate`` returns the official aggregates (same values the official harness
prints, see ``metrics``) and, beside them, coverage counts, query drift,
evidence recall, an error decomposition and cost/step statistics.  Every extra
metric is None when the prediction rows lack the data it needs.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from madqa.errors import MadqaError
from madqa.evaluation import metrics as m
from madqa.evaluation import tool_use
from madqa.evaluation.questions import read_jsonl
from madqa.text import LEXICAL_REPRESENTATION, lexical_similarity

Similarity = Callable[[str, str], float]
# the paper's decomposition of wrong answers, after "failed": a row whose run failed (its ``error``) has no
# answer to judge and is never counted as a refusal
ERROR_CATEGORIES = ("failed", "refusal", "wrong_document", "wrong_page", "wrong_answer")


class PredictionFileError(MadqaError, ValueError):
    """The prediction file cannot be read at all."""


def load_predictions(path: str | Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Return ``(rows, problems)`` from a predictions JSONL file.

    Every line that is not returned is listed in ``problems`` as
    ``"line N: ..."`` (invalid JSON, not an object); blank lines are skipped.
    Raises ``PredictionFileError`` when the file cannot be opened.
    """
    rows, problems = read_jsonl(path, PredictionFileError)
    return [obj for _, obj in rows], problems


# -------------------------------------------------------------- query drift
def embedding_similarity(embed: Callable[[str], Sequence[float]]) -> Similarity:
    """Return a cosine similarity over ``embed(text)`` vectors, for ``evaluate``."""
    def similarity(a: str, b: str) -> float:
        va, vb = list(embed(a)), list(embed(b))
        na = math.sqrt(sum(x * x for x in va))
        nb = math.sqrt(sum(x * x for x in vb))
        if na == 0 or nb == 0:
            return 1.0 if na == nb else 0.0
        return sum(x * y for x, y in zip(va, vb, strict=True)) / (na * nb)
    return similarity


def search_queries(row: Mapping[str, Any]) -> list[str]:
    """Return the executed queries of ``search_history`` in order."""
    history = row.get("search_history")
    if not isinstance(history, list):
        return []
    queries = []
    for step in history:
        if isinstance(step, Mapping):
            query = step.get("query")
            queries.append("" if query is None else str(query))
    return queries


def query_drift(queries: Sequence[str], similarity: Similarity = lexical_similarity) -> float | None:
    """Return the mean of 1 - similarity over consecutive queries, None if < 2."""
    if len(queries) < 2:
        return None
    drifts = [1.0 - similarity(a, b) for a, b in zip(queries, queries[1:], strict=False)]
    return sum(drifts) / len(drifts)


# ----------------------------------------------------------- evidence recall
def _hit_pages(step: Mapping[str, Any]) -> set[tuple[Any, Any]]:
    return m.cited_pages(step.get("hits"))


def evidence_coverage(row: Mapping[str, Any], evidence: Any) -> dict[str, Any] | None:
    """Return ``{"found", "total", "recall", "first_query_hit"}`` for one question.

    ``found`` counts gold (document, page) pairs seen in any trajectory search
    hit; ``first_query_hit`` says whether the first search step returned a gold
    page (None without search steps).  None without a trajectory or gold pages.
    """
    trajectory = row.get("trajectory")
    gold = m.gold_pages(evidence)
    if not isinstance(trajectory, list) or not gold:
        return None
    searches = [s for s in trajectory if isinstance(s, Mapping) and s.get("type") == "search"]
    seen: set[tuple[Any, Any]] = set()
    for step in searches:
        seen |= _hit_pages(step)
    found = len(gold & seen)
    first = bool(_hit_pages(searches[0]) & gold) if searches else None
    return {"found": found, "total": len(gold), "recall": found / len(gold),
            "first_query_hit": first}


# ------------------------------------------------------ error decomposition
def error_category(row: Mapping[str, Any], evidence: Any, correct: bool) -> str | None:
    """Return None for a right answer, else the first matching category of
    ``ERROR_CATEGORIES``: failed (the row has an ``error``), refusal (empty answer), wrong_document (no gold
    document cited, or no citations), wrong_page (gold document but no gold
    page cited), wrong_answer (a gold page was cited)."""
    if correct:
        return None
    if m.is_empty_answer(row.get("answer")):
        if row.get("error"):  # the run failed: nothing was answered or refused
            return "failed"
        return "refusal"
    citations = row.get("citations")
    if not m.cited_documents(citations) & m.gold_documents(evidence):
        return "wrong_document"
    if not m.cited_pages(citations) & m.gold_pages(evidence):
        return "wrong_page"
    return "wrong_answer"


# ------------------------------------------------------------ per question
def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _tokens(row: Mapping[str, Any]) -> float | None:
    usage = row.get("usage")
    if not isinstance(usage, Mapping):
        return None
    total = _number(usage.get("total_tokens"))
    if total is None:
        parts = [_number(usage.get(k)) for k in ("prompt_tokens", "completion_tokens")]
        total = None if None in parts else sum(p for p in parts if p is not None)
    return total


def _int_if_whole(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def per_question(predictions: Sequence[Any], gold: Sequence[Mapping[str, Any]],
                 similarity: Similarity = lexical_similarity) -> list[dict[str, Any]]:
    """Return one record per matched prediction, in prediction order.

    Keys: ``index`` (prediction row), ``gold_index``, ``id``, ``question``,
    ``anls``, ``correct``, ``doc_f1``, ``page_f1``, ``effort``, ``hop_type``,
    ``category``, ``domain``, ``error_category``, ``drift``, ``n_searches``,
    ``evidence_found``, ``evidence_total``, ``evidence_recall``,
    ``first_query_hit``, ``tokens``, ``cost_usd``, ``latency_s``, ``run_error``, ``quotes``,
    ``quotes_verified``, ``answered``, ``tool_use`` (``madqa.evaluation.tool_use``).
    """
    matched, _ = m.match_predictions(predictions, gold)
    records = []
    for pi, gi in matched:
        row, g = predictions[pi], gold[gi]
        evidence = g.get("evidence")
        anls = m.anls_star(row.get("answer", ""), g.get("answer_variants"))
        correct = m.is_correct(anls)
        coverage = evidence_coverage(row, evidence)
        queries = search_queries(row)
        error = row.get("error")
        records.append({
            "index": pi, "gold_index": gi, "id": g.get("id"), "question": g.get("question"),
            "anls": anls, "correct": correct,
            "doc_f1": m.citation_f1(row.get("citations"), evidence, "document")["f1"],
            "page_f1": m.citation_f1(row.get("citations"), evidence, "page")["f1"],
            "effort": _int_if_whole(m.effort(row)), "hop_type": m.hop_type(evidence),
            "category": g.get("document_category") or "Unknown",
            "domain": g.get("domain") or "Other",
            "error_category": error_category(row, evidence, correct),
            "drift": query_drift(queries, similarity), "n_searches": len(queries),
            "evidence_found": coverage["found"] if coverage else None,
            "evidence_total": coverage["total"] if coverage else None,
            "evidence_recall": coverage["recall"] if coverage else None,
            "first_query_hit": coverage["first_query_hit"] if coverage else None,
            "tokens": _tokens(row), "cost_usd": _number(row.get("cost_usd")),
            "latency_s": _number(row.get("latency_s")),
            "run_error": None if error is None else str(error),
            "unanswerable": not g.get("answer_variants"),
            "tool_use": tool_use.tool_use(row, evidence),
            **_quotes(row),
            "answer_verified": _verified(row),
        })
    return records


def _verified(row: Mapping[str, Any]) -> bool | None:
    """Whether the row's answer is written on a page seen (its ``answer_check``); None: no answer, or no check."""
    check = row.get("answer_check")
    value = check.get("verified") if isinstance(check, Mapping) else None
    return value if isinstance(value, bool) and not m.is_empty_answer(row.get("answer")) else None


def _answer_shares(records: list[dict[str, Any]]) -> dict[str, Any]:
    """How far the answer's ✓ can be trusted: the share of checked answers verified on their pages, and the
    accuracy among verified and among unverified answers (failed rows aside: they hold no answer)."""
    checked = [r for r in records if r["answer_verified"] is not None and r["run_error"] is None]
    verified = [r for r in checked if r["answer_verified"]]
    unverified = [r for r in checked if not r["answer_verified"]]
    return {
        "answers_verified": len(verified) / len(checked) if checked else None,
        "answers_checked_n": len(checked),
        "accuracy_verified": _mean([1.0 if r["correct"] else 0.0 for r in verified]),
        "accuracy_unverified": _mean([1.0 if r["correct"] else 0.0 for r in unverified]),
        # the two sides of the check: right answers it confirms, wrong ones it flags
        "right_verified": _mean([1.0 if r["answer_verified"] else 0.0 for r in checked if r["correct"]]),
        "wrong_caught": _mean([0.0 if r["answer_verified"] else 1.0 for r in checked if not r["correct"]]),
    }


def _quotes(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row's quote check (None when the row has none, e.g. from another tool) and whether it answered."""
    check = row.get("quote_check")
    quotes = _number(check.get("quotes")) if isinstance(check, Mapping) else None
    verified = _number(check.get("verified")) if isinstance(check, Mapping) else None
    if quotes is None or verified is None:
        quotes = verified = None
    return {"quotes": quotes, "quotes_verified": verified, "answered": not m.is_empty_answer(row.get("answer"))}


def _quote_shares(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Share of quotes found on their cited page, and of answers carrying at least one such quote."""
    checked = [r for r in records if r["quotes"] is not None]
    quotes = sum(r["quotes"] for r in checked)
    answered = [r for r in checked if r["answered"]]
    return {
        "quotes_verified": sum(r["quotes_verified"] for r in checked) / quotes if quotes else None,
        "quotes_n": int(quotes) if checked else None,
        "answers_with_verified_quote": (sum(1 for r in answered if r["quotes_verified"]) / len(answered)
                                        if answered else None),
    }


# -------------------------------------------------------------- aggregation
def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _sum_mean(values: list[float | None]) -> dict[str, Any] | None:
    known = [v for v in values if v is not None]
    if not known:
        return None
    return {"sum": sum(known), "mean": sum(known) / len(known), "n_known": len(known)}


def _errors(records: list[dict[str, Any]]) -> dict[str, Any]:
    counts = Counter(r["error_category"] for r in records if not r["correct"])
    n_wrong = sum(counts.values())
    return {"n_wrong": n_wrong,
            "counts": {c: counts.get(c, 0) for c in ERROR_CATEGORIES},
            "shares": {c: (counts.get(c, 0) / n_wrong if n_wrong else None)
                       for c in ERROR_CATEGORIES}}


def _steps(records: list[dict[str, Any]]) -> dict[str, Any]:
    efforts = [r["effort"] for r in records]
    if not efforts:
        return {"mean": None, "median": None, "max": None, "histogram": {}}
    return {"mean": sum(efforts) / len(efforts), "median": statistics.median(efforts),
            "max": max(efforts), "histogram": dict(sorted(Counter(efforts).items()))}


def _aggregate(records: list[dict[str, Any]], gold_indices: list[int],
               representation: str) -> dict[str, Any]:
    n = len(records)
    efforts = [float(r["effort"]) for r in records]
    correct = [r["correct"] for r in records]
    wasted = m.wasted_effort_ratio(efforts, correct)
    first: dict[int, bool] = {}
    for r in records:
        first.setdefault(r["gold_index"], r["correct"])
    covered = [r for r in records if r["evidence_total"] is not None]
    first_hits = [r["first_query_hit"] for r in covered if r["first_query_hit"] is not None]
    pages_total = sum(r["evidence_total"] for r in covered)
    drifts = [r["drift"] for r in records if r["drift"] is not None]
    n_gold = len(gold_indices)
    return {
        "n": n, "n_gold": n_gold,
        "n_missing": sum(1 for gi in gold_indices if gi not in first),
        "n_duplicate": n - len(first),
        "accuracy": sum(correct) / n if n else None,
        "accuracy_strict": sum(first.values()) / n_gold if n_gold else None,
        "anls": _mean([r["anls"] for r in records]),
        "doc_f1": _mean([r["doc_f1"] for r in records]),
        "page_f1": _mean([r["page_f1"] for r in records]),
        "kuiper": m.kuiper_statistic(efforts, correct),
        "wasted_effort_ratio": wasted["ratio"],
        "mean_steps_correct": wasted["mean_steps_correct"] if n else None,
        "mean_steps_incorrect": wasted["mean_steps_incorrect"] if n else None,
        "query_drift": _mean(drifts), "query_drift_n": len(drifts),
        "query_drift_representation": representation,
        "evidence_recall": _mean([r["evidence_recall"] for r in covered]),
        "evidence_recall_micro": (sum(r["evidence_found"] for r in covered) / pages_total
                                  if pages_total else None),
        "evidence_recall_n": len(covered),
        "first_query_success": _mean([1.0 if h else 0.0 for h in first_hits]),
        "errors": _errors(records), "steps": _steps(records),
        "tokens": _sum_mean([r["tokens"] for r in records]),
        "cost_usd": _sum_mean([r["cost_usd"] for r in records]),
        "latency_s": _sum_mean([r["latency_s"] for r in records]),
        "n_run_errors": sum(1 for r in records if r["run_error"] is not None),
        # questions with no gold answer: the share the run rightly refused (and did not fail on)
        "n_unanswerable": sum(1 for r in records if r["unanswerable"]),
        "unanswerable_refused": _mean([0.0 if r["answered"] or r["run_error"] is not None else 1.0
                                       for r in records if r["unanswerable"]]),
        **_quote_shares(records),
        **_answer_shares(records),
        **tool_use.summary(records),
    }


# ``--by`` names: the two the MADQA export has under other names, with what a question without one shows
BY_FIELDS = {"category": ("document_category", "Unknown"), "domain": ("domain", "Other")}


def _label(value: Any, default: str) -> str:
    """A question field's value as a group label (lists joined, blanks as ``default``)."""
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v) for v in value)
    return str(value) if value not in (None, "") else default


def evaluate(predictions: Sequence[Any], gold: Sequence[Mapping[str, Any]],
             by: str | None = None, similarity: Similarity = lexical_similarity,
             representation: str | None = None) -> dict[str, Any]:
    """Return ``{"overall", "by_hop_type"}`` (+ ``"by_<by>"``: ``category``, ``domain`` or any other
    question field, e.g. a ``kind`` column), each a metrics dict.

    ``similarity`` drives query drift; name it with ``representation`` when it
    is not the default lexical one.  ``overall`` also has ``n_unmatched``.
    """
    if by is not None and (not isinstance(by, str) or not by.strip()):
        raise ValueError(f"by must be None or a question field, not {by!r}")
    if representation is None:
        representation = (LEXICAL_REPRESENTATION if similarity is lexical_similarity
                          else getattr(similarity, "__name__", repr(similarity)))
    records = per_question(predictions, gold, similarity)
    _, unmatched = m.match_predictions(predictions, gold)
    hops = [m.hop_type(g.get("evidence")) for g in gold]

    def group(key: Callable[[int], str], labels: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {label: _aggregate([r for r in records if key(r["gold_index"]) == label],
                                  [gi for gi in range(len(gold)) if key(gi) == label],
                                  representation) for label in labels}

    overall = _aggregate(records, list(range(len(gold))), representation)
    overall["n_unmatched"] = len(unmatched)
    result: dict[str, Any] = {"overall": overall,
                              "by_hop_type": group(lambda gi: hops[gi], m.HOP_TYPES)}
    if by is not None:
        field, default = BY_FIELDS.get(by, (by, "(none)"))
        labels = [_label(g.get(field), default) for g in gold]
        result[f"by_{by}"] = group(lambda gi: labels[gi], sorted(set(labels)))
    return result


# ------------------------------------------------------------------ tables
TABLE_ROWS: tuple[tuple[str, str], ...] = (
    ("n", "n"), ("n_gold", "n_gold"), ("n_missing", "n_missing"),
    ("n_unmatched", "n_unmatched"), ("accuracy", "accuracy"),
    ("accuracy_strict", "accuracy_strict"), ("anls", "anls"), ("doc_f1", "doc_f1"),
    ("page_f1", "page_f1"), ("kuiper", "kuiper"),
    ("wasted_effort_ratio", "wasted_effort_ratio"), ("query_drift", "query_drift"),
    ("query_drift_embedding", "query_drift_embedding"),
    ("evidence_recall", "evidence_recall"), ("evidence_recall_micro", "evidence_recall_micro"),
    ("first_query_success", "first_query_success"),
    *((f"errors.{c}", f"errors.shares.{c}") for c in ERROR_CATEGORIES),
    ("steps.mean", "steps.mean"), ("steps.median", "steps.median"), ("steps.max", "steps.max"),
    ("tokens.sum", "tokens.sum"), ("tokens.mean", "tokens.mean"),
    ("cost_usd.sum", "cost_usd.sum"), ("cost_usd.mean", "cost_usd.mean"),
    ("latency_s.sum", "latency_s.sum"), ("latency_s.mean", "latency_s.mean"),
    ("n_run_errors", "n_run_errors"), ("n_unanswerable", "n_unanswerable"),
    ("unanswerable_refused", "unanswerable_refused"),
    ("quotes_verified", "quotes_verified"), ("answers_with_verified_quote", "answers_with_verified_quote"),
    ("answers_verified", "answers_verified"), ("accuracy_verified", "accuracy_verified"),
    ("accuracy_unverified", "accuracy_unverified"), ("right_verified", "right_verified"),
    ("wrong_caught", "wrong_caught"),
    ("first_step_success", "first_step_success"), ("tool_calls_per_question", "tool_calls_per_question"),
    ("pages_by_search", "pages_by_search"), ("pages_by_navigation", "pages_by_navigation"),
    ("gold_pages_by_search", "gold_pages_by_search"), ("gold_pages_by_navigation", "gold_pages_by_navigation"),
)


def lookup(data: Any, dotted: str) -> Any:
    """The value at a dotted path (``"errors.shares.refusal"``) of nested dicts, or None."""
    for part in dotted.split("."):
        if not isinstance(data, Mapping):
            return None
        data = data.get(part)
    return data


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) >= 1000 else f"{value:.4f}"
    return str(value)


def format_table(results: Mapping[str, Mapping[str, Any]]) -> str:
    """Return a plain-text table: one row per metric, one column per run.

    Values may be full ``evaluate`` results or their ``overall`` dicts; missing
    values print as ``-``; error rows show shares of wrong answers.
    """
    names = list(results)
    overall = [results[n].get("overall", results[n]) for n in names]
    rows = [["metric", *names]]
    rows += [[label, *(_cell(lookup(o, path)) for o in overall)] for label, path in TABLE_ROWS]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def kuiper_curve_from_records(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return ``metrics.kuiper_curve`` points for ``per_question`` records
    (each point's ``id`` is the question id), for plotting."""
    return m.kuiper_curve([float(r["effort"]) for r in records],
                          [bool(r["correct"]) for r in records],
                          ids=[r.get("id") for r in records])
