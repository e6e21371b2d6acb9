"""Budgets per question and per session: the loop forces the answer when one is spent, and says why."""

from __future__ import annotations

import threading

import pytest

import madqa
from madqa.agent import Agent
from madqa.budget import Budget
from madqa.settings import load_config
from madqa.trace import Trace
from madqa.types import Usage

SEARCHES = [{"search": "revenue"}, {"search": "headcount"}, {"search": "budget"}, {"search": "memo"}]


def agent_for(corpus, registry, settings, script, **budget):
    config = load_config("offline").with_overrides(backend="scripted", options={"budget": budget} if budget else {})
    return Agent(corpus, config, registry, settings, {"script": script})


def test_a_question_budget_of_calls_forces_the_answer_and_the_row_says_why(corpus, registry, settings):
    agent = agent_for(corpus, registry, settings, [SEARCHES[0], {"answer": ["7.5 million"], "citations": []}],
                      max_calls=2)
    row = Trace("q", agent.config).consume(agent.run("What was the revenue?")).row()
    forced = [c["force_answer"] for c in agent.backend.calls]
    assert forced == [False, True]  # the last call a budget allows is reserved for the answer: 2 calls, not 3
    assert row["answer"] == ["7.5 million"]
    assert "stopped early: question budget of 2 model calls reached" in row["flags"]


def test_a_token_budget_counts_every_call(corpus, registry, settings):
    agent = agent_for(corpus, registry, settings, [*SEARCHES[:3], {"answer": ["x"], "citations": []}],
                      max_tokens=40)  # the scripted calls use 15 each
    row = Trace("q", agent.config).consume(agent.run("q")).row()
    assert [c["force_answer"] for c in agent.backend.calls] == [False, False, False, True]
    assert any("question budget of 40 tokens reached (45 used)" in f for f in row["flags"])


def test_a_session_budget_is_shared_across_questions_and_stops_before_a_call(corpus, registry, settings):
    session = Budget(max_calls=3, name="session")
    cited = {"answer": ["7.5 million"], "citations": [{"file": "report.pdf", "page": 1,  # on the page: no repair turn
                                                       "quote": "Revenue in 2024 was 7.5 million"}]}
    agent = agent_for(corpus, registry, settings, [{"search": "revenue"}, cited] * 3)
    first = Trace("q1", agent.config).consume(agent.run("q1", budget=session)).row()
    assert first["flags"] == [] and session.calls == 2
    agent.backend.script.pop(0)  # the second question's one call (the last the session allows) answers
    second = Trace("q2", agent.config).consume(agent.run("q2", budget=session)).row()
    assert agent.backend.calls[-1]["force_answer"] and second["answer"] == ["7.5 million"]
    assert "stopped early: session budget of 3 model calls reached" in second["flags"] and session.calls == 3
    third = Trace("q3", agent.config).consume(agent.run("q3", budget=session)).row()
    assert third["flags"] == ["stopped: session budget of 3 model calls reached; no model call made"]
    # no call was made: a failure the visitor sees (the row's error), not a refusal scored as wrong
    assert third["error"] == third["flags"][0] and not third["refusal"] and len(agent.backend.calls) == 3


def test_cost_budget_uses_the_reported_cost_and_is_thread_safe():
    budget = Budget(max_cost_usd=0.01)
    threads = [threading.Thread(target=lambda: [budget.charge(Usage(10, 5), 0.0001) for _ in range(25)])
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert budget.calls == 100 and budget.tokens == 1500 and round(budget.cost_usd, 6) == 0.01
    assert budget.exhausted == "question budget of $0.01 reached ($0.0100 spent)"
    budget.charge(Usage(), None)
    assert budget.unpriced_calls == 1


@pytest.mark.parametrize("options,match", [({"max_call": 3}, "unknown option max_call"),
                                           ({"max_calls": 0}, "at least 1"), ({"max_cost_usd": -1}, "positive")])
def test_bad_budget_options_are_refused(corpus, registry, settings, options, match):
    with pytest.raises(madqa.MadqaError, match=match):
        agent_for(corpus, registry, settings, [], **options)
