"""The loop's policies alone (madqa.loop.policies): pure functions of a run's Progress, no model, no pages.

The loop's behaviour end to end stays in test_agent.py and the provider tests; these pin each decision."""

from __future__ import annotations

from madqa.budget import Budget
from madqa.loop.policies import (
    IDLE_REPLIES,
    UNREADABLE_ANSWER,
    Progress,
    broken_calls,
    forcing,
    idle_reply,
    next_turn,
    no_call_left,
    tools_called,
    turn_usage,
    unanswered,
)
from madqa.loop.replies import answer_payload, cut_off, unread, with_text_calls
from madqa.loop.steering import proposal, steered
from madqa.types import ModelDecision, SteerReply, ToolCall, Usage

SEARCH = {"type": "function", "function": {"name": "search_documents", "parameters": {}}}


def at(iteration: int, last: int = 10, **flags: object) -> Progress:
    return Progress(last=last, iteration=iteration, **flags)  # type: ignore[arg-type]


def spent_calls() -> Budget:
    budget = Budget(max_calls=1)
    budget.charge(Usage(10, 5))
    return budget


def test_a_turn_counts_on_and_nothing_else_moves():
    assert next_turn(at(3, repaired_call=True)) == at(4, repaired_call=True)


def test_a_spent_budget_stops_the_first_call_and_the_answer_repair_but_forces_any_other():
    assert no_call_left([Budget()], at(1)) is None
    assert no_call_left([spent_calls()], at(1)).endswith("no model call made")
    assert no_call_left([spent_calls()], at(4, repaired_answer=True)).endswith("no call left to repair the answer")
    assert no_call_left([spent_calls()], at(4)) is None  # a later turn is forced to answer instead
    force, spent = forcing([spent_calls()], at(4))
    assert force and spent and "1" in spent


def test_the_last_step_forces_the_answer_and_no_budget_is_named():
    assert forcing([Budget()], at(9)) == (False, None)
    assert forcing([Budget()], at(10)) == (True, None)
    assert forcing([Budget()], at(3, last=3)) == (True, None)


def test_unreadable_calls_get_one_repair_turn_then_an_unreadable_answer_fails():
    broken = [ToolCall("submit_answer", {}, "c1", "Expecting value: line 1")]
    first = broken_calls(at(10), broken, force=True)
    assert first.action == "repair" and first.progress == at(10, last=11, repaired_call=True)
    second = broken_calls(first.progress, broken, force=True)
    assert second.action == "give up" and second.failure == f"{UNREADABLE_ANSWER}: Expecting value: line 1"
    # a broken search after the repair turn is answered as a tool error, not a failure
    assert broken_calls(first.progress, [ToolCall("search_documents", {}, "c2", "bad")], False).action == "none"
    # before the last step the repair turn does not move it
    assert broken_calls(at(2), broken, force=False).progress == at(2, repaired_call=True)
    assert broken_calls(at(2), [ToolCall("search_documents", {"query": "x"}, "c3")], False).action == "none"


def test_no_answer_on_the_answer_step_gets_one_repair_turn_then_fails():
    progress, failure = unanswered(at(10), "the reply was empty")
    assert failure is None and progress == at(10, last=11, repaired_answer=True)
    progress, failure = unanswered(progress, "the reply was empty")
    assert failure == "no answer could be read from the model's reply, even after a repair turn: the reply was empty"


def test_prose_replies_in_a_row_force_the_answer_and_a_tool_call_resets_them():
    progress = at(2)
    for n in range(1, IDLE_REPLIES):
        progress, note = idle_reply(progress, force=False)
        assert note is None and progress.idle == n and progress.last == 10
    progress, note = idle_reply(progress, force=False)
    assert progress.last == 3 and note == f"forced to answer after {IDLE_REPLIES} replies in a row that called no tool"
    assert idle_reply(at(10, idle=5), force=True) == (at(10, idle=6), None)  # already forced: no note
    assert tools_called(progress).idle == 0


def test_usage_is_estimated_only_when_the_reply_reports_none_and_a_budget_counts_tokens():
    reported = ModelDecision(text="hi", usage=Usage(100, 20))
    assert turn_usage(reported, [], [], None, [Budget(max_tokens=50)]) == (Usage(100, 20), False)
    silent = ModelDecision(text="hello there")
    assert turn_usage(silent, [], [], None, [Budget()]) == (Usage(), False)
    usage, estimated = turn_usage(silent, [{"role": "user", "content": "a question"}], [], None,
                                  [Budget(max_tokens=50)])
    assert estimated and usage.total_tokens > 0


def test_a_reply_is_read_for_its_answer_its_text_calls_and_why_it_is_no_answer():
    call = ModelDecision(text=None, tool_calls=(ToolCall("submit_answer", {"answer": ["4"]}, "a"),))
    assert answer_payload(call) == {"answer": ["4"]}
    text = ModelDecision(text='{"name": "search_documents", "arguments": {"query": "revenue"}}')
    read, note = with_text_calls(text, [SEARCH], 3)
    assert [c.name for c in read.tool_calls] == ["search_documents"] and read.tool_calls[0].id == "text_3_0"
    assert note == ("tool call(s) read from the reply's text: search_documents",)
    assert unread(ModelDecision(text="  "), ()) == "the reply was empty"
    assert unread(ModelDecision(text=None), read.tool_calls) == "the model called search_documents when it had to answer"
    assert cut_off(ModelDecision(text="x", finish_reason="stop")) is None
    assert "backend.max_tokens" in (cut_off(ModelDecision(text="x", finish_reason="length")) or "")


def test_a_person_approves_edits_or_answers_in_place_of_the_model():
    decision = ModelDecision(text=None, tool_calls=(ToolCall("search_documents", {"query": "a"}, "m1"),))
    proposed = proposal(decision, 2)
    assert steered(decision, proposed, None, 2)[1].action == "approve"
    edited, step = steered(decision, proposed, SteerReply(calls=(ToolCall("search_documents", {"query": "b"}),)), 2)
    assert step.action == "edit" and edited.tool_calls[0].id == "person_2_0"
    answered, step = steered(decision, proposed, SteerReply(answer={"answer": ["x"], "citations": []}), 2)
    assert step.action == "answer" and answered.tool_calls[0].name == "submit_answer"
    assert proposal(ModelDecision(text=None, tool_calls=(ToolCall("x", {}, "b", "bad json"),)), 2) == ()
