"""Hand-computed checks of the official-parity metrics in madqa.evaluation.metrics."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from madqa.evaluation import metrics as m

# ------------------------------------------------------------------ ANLS*


@pytest.mark.parametrize(
    ("answer", "variants", "expected"),
    [
        ("Paris", [["paris"]], 1.0),                     # case-insensitive
        ("PARIS", [["Paris"]], 1.0),
        ("  paris ", [["paris"]], 1.0),                  # anls-star trims whitespace
        ("pari", [["london"], ["paris"]], 0.8),          # max over alternatives: 1 - 1/5
        ("parsi", [["paris"]], 0.6),                     # distance 2 over length 5
        ("abc", [["xyz"]], 0.0),                         # NLS below 0.5 -> 0
        (["a", "b"], [["a", "b"]], 1.0),                 # multi-item answer
        (["b", "a"], [["a", "b"]], 1.0),                 # order does not matter
        (["a", "x"], [["a", "b"]], 0.5),                 # (1 + 0) / 2: exactly the threshold
        (["a"], [["a", "b"]], 0.5),                      # a missing item costs 1 of 2
        (["a", "b", "c"], [["a", "b"]], 2 / 3),          # an extra item costs too
        ("a, b", [["a", "b"]], 0.0),                     # one string is not a two-item list
        ("a", [["a"], ["a", "b"]], 1.0),
        ("paris", ["paris"], 1.0),                       # a bare-string variant is one item
    ],
)
def test_anls_star_values(answer, variants, expected):
    assert m.anls_star(answer, variants) == pytest.approx(expected)


@pytest.mark.parametrize("answer", ["", None, [], [""]])
def test_anls_star_empty_prediction_scores_zero(answer):
    assert m.anls_star(answer, [["paris"]]) == 0.0


@pytest.mark.parametrize("variants", [None, []])
def test_anls_star_no_gold_scores_zero(variants):
    assert m.anls_star("paris", variants) == 0.0


def test_anls_star_numeric_answers_do_not_crash():
    assert m.anls_star(42, [["42"]]) == 1.0          # official harness would crash here
    assert m.anls_star([42], [["42"]]) == 1.0        # official: str(42)
    assert m.anls_star(4.5, [["4.5"]]) == 1.0
    assert m.anls_star(True, [["true"]]) == 1.0
    assert m.anls_star(None, [["42"]]) == 0.0
    assert m.anls_star(["42", None], [["42", "none"]]) == 1.0  # str(None) == "none"


def test_anls_star_falsy_scalar_scores_zero_like_official():
    # The official code returns 0.0 for any falsy prediction before comparing.
    assert m.anls_star(0, [["0"]]) == 0.0
    assert m.anls_star("0", [["0"]]) == 1.0


def test_anls_star_numeric_gold_items_compared_as_text():
    assert m.anls_star("1990", [[1990]]) == 1.0


def test_is_correct_threshold():
    assert m.is_correct(0.5)
    assert not m.is_correct(0.4999)


@pytest.mark.parametrize(
    ("answer", "empty"),
    [(None, True), ("", True), ("  ", True), ([], True), (["", " "], True),
     ("x", False), (["", "x"], False), (0, False), (42, False)],
)
def test_is_empty_answer(answer, empty):
    assert m.is_empty_answer(answer) is empty


# -------------------------------------------------------------- citations
GOLD = [{"document": "a.pdf", "page": 1}, {"document": "b.pdf", "page": 3}]


def test_citation_f1_page_and_document_level():
    cites = [{"file": "a.pdf", "page": 1}, {"file": "a.pdf", "page": 2}]
    page = m.citation_f1(cites, GOLD, "page")
    assert page == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2}
    doc = m.citation_f1(cites, GOLD, "document")
    assert (doc["precision"], doc["recall"], doc["support"]) == (1.0, 0.5, 2)
    assert doc["f1"] == pytest.approx(2 / 3)


def test_citation_document_key_and_file_precedence():
    as_document = [{"document": "a.pdf", "page": 1}, {"document": "b.pdf", "page": 3}]
    assert m.citation_f1(as_document, GOLD, "page")["f1"] == 1.0
    both = [{"file": "x.pdf", "document": "a.pdf", "page": 1}]
    assert m.citation_f1(both, GOLD, "document")["f1"] == 0.0
    empty_file = [{"file": "", "document": "a.pdf", "page": 1}]
    assert m.citation_f1(empty_file, GOLD, "page")["precision"] == 1.0


@pytest.mark.parametrize(
    "cite",
    [{"file": "A.pdf", "page": 1}, {"file": "a", "page": 1}, {"file": "docs/a.pdf", "page": 1}],
)
def test_no_document_name_normalisation(cite):
    assert m.citation_f1([cite], GOLD, "document")["f1"] == 0.0


def test_page_numbers_compared_exactly():
    res = m.citation_f1([{"file": "a.pdf", "page": "1"}], GOLD, "page")
    assert res["f1"] == 0.0
    assert m.citation_f1([{"file": "a.pdf", "page": "1"}], GOLD, "document")["precision"] == 1.0


def test_citation_f1_edge_cases():
    zero = {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
    assert m.citation_f1([], [], "page") == zero
    assert m.citation_f1([{"file": "a.pdf", "page": 1}], None, "document") == zero
    assert m.citation_f1(None, GOLD, "page")["f1"] == 0.0
    assert m.citation_f1([], GOLD, "document") == {"precision": 0.0, "recall": 0.0, "f1": 0.0,
                                                   "support": 2}
    # page None: dropped at page level, still a document citation
    assert m.citation_f1([{"file": "a.pdf"}], GOLD, "page")["f1"] == 0.0
    assert m.citation_f1([{"file": "a.pdf"}], GOLD, "document")["precision"] == 1.0
    # repeated citations collapse; junk entries are skipped instead of crashing
    cites = [{"file": "a.pdf", "page": 1}, {"file": "a.pdf", "page": 1}, "a.pdf", None]
    assert m.citation_f1(cites, GOLD, "page")["precision"] == 1.0
    with pytest.raises(ValueError):
        m.citation_f1([], GOLD, "line")


@pytest.mark.parametrize(
    ("evidence", "hop"),
    [
        (None, "single"), ([], "single"),
        ([{"document": "a.pdf", "page": 1}], "single"),
        ([{"document": "a.pdf", "page": 1}, {"document": "a.pdf", "page": 1}], "single"),
        ([{"document": "a.pdf", "page": 1}, {"document": "a.pdf", "page": 4}], "cross_page"),
        ([{"document": "a.pdf", "page": 1}, {"document": "b.pdf", "page": 1}], "cross_doc"),
        ([{"document": "a.pdf", "page": 1}, {"document": "a.pdf", "page": 2},
          {"document": "b.pdf", "page": 9}], "cross_doc"),
    ],
)
def test_hop_type(evidence, hop):
    assert m.hop_type(evidence) == hop


# ----------------------------------------------------------------- effort
@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"search_history": [{}, {}, {}], "iterations": 9}, 3.0),
        ({"search_history": [], "iterations": 5}, 5.0),
        ({"iterations": 2}, 2.0),
        ({}, 0.0),
        ({"iterations": None}, 0.0),
        ({"iterations": "4"}, 4.0),      # official float() conversion
        ({"iterations": "many"}, 0.0),
        ({"iterations": -1}, 0.0),
        ({"search_history": None, "iterations": 1}, 1.0),
    ],
)
def test_effort(row, expected):
    assert m.effort(row) == expected


# ----------------------------------------------------------------- Kuiper
@pytest.mark.parametrize(
    ("efforts", "correct", "expected"),
    [
        # ties keep input order: (1,T) (2,F) (2,T) (3,F) -> D = .5 0 .5 0
        ([1, 2, 2, 3], [True, False, True, False], 0.5),
        # same multiset, other order among the tie: D = .5 1 .5 0
        ([1, 2, 2, 3], [True, True, False, False], 1.0),
        # unsorted input: (1,T)#1 (2,F)#0 (2,T)#2 (3,F)
        ([2, 1, 2, 3], [False, True, True, False], 0.5),
        ([2, 1, 2, 3], [True, True, False, False], 1.0),
        # effort 0 is dropped before the mean: (1,T) (2,F) -> .5 0
        ([0, 1, 2], [True, True, False], 0.5),
        # D = -2/3 -1/3 0 -> max 0, min -2/3 (not divided by n)
        ([1, 2, 3], [False, True, True], 2 / 3),
        # (1,T)#1 (1,F)#3 (2,F) (3,F), mean .25 -> D = .75 .5 .25 0
        ([3, 1, 2, 1], [False, True, False, False], 0.75),
    ],
)
def test_kuiper_statistic(efforts, correct, expected):
    assert m.kuiper_statistic(efforts, correct) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("efforts", "correct"),
    [([1, 2], [True, True]), ([1, 2], [False, False]), ([0, 0], [True, False]), ([], []),
     ([0, 3], [True, True])],
)
def test_kuiper_undefined(efforts, correct):
    assert m.kuiper_statistic(efforts, correct) is None


def test_kuiper_curve_points():
    points = m.kuiper_curve([2, 1, 0, 2], [False, True, True, True], ids=["a", "b", "c", "d"])
    assert [p["id"] for p in points] == ["b", "a", "d"]
    assert [p["k"] for p in points] == [1, 2, 3]
    assert [p["effort"] for p in points] == [1.0, 2.0, 2.0]
    assert [p["deviation"] for p in points] == pytest.approx([1 / 3, -1 / 3, 0.0])
    assert m.kuiper_curve([0], [True]) == []
    with pytest.raises(ValueError):
        m.kuiper_curve([1], [True, False])


@given(st.lists(st.tuples(st.integers(0, 6), st.booleans()), max_size=30), st.randoms())
def test_kuiper_properties(items, rnd):
    efforts = [e for e, _ in items]
    correct = [c for _, c in items]
    k = m.kuiper_statistic(efforts, correct)
    if k is not None:
        assert 0 < k <= len(items)
    if len(set(efforts)) == len(efforts):  # without ties the input order is irrelevant
        shuffled = list(items)
        rnd.shuffle(shuffled)
        k2 = m.kuiper_statistic([e for e, _ in shuffled], [c for _, c in shuffled])
        assert k2 == pytest.approx(k) if k is not None else k2 is None


def test_wasted_effort_ratio():
    res = m.wasted_effort_ratio([2, 4, 6, 0], [True, False, False, True])
    assert res == {"ratio": 2.5, "mean_steps_correct": 2.0, "mean_steps_incorrect": 5.0,
                   "n_correct": 1, "n_incorrect": 2}
    # official quirk: no wrong answers -> mean 0 -> ratio 0.0
    assert m.wasted_effort_ratio([1, 3], [True, True])["ratio"] == 0.0
    # no right answers with effort -> official inf, reported as None
    assert m.wasted_effort_ratio([1, 3], [False, False])["ratio"] is None
    assert m.wasted_effort_ratio([0, 3], [True, False])["ratio"] is None


# --------------------------------------------------------------- matching
def test_match_predictions_text_then_id():
    gold = [{"id": "q1", "question": "What?"}, {"id": "q2", "question": "Who?"},
            {"id": "q3", "question": "Who?"}]  # later duplicate text wins
    preds = [
        {"id": "q2", "question": "  What? "},   # text wins over a conflicting id
        {"id": "q1", "question": "what?"},      # text is case-sensitive -> id fallback
        {"question": "Who?"},
        {"id": "q9", "question": "Nope"},
        {"id": "", "question": ""},
        "not a dict",
        {"id": "q2"},
    ]
    matched, unmatched = m.match_predictions(preds, gold)
    assert matched == [(0, 0), (1, 0), (2, 2), (6, 1)]
    assert unmatched == [3, 4, 5]


def test_match_predictions_tolerates_odd_types():
    gold = [{"id": "q1", "question": "What?"}]
    preds = [{"id": ["q1"], "question": None}, {"id": 1, "question": 5}]
    assert m.match_predictions(preds, gold) == ([], [0, 1])
