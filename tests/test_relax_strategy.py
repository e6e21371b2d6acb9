"""The relax strategy's decisions on crafted search histories."""

from __future__ import annotations

from madqa.agent import SearchState
from plugins.relax_strategy import Relax, similarity, terms


def state(queries, new_counts):
    s = SearchState("q")
    s.queries, s.new_page_counts = list(queries), list(new_counts)
    return s


def test_first_and_fresh_queries_are_untouched():
    assert Relax().rewrite("revenue 2024", state([], [])) == ("revenue 2024", None)
    assert Relax().rewrite("headcount staff", state(["revenue 2024"], [3])) == ("headcount staff", None)


def test_a_repeated_query_is_loosened_to_any_term():
    query, note = Relax().rewrite("total revenue 2024", state(["revenue 2024 total"], [2]))
    assert query == "total OR revenue OR 2024"
    assert "too close" in note and "any term" in note


def test_no_new_pages_triggers_and_issued_forms_are_skipped():
    history = state(["employee headcount", "employee OR headcount"], [1, 0])
    query, note = Relax().rewrite("employee headcount", history)
    assert query == "employee" and "dropped the most specific term headcount" in note


def test_prefixes_when_nothing_else_is_left():
    history = state(["subsidiaries"], [0])
    query, note = Relax().rewrite("subsidiaries", history)
    assert query == "subsi*" and "prefix" in note
    exhausted = state(["subsidiaries", "subsi*"], [0, 0])
    assert Relax().rewrite("subsidiaries", exhausted) == ("subsidiaries", "too close to an earlier query "
                                                          "(similarity 1.00); no looser form left to try")


def test_terms_and_similarity():
    assert terms('"annual report" AND revenue NOT draft') == ['"annual report"', "revenue"]
    assert similarity("a b", "b a") == 1.0 and similarity("a", "b") == 0.0
