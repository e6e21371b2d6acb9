"""The answer checked on its pages inside the loop: a citation moved to the page that holds the answer, one repair
turn for an answer not as written (then kept with a flag), none when nothing was seen or no call is left."""

from __future__ import annotations

from madqa.agent import Agent
from madqa.budget import Budget
from madqa.loop.policies import Progress, verification_repair
from madqa.settings import load_config
from madqa.trace import Trace

P1 = {"file": "report.pdf", "page": 1, "quote": "Revenue in 2024 was 7.5 million"}
P1_UNQUOTED = {"file": "report.pdf", "page": 1}
P2 = {"file": "report.pdf", "page": 2, "quote": "Headcount was 120 employees"}


def ask(corpus, registry, settings, script, question="What was the revenue in 2024?", **budget):
    options = {"budget": budget} if budget else {}
    config = load_config("offline").with_overrides(backend="scripted", options=options)
    agent = Agent(corpus, config, registry, settings, {"script": script})
    trace = Trace("q", config).consume(agent.run(question))
    return trace.row(), agent.backend.calls


def test_an_answer_on_its_cited_page_is_verified_and_costs_no_extra_call(corpus, registry, settings):
    row, calls = ask(corpus, registry, settings, [{"search": "revenue"}, {"answer": ["7.5 million"], "citations": [P1]}])
    assert row["answer_check"]["verified"] is True and row["answer_check"]["items"][0]["verdict"] == "cited"
    assert len(calls) == 2 and row["flags"] == []


def test_an_answer_citing_the_wrong_page_seen_moves_its_citation(corpus, registry, settings):
    row, calls = ask(corpus, registry, settings, [{"search": "revenue headcount"},
                                                  {"answer": ["120"], "citations": [P1_UNQUOTED]}], "How many employees?")
    assert row["citations"] == [{"file": "report.pdf", "page": 2}] and len(calls) == 2
    assert row["answer_check"]["verified"] is True
    assert any("not on its cited page but on report.pdf p.2" in f for f in row["flags"])


def test_an_answer_in_another_scale_gets_one_repair_turn_and_the_repaired_answer_stands(corpus, registry, settings):
    row, calls = ask(corpus, registry, settings, [
        {"search": "revenue"}, {"answer": ["7,500 thousand"], "citations": [P1]},
        {"answer": ["7.5 million"], "citations": [P1]}])
    assert len(calls) == 3 and calls[2]["force_answer"]  # the repair turn is a call, on the answer step
    note = calls[2]["messages"][-1]["content"]
    assert "not written as such" in note and "as it is written in the document" in note
    assert row["answer"] == ["7.5 million"] and row["answer_check"]["verified"] is True
    assert "the answer was repaired: the first was not as written on a page seen" in row["flags"]
    assert any(s["type"] == "error" and s["where"] == "answer" for s in row["trajectory"])


def test_a_whole_page_as_the_answer_is_repaired_once_then_kept_with_a_flag(corpus, registry, settings):
    page = " ".join(["Revenue in 2024 was 7.5 million."] * 10)
    row, calls = ask(corpus, registry, settings, [
        {"search": "revenue"}, {"answer": [page], "citations": [P1]}, {"answer": [page], "citations": [P1]}])
    assert len(calls) == 3 and row["answer"] == [page] and row["error"] is None
    assert row["answer_check"]["verified"] is False and row["answer_check"]["items"][0]["verdict"] == "long"
    assert "the answer was given again after a repair turn, and is still not as written on a page seen" in row["flags"]


def test_a_refusal_on_the_repair_turn_keeps_the_first_answer_flagged(corpus, registry, settings):
    row, calls = ask(corpus, registry, settings, [
        {"search": "revenue"}, {"answer": ["8.1 million"], "citations": [P1]}, {"answer": [], "citations": []}])
    assert len(calls) == 3 and row["answer"] == ["8.1 million"] and not row["refusal"]
    assert row["answer_check"]["verified"] is False
    assert any("after a repair turn the model gave no answer" in f for f in row["flags"])
    assert any("is on no page the agent saw" in f for f in row["flags"])


def test_no_repair_turn_without_a_page_seen_or_a_call_left(corpus, registry, settings):
    row, calls = ask(corpus, registry, settings, [{"answer": ["8.1 million"], "citations": []}])
    assert len(calls) == 1 and row["answer_check"]["verified"] is False  # never searched: nothing to ask for
    row, calls = ask(corpus, registry, settings, [{"search": "revenue"}, {"answer": ["8.1 million"], "citations": [P1]}],
                     max_calls=2)
    assert len(calls) == 2 and row["answer"] == ["8.1 million"] and row["answer_check"]["verified"] is False


def test_a_refusal_is_never_repaired(corpus, registry, settings):
    row, calls = ask(corpus, registry, settings, [{"search": "revenue"}, {"answer": [], "citations": []}])
    assert row["refusal"] and len(calls) == 2 and row["answer_check"]["verified"] is None


def test_the_verification_repair_policy():
    start = Progress(last=10, iteration=4)
    assert verification_repair(start, True, None) == Progress(last=5, iteration=4, repaired_verification=True)
    assert verification_repair(start, False, None) is None
    assert verification_repair(start, True, "question budget of 4 model calls reached") is None
    assert verification_repair(Progress(last=5, iteration=5, repaired_verification=True), True, None) is None
    assert Budget(max_calls=2).exhausted is None


def test_eval_reports_how_far_the_check_can_be_trusted_and_checks_old_rows_on_a_corpus(corpus, registry, settings,
                                                                                         tmp_path):
    import json

    from madqa.evaluation.answer_checks import checked_row
    from madqa.evaluation.report import evaluate

    right, _ = ask(corpus, registry, settings, [{"search": "revenue"}, {"answer": ["7.5 million"], "citations": [P1]}])
    wrong, _ = ask(corpus, registry, settings, [{"search": "revenue"}, {"answer": ["12 employees"], "citations": [P1]},
                                                {"answer": ["12 employees"], "citations": [P1]}])
    also_right, _ = ask(corpus, registry, settings, [{"search": "revenue"}, {"answer": ["7.5 million"], "citations": []}])
    rows = [{**r, "id": f"q{n}", "question": "What was the revenue in 2024?"}
            for n, r in enumerate((right, wrong, also_right))]
    gold = [{"id": f"q{n}", "question": "What was the revenue in 2024?", "answer_variants": [["7.5 million"]],
             "evidence": [{"document": "report.pdf", "page": 1}]} for n in range(3)]
    overall = evaluate(rows, gold)["overall"]
    assert overall["answers_verified"] == 2 / 3 and overall["answers_checked_n"] == 3
    assert overall["accuracy_verified"] == 1.0 and overall["accuracy_unverified"] == 0.0
    assert overall["right_verified"] == 1.0 and overall["wrong_caught"] == 1.0
    # a row written before rows carried the check: checked on the corpus's pages, its trajectory's pages seen
    old = {k: v for k, v in wrong.items() if k != "answer_check"}
    assert checked_row(old, corpus)["answer_check"]["verified"] is False
    old_right = {k: v for k, v in right.items() if k != "answer_check"}
    assert checked_row(old_right, corpus)["answer_check"]["items"][0]["verdict"] == "cited"
    assert evaluate([old], gold[:1])["overall"]["answers_checked_n"] == 0  # unchecked rows are not counted
    assert json.dumps(checked_row(old, corpus))  # still a JSON row
