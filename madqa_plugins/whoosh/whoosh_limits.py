"""The search limits of ``madqa.search_limits`` applied to Whoosh queries (not a plugin: ``whoosh_bm25`` uses it).

Whoosh expands a wildcard (``Prefix``, ``Wildcard``) or a range (``[a TO z]``) to every matching term
of the dictionary and walks all their postings in Python; here each such node becomes an OR of its
most frequent matching terms (BM25-scored, like ``tantivy``'s), or is dropped with a note, and the
query runs under the search's time budget.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from whoosh import collectors, query

import madqa

FIELD = "text"


def _scan(reader: Any, node: query.Query) -> Iterator[tuple[str, int]]:
    """(term, document frequency) for the dictionary entries a multi-term node has to look at."""
    if isinstance(node, query.Prefix):
        prefix = node.text
    elif isinstance(node, query.Wildcard):
        prefix = madqa.literal_prefix(node.text.lower())
    else:  # a range, a regex: Whoosh's own enumeration of its terms
        for btext in node._btexts(reader):
            yield btext.decode("utf-8"), reader.doc_frequency(FIELD, btext)
        return
    for btext, info in reader.iter_prefix(FIELD, prefix):
        yield btext.decode("utf-8"), info.doc_frequency()


def bound_query(q: query.Query, reader: Any, budget: madqa.SearchBudget) -> query.Query:
    """``q`` with every multi-term node of the text field replaced by its bounded expansion."""

    def visit(node: query.Query) -> query.Query:
        if not isinstance(node, query.MultiTerm) or node.field() != FIELD:
            return node
        if isinstance(node, query.Prefix):
            pattern = node.text + "*"
        elif isinstance(node, query.Wildcard):
            pattern = node.text.lower()
        else:
            pattern = str(node)
        if not budget.allow(pattern):
            return query.NullQuery
        match = madqa.glob_regex(pattern).fullmatch if isinstance(node, query.Wildcard) else None
        terms = budget.top_terms(pattern, _scan(reader, node), match)
        if not terms:
            return query.NullQuery
        if len(terms) == 1:
            return query.Term(FIELD, terms[0], boost=node.boost)
        return query.Or([query.Term(FIELD, t) for t in terms], boost=node.boost)

    return q.accept(visit).normalize()


class _TimedWithin(collectors.TimeLimitCollector):
    """Whoosh's time-limited collector that also keeps only ``allowed`` document numbers (a scope):
    Whoosh's own FilterCollector is bypassed when wrapped by a time limit, so both are checked here."""

    def __init__(self, child: Any, timelimit: float, allowed: frozenset[int] | None) -> None:
        super().__init__(child, timelimit, use_alarm=False)  # SIGALRM works only in the main thread
        self.allowed = allowed

    def collect_matches(self) -> None:
        child, allowed = self.child, self.allowed
        for sub_docnum in child.matches():
            if self.timedout:
                raise collectors.TimeLimit
            if allowed is None or child.offset + sub_docnum in allowed:
                child.collect(sub_docnum)


def timed_search(searcher: Any, q: query.Query, k: int, budget: madqa.SearchBudget,
                 allowed: frozenset[int] | None = None) -> list[tuple[float, int]]:
    """Whoosh's own top-k of ``q`` stopped at the budget's deadline (then: what it had collected);
    ``allowed``: the only document numbers it may return (a scope), filtered while collecting."""
    timed = _TimedWithin(searcher.collector(limit=k), max(0.01, budget.remaining()), allowed)
    try:
        searcher.search_with_collector(q, timed)
    except collectors.TimeLimit:
        budget.stop()
    return [(r.score, r.docnum) for r in timed.results()]
