"""Per-question metrics with the exact semantics of the official MADQA harness.

The official harness (``eval/metrics.py`` and ``eval/evaluate.py`` in the
MADQA repository) is the reference: every function here returns the number it
would compute for the same input.  Where that harness would crash (a numeric
answer, a non-dict citation) we return a value instead; those deviations are
listed in ``docs/metrics.md``.  Nothing here normalises document names or page
numbers: like the official code, matching is exact Python equality.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from anls_star import anls_score

CORRECT_THRESHOLD = 0.5
HOP_TYPES: tuple[str, ...] = ("single", "cross_page", "cross_doc")


# --------------------------------------------------------------------- ANLS*
def prediction_items(answer: Any) -> list[str]:
    """Return the lowercased answer items that ANLS* compares (official rules).

    ``None`` -> ``[]``; a string -> one item (even ``""``); any other falsy
    value (``0``, ``False``, ``[]``) -> ``[]`` as in the official code; a
    non-iterable scalar such as ``42`` -> ``["42"]`` (the official code crashes);
    an iterable -> its items, each ``str(item).lower()``.
    """
    if answer is None:
        return []
    if isinstance(answer, str):
        return [answer.lower()]
    if not answer:
        return []
    if isinstance(answer, (bytes, int, float)) or not hasattr(answer, "__iter__"):
        return [str(answer).lower()]
    return [str(item).lower() for item in answer]


def _variant_items(variant: Any) -> list[str]:
    if isinstance(variant, str):
        return [variant.lower()]
    if not hasattr(variant, "__iter__"):
        return [str(variant).lower()]
    return [g.lower() if isinstance(g, str) else str(g).lower() for g in variant]


def anls_star(answer: Any, answer_variants: Any) -> float:
    """Return the ANLS* score in [0, 1]: max over gold variants, case-insensitive.

    Each element of ``answer_variants`` is one acceptable answer (a list of
    items, or a bare string).  No gold or an empty prediction scores 0.0.
    """
    if not answer_variants:
        return 0.0
    pred = prediction_items(answer)
    if not pred:
        return 0.0
    best = 0.0
    for variant in answer_variants:
        # Argument order (prediction first) mirrors the official call exactly.
        best = max(best, float(anls_score(pred, _variant_items(variant))))
    return best


def is_correct(anls: float) -> bool:
    """Return True when ANLS* reaches the official accuracy threshold (0.5)."""
    return anls >= CORRECT_THRESHOLD


def is_empty_answer(answer: Any) -> bool:
    """Return True for a refusal: None, blank text, or a list of only those."""
    if answer is None:
        return True
    if isinstance(answer, str):
        return not answer.strip()
    if isinstance(answer, (list, tuple)):
        return all(is_empty_answer(item) for item in answer)
    return False


# ---------------------------------------------------------------- citations
def _hashable(value: Any) -> bool:
    return isinstance(value, Hashable) and not isinstance(value, (list, dict, set))


def citation_document(citation: Any) -> Any:
    """Return the cited document: ``file`` if truthy, else ``document``."""
    if not isinstance(citation, Mapping):
        return None
    return citation.get("file") or citation.get("document")


def _dicts(items: Any) -> list[Mapping[str, Any]]:
    if not isinstance(items, (list, tuple)):
        return []
    return [x for x in items if isinstance(x, Mapping)]


def gold_documents(evidence: Any) -> set[Any]:
    """Return the set of truthy gold ``document`` names."""
    docs = (ev.get("document") for ev in _dicts(evidence))
    return {d for d in docs if d and _hashable(d)}


def gold_pages(evidence: Any) -> set[tuple[Any, Any]]:
    """Return the set of gold (document, page) pairs with neither part None."""
    pairs = ((ev.get("document"), ev.get("page")) for ev in _dicts(evidence))
    return {p for p in pairs if None not in p and _hashable(p[0]) and _hashable(p[1])}


def cited_documents(citations: Any) -> set[Any]:
    """Return the set of truthy cited documents (``file`` else ``document``)."""
    docs = (citation_document(c) for c in _dicts(citations))
    return {d for d in docs if d and _hashable(d)}


def cited_pages(citations: Any) -> set[tuple[Any, Any]]:
    """Return the set of cited (document, page) pairs with neither part None."""
    pairs = ((citation_document(c), c.get("page")) for c in _dicts(citations))
    return {p for p in pairs if None not in p and _hashable(p[0]) and _hashable(p[1])}


def citation_f1(citations: Any, evidence: Any, level: str = "page") -> dict[str, float]:
    """Return ``{"precision", "recall", "f1", "support"}`` of citations vs gold.

    ``level`` is ``"document"`` or ``"page"``.  No gold evidence gives all
    zeros (even with no citations), as in the official code.
    """
    if level == "document":
        gold: set[Any] = gold_documents(evidence)
        pred: set[Any] = cited_documents(citations)
    elif level == "page":
        gold, pred = gold_pages(evidence), cited_pages(citations)
    else:
        raise ValueError(f"level must be 'document' or 'page', not {level!r}")
    if not gold:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
    tp = len(gold & pred)
    precision = tp / len(pred) if pred else 0.0
    recall = tp / len(gold)
    f1 = 2 * precision * recall / (precision + recall) if (precision + recall) > 0 else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "support": len(gold)}


def hop_type(evidence: Any) -> str:
    """Return ``"cross_doc"`` (>1 document), ``"cross_page"`` (>1 page) or ``"single"``."""
    docs: set[Any] = set()
    pages: set[tuple[Any, Any]] = set()
    for ev in _dicts(evidence):
        doc, page = ev.get("document"), ev.get("page")
        if doc is not None and _hashable(doc):
            docs.add(doc)
            if page is not None and _hashable(page):
                pages.add((doc, page))
    if len(docs) > 1:
        return "cross_doc"
    if len(pages) > 1:
        return "cross_page"
    return "single"


# ------------------------------------------------------------------- effort
def effort(row: Mapping[str, Any]) -> float:
    """Return the official effort: ``len(search_history)`` if non-empty, else
    ``iterations``; anything not a positive number becomes 0.0."""
    history = row.get("search_history", [])
    steps: Any
    if history and hasattr(history, "__len__"):
        steps = len(history)
    else:
        steps = row.get("iterations", 0)
    if steps is None:
        return 0.0
    try:
        value = float(steps)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return value if value > 0 else 0.0


def _valid_sorted(efforts: Sequence[float], correct: Sequence[bool],
                  ids: Sequence[Any] | None = None) -> list[tuple[float, bool, Any]]:
    if len(efforts) != len(correct):
        raise ValueError("efforts and correct must have the same length")
    keys = list(ids) if ids is not None else [None] * len(efforts)
    items = [(float(e), bool(c), k) for e, c, k in zip(efforts, correct, keys, strict=True) if e and e > 0]
    return sorted(items, key=lambda t: t[0])  # stable: ties keep input order


def kuiper_curve(efforts: Sequence[float], correct: Sequence[bool],
                 ids: Sequence[Any] | None = None) -> list[dict[str, Any]]:
    """Return the cumulative-deviation curve behind the Kuiper statistic.

    Items with effort <= 0 are dropped, the rest stable-sorted by effort; point
    k is ``{"k", "effort", "correct", "deviation", "id"}`` with deviation
    D_k = sum_{i<=k}(correct_i - mean correctness of the kept items).
    """
    items = _valid_sorted(efforts, correct, ids)
    if not items:
        return []
    y_bar = sum(1 if c else 0 for _, c, _ in items) / len(items)
    points, total = [], 0.0
    for k, (e, c, key) in enumerate(items, start=1):
        total += (1 if c else 0) - y_bar
        points.append({"k": k, "effort": e, "correct": c, "deviation": total, "id": key})
    return points


def kuiper_statistic(efforts: Sequence[float], correct: Sequence[bool]) -> float | None:
    """Return K = max D_k - min D_k (not divided by n), or None when no item
    has effort > 0 or the kept items are all correct / all wrong."""
    points = kuiper_curve(efforts, correct)
    if not points:
        return None
    n_correct = sum(1 for p in points if p["correct"])
    if n_correct in (0, len(points)):
        return None
    deviations = [p["deviation"] for p in points]
    return max(deviations) - min(deviations)


def wasted_effort_ratio(efforts: Sequence[float], correct: Sequence[bool]) -> dict[str, Any]:
    """Return ``{"ratio", "mean_steps_correct", "mean_steps_incorrect",
    "n_correct", "n_incorrect"}`` over items with effort > 0.

    As in the official code a missing side has mean 0.0, so the ratio is 0.0
    when no wrong answer has effort; it is None (official: inf) when no right
    answer has effort.
    """
    if len(efforts) != len(correct):
        raise ValueError("efforts and correct must have the same length")
    right = [float(e) for e, c in zip(efforts, correct, strict=True) if c and e and e > 0]
    wrong = [float(e) for e, c in zip(efforts, correct, strict=True) if not c and e and e > 0]
    mean_right = sum(right) / len(right) if right else 0.0
    mean_wrong = sum(wrong) / len(wrong) if wrong else 0.0
    ratio = mean_wrong / mean_right if mean_right > 0 else None
    if ratio is not None and not math.isfinite(ratio):
        ratio = None
    return {"ratio": ratio, "mean_steps_correct": mean_right,
            "mean_steps_incorrect": mean_wrong, "n_correct": len(right),
            "n_incorrect": len(wrong)}


# ----------------------------------------------------------------- matching
def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def match_predictions(predictions: Sequence[Any], gold: Sequence[Mapping[str, Any]]
                      ) -> tuple[list[tuple[int, int]], list[int]]:
    """Match predictions to gold as the official harness does.

    Returns ``(matched, unmatched)``: ``matched`` is a list of
    ``(prediction_index, gold_index)`` in prediction order (several predictions
    may match one gold question; each counts), ``unmatched`` the indices of
    predictions that match nothing.  Matching uses the stripped question text
    first (a later gold question with the same text wins), then a truthy ``id``.
    """
    by_text: dict[str, int] = {}
    by_id: dict[Any, int] = {}
    for gi, g in enumerate(gold):
        text = _text(g.get("question"))
        if text:
            by_text[text] = gi
        qid = g.get("id")
        if qid and _hashable(qid):
            by_id[qid] = gi
    matched: list[tuple[int, int]] = []
    unmatched: list[int] = []
    for pi, row in enumerate(predictions):
        if not isinstance(row, Mapping):
            unmatched.append(pi)
            continue
        question, qid = _text(row.get("question")), row.get("id")
        if question and question in by_text:
            matched.append((pi, by_text[question]))
        elif qid and _hashable(qid) and qid in by_id:
            matched.append((pi, by_id[qid]))
        else:
            unmatched.append(pi)
    return matched, unmatched
