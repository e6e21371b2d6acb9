"""Steer (a person beside the agent, ``madqa.ui.steer``): the calls a person is asked about, and the reply
with the person's calls in place of the model's. Pure functions of the decision and the person's reply."""

from __future__ import annotations

from dataclasses import replace

from madqa.tools import ANSWER
from madqa.types import ModelDecision, SteerReply, SteerStep, ToolCall


def proposal(decision: ModelDecision, iteration: int) -> tuple[ToolCall, ...]:
    """The calls a person is asked about: the model's readable calls, or its structured answer as a call."""
    if any(c.error for c in decision.tool_calls):
        return ()  # an unreadable call goes back to the model first (one repair turn)
    if decision.tool_calls:
        return tuple(decision.tool_calls)
    if isinstance(decision.answer, dict):
        return (ToolCall(ANSWER, dict(decision.answer), f"answer_{iteration}"),)
    return ()


def steered(decision: ModelDecision, proposed: tuple[ToolCall, ...], reply: SteerReply | None,
            iteration: int) -> tuple[ModelDecision, SteerStep]:
    """The decision with the person's calls in place of the model's, and the step recording it."""
    if reply is None or (reply.calls is None and reply.answer is None):
        return replace(decision, tool_calls=proposed, answer=None), SteerStep(iteration, "approve", proposed, proposed)
    if reply.answer is not None:
        calls: tuple[ToolCall, ...] = (ToolCall(ANSWER, dict(reply.answer), f"person_{iteration}"),)
        action = "answer"
    else:
        calls = tuple(ToolCall(c.name, dict(c.arguments), f"person_{iteration}_{n}")
                      for n, c in enumerate(reply.calls or ()))
        action = "edit" if [c.name for c in calls] == [c.name for c in proposed] else "replace"
    return replace(decision, tool_calls=calls, answer=None), SteerStep(iteration, action, proposed, calls)
