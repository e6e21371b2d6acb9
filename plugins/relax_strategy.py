"""Query strategy ``relax``: when a search repeats itself or stops finding new pages, loosen it.

A small, model-free form of the paper's "query drift": if the query is too close to one already
run (lexical cosine >= 0.8) or the previous search showed no new page, the query is rewritten
by the first of these that gives a query not run before: any-term matching (OR), dropping
the most specific term, prefix wildcards. The trace records what was done and why.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import madqa

_TERM = re.compile(r'"[^"]+"|[^\s()]+')
_OPERATORS = {"AND", "OR", "NOT"}
SIMILAR = 0.8


def similarity(a: str, b: str) -> float:
    """Cosine of lowercase bag-of-words vectors (the lexical drift measure of the reports)."""
    va, vb = Counter(re.findall(r"\w+", a.lower())), Counter(re.findall(r"\w+", b.lower()))
    if not va or not vb:
        return 1.0 if va == vb else 0.0
    dot = sum(c * vb[t] for t, c in va.items())
    return dot / math.sqrt(sum(c * c for c in va.values()) * sum(c * c for c in vb.values()))


def terms(query: str) -> list[str]:
    """The query's words and quoted phrases, without boolean operators or NOT-ed terms."""
    found, skip = [], False
    for token in _TERM.findall(query):
        if token.upper() in _OPERATORS:
            skip = token.upper() == "NOT"
            continue
        if not skip:
            found.append(token)
        skip = False
    return found


class Relax:
    """Rewrites a stale query; leaves a fresh one alone."""

    def rewrite(self, query: str, state: Any) -> tuple[str, str | None]:
        past = list(state.queries) if state is not None else []
        if not past:
            return query, None
        closest = max(similarity(query, p) for p in past)
        stale_results = bool(state.new_page_counts) and state.new_page_counts[-1] == 0
        if closest < SIMILAR and not stale_results:
            return query, None
        why = (f"too close to an earlier query (similarity {closest:.2f})" if closest >= SIMILAR
               else "the previous search showed no new page")
        words = terms(query)
        candidates = []
        if len(words) > 1:
            candidates.append((" OR ".join(words), "matched any term"))
            specific = max(words, key=lambda w: (len(w.strip('"')), w))
            rest = [w for w in words if w != specific]
            candidates.append((" ".join(rest), f"dropped the most specific term {specific}"))
        prefixes = [w[:5] + "*" if len(w) > 6 and w.isalpha() else w for w in words]
        if prefixes != words:
            candidates.append((" OR ".join(prefixes), "matched word stems by prefix"))
        issued = {q.strip().lower() for q in past}
        for candidate, action in candidates:
            if candidate.strip() and candidate.strip().lower() not in issued:
                return candidate, f"{why}; {action}"
        return query, f"{why}; no looser form left to try"


@madqa.hookimpl(trylast=True)
def register_query_strategies(register: madqa.Register) -> None:
    register("relax", lambda corpus, options: Relax(),
             "loosens a query that repeats itself or finds nothing new (OR, drop a term, prefixes)")
