"""How a run used its tools (our own figures, beside the official ones): calls per tool, the pages it
reached by navigation (open_page, next_pages, ...) and by search, and first-step success counted over
any tool (the first call that showed pages found a gold page: the paper's first-query success, for an
agent that may browse before it searches). Read from the row's trajectory; None where a row has none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from madqa.evaluation import metrics as m

ANSWER = "submit_answer"


def _pages(items: Any) -> set[tuple[Any, Any]]:
    return m.cited_pages(items)


def tool_use(row: Mapping[str, Any], evidence: Any) -> dict[str, Any] | None:
    """``{"calls", "pages_search", "pages_navigation", "gold_search", "gold_navigation", "first_step_hit"}``
    of one row: its calls per tool, the new pages its searches and its other tools showed (and how many of
    them are gold pages), and whether the first call that returned pages returned a gold one (None: no
    call returned pages, or no gold pages). None for a row without a trajectory."""
    trajectory = row.get("trajectory")
    if not isinstance(trajectory, list):
        return None
    gold = m.gold_pages(evidence)
    calls: Counter[str] = Counter()
    search: set[tuple[Any, Any]] = set()
    navigation: set[tuple[Any, Any]] = set()
    first: bool | None = None
    for step in trajectory:
        if not isinstance(step, Mapping):
            continue
        if step.get("type") == "search":
            calls[str(step.get("tool") or "search_documents")] += 1
            reached, returned = _pages(step.get("new_pages")), _pages(step.get("hits"))
            search |= reached
        elif step.get("type") == "tool":
            calls[str(step.get("name"))] += 1
            reached = returned = _pages(step.get("new_pages"))
            navigation |= reached - search
            returned = _pages(step.get("pages"))
        elif step.get("type") == "answer" and not step.get("failure"):
            calls[ANSWER] += 1
            continue
        else:
            continue
        if first is None and returned and gold:
            first = bool(returned & gold)
    return {"calls": dict(calls), "pages_search": len(search), "pages_navigation": len(navigation),
            "gold_search": len(search & gold), "gold_navigation": len(navigation & gold), "first_step_hit": first}


def summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's tool use from ``per_question`` records: calls per tool (total and per question), pages
    reached by search and by navigation (and the gold ones among them), first-step success."""
    used = [r["tool_use"] for r in records if r.get("tool_use") is not None]
    if not used:
        return {"tool_calls": None, "tool_calls_per_question": None, "pages_by_search": None,
                "pages_by_navigation": None, "gold_pages_by_search": None, "gold_pages_by_navigation": None,
                "first_step_success": None}
    calls: Counter[str] = Counter()
    for u in used:
        calls.update(u["calls"])
    hits = [u["first_step_hit"] for u in used if u["first_step_hit"] is not None]
    return {
        "tool_calls": [[name, n] for name, n in sorted(calls.items())],  # [tool, calls] pairs: names vary per run
        # the tools the model chose (an answer ends every question: it is in ``tool_calls``, not here)
        "tool_calls_per_question": " ".join(f"{name} {n / len(used):.2f}" for name, n in sorted(calls.items())
                                            if name != ANSWER) or "none",
        "pages_by_search": sum(u["pages_search"] for u in used),
        "pages_by_navigation": sum(u["pages_navigation"] for u in used),
        "gold_pages_by_search": sum(u["gold_search"] for u in used),
        "gold_pages_by_navigation": sum(u["gold_navigation"] for u in used),
        "first_step_success": sum(1.0 for h in hits if h) / len(hits) if hits else None,
    }
