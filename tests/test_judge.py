"""The semantic score's pure parts (madqa/evaluation/judge.py) against figures worked out by hand with the
official harness's formulas (eval/metrics.py: bias_adjusted_score, standard_error, confidence_interval with
z = 1.96, the simplified interval since q0 + q1 = 1.98 > 1.9), and the harness's rules for which answers skip
the judge."""

from __future__ import annotations

import json
import math

import pytest

from madqa.evaluation import judge as j


def test_rogan_gladen_matches_the_hand_computed_figures():
    # scores 1, 1, 0.5, 0, 1: p = 3.5 / 5 = 0.7; theta = 0.7 / 0.98; se = sqrt(0.7 * 0.3 / 5) / 0.98
    out = j.rogan_gladen([1.0, 1.0, 0.5, 0.0, 1.0])
    assert out["raw_score"] == pytest.approx(0.7)
    assert out["adjusted_score"] == pytest.approx(0.7142857142857143)
    assert out["se"] == pytest.approx(0.20912144420325712)
    assert out["ci_lower"] == pytest.approx(0.7142857142857143 - 1.96 * 0.20912144420325712)  # 0.3044...
    assert out["ci_upper"] == 1.0  # 1.1241... clipped, as the harness clips
    assert (out["n_samples"], out["q0"], out["q1"]) == (5, 1.0, 0.98)


def test_rogan_gladen_clips_the_corrected_mean_at_one():
    out = j.rogan_gladen([1.0] * 99 + [0.0])  # p = 0.99 -> 0.99 / 0.98 = 1.0102 -> 1
    assert out["adjusted_score"] == 1.0
    assert out["se"] == pytest.approx(math.sqrt(0.99 * 0.01 / 100) / 0.98)
    assert out["ci_lower"] == pytest.approx(1 - 1.96 * 0.01015293303170021)  # 0.9801
    assert out["ci_upper"] == 1.0


@pytest.mark.parametrize(("scores", "adjusted"), [([1.0, 1.0], 1.0), ([0.0, 0.0, 0.0], 0.0)])
def test_rogan_gladen_at_the_ends_has_no_spread(scores, adjusted):
    out = j.rogan_gladen(scores)
    assert (out["adjusted_score"], out["se"], out["ci_lower"], out["ci_upper"]) == (adjusted, 0.0, adjusted, adjusted)


def test_rogan_gladen_of_nothing_is_the_harness_zeros():
    assert j.rogan_gladen([]) == {"raw_score": 0.0, "adjusted_score": 0.0, "se": 0.0, "ci_lower": 0.0,
                                  "ci_upper": 0.0, "n_samples": 0, "q0": 1.0, "q1": 0.98}


def test_a_failed_judge_is_counted_apart_and_as_zero_only_in_the_official_figure():
    items = [{"score": 1.0, "source": "exact"}, {"score": None, "source": "failed"},
             {"score": 0.5, "source": "judge", "judgment": "partial"},
             {"score": 0.0, "source": "cache", "judgment": "incorrect"}]
    out = j.summarise(items)
    assert (out["n"], out["scored"], out["failed"]) == (4, 3, 1)
    # ours: 1, 0.5, 0 -> p = 0.5, theta = 0.5 / 0.98; se = sqrt(0.25 / 3) / 0.98
    assert out["score"]["adjusted_score"] == pytest.approx(0.5102040816326531)
    assert out["score"]["se"] == pytest.approx(0.29456646387225804)
    assert (out["score"]["ci_lower"], out["score"]["ci_upper"]) == (0.0, 1.0)
    assert out["accuracy"] == pytest.approx(2 / 3)  # 1 and 0.5 reach 0.5
    # the harness's: 1, 0, 0.5, 0 -> p = 0.375 -> 0.38265...; CI upper 0.38265 + 1.96 * 0.24700 = 0.86678
    assert out["official"]["adjusted_score"] == pytest.approx(0.3826530612244898)
    assert out["official"]["ci_upper"] == pytest.approx(0.8667759795004168)
    assert out["official"]["accuracy"] == pytest.approx(0.5)
    assert out["judgments"] == {"correct": 0, "partial": 1, "incorrect": 1}


def test_all_failed_gives_no_score_of_ours():
    out = j.summarise([{"score": None, "source": "failed"}])
    assert out["score"] is None and out["accuracy"] is None and out["official"]["adjusted_score"] == 0.0


@pytest.mark.parametrize(("answer", "source", "score"), [
    (None, "empty", 0.0), ("", "empty", 0.0), ([], "empty", 0.0), ([""], "empty", 0.0), ([None, ""], "empty", 0.0),
    (["x" * 1997], "too_long", 0.0),  # json.dumps adds 4 characters: 2001 > 2000
    ("PARIS", "exact", 1.0),  # case-insensitive ANLS* of 1
])
def test_answers_that_skip_the_judge(answer, source, score):
    out = j.pre_judge(answer, [["Paris"]], "Where?")
    assert out is not None and (out["source"], out["score"]) == (source, score)


def test_the_length_limit_is_strictly_over_2000_characters():
    assert len(json.dumps(["x" * 1996])) == 2000
    assert j.pre_judge(["x" * 1996], [["y"]], "Q?") is None  # not too long: the judge decides


def test_without_question_text_the_raw_anls_stands():
    out = j.pre_judge("pari", [["paris"]], "")
    assert out == {"score": pytest.approx(0.8), "anls": pytest.approx(0.8), "source": "no_question"}
    assert j.pre_judge("pari", [["paris"]], "Where?") is None


def test_the_prompt_is_filled_as_the_harness_fills_it():
    text = j.fill_prompt("{question}|{predicted}|{gold_variants}", "Où?", ["Zürich"], [["Zurich"], ["ZH"]])
    assert text == 'Où?|["Z\\u00fcrich"]|[["Zurich"], ["ZH"]]'  # json.dumps with ASCII escapes


def test_the_official_template_is_read_from_a_harness_checkout_without_running_it(tmp_path):
    source = tmp_path / "metrics.py"
    source.write_text('import sys\nsys.exit(3)\n_GEVAL_PROMPT_TEMPLATE = """Q: {question}\nP: {predicted}\n'
                      'G: {gold_variants}\nJSON like {{"a": 1}}"""\n', encoding="utf-8")
    template = j.load_prompt(source)
    assert j.fill_prompt(template, "q", "a", [["b"]]) == 'Q: q\nP: "a"\nG: [["b"]]\nJSON like {"a": 1}'


@pytest.mark.parametrize(("text", "says"), [("Q: {question} P: {predicted}", "lacks {gold_variants}"),
                                            ("{question}{predicted}{gold_variants}{context}", "only {question}"),
                                            ("{question}{predicted}{gold_variants} {", "only {question}")])
def test_a_template_that_cannot_be_filled_is_refused(tmp_path, text, says):
    path = tmp_path / "p.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(j.PromptError, match=says.replace("{", r"\{")):
        j.load_prompt(path)


def test_a_python_file_without_the_template_is_refused(tmp_path):
    path = tmp_path / "other.py"
    path.write_text("X = 1\n", encoding="utf-8")
    with pytest.raises(j.PromptError, match="no _GEVAL_PROMPT_TEMPLATE"):
        j.load_prompt(path)


def test_madqa_s_own_prompt_fills():
    j.check_prompt(j.JUDGE_PROMPT)
