"""Where a question's run stands, and the pure policies that move it: budgets, forcing, repair turns, idle replies.

Each policy takes a ``Progress`` (and what it judges) and returns what to do with a new ``Progress``; none
calls a model, draws a page or yields a step, so each is tested alone (tests/test_loop_policies.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from madqa.budget import Budget
from madqa.types import ModelDecision, ToolCall, Usage
from madqa.usage import estimate_usage

# A model that replies in prose again after being told to call a tool (local models answering in text)
# is asked for its answer next, instead of the same reply until max_steps (8 calls wasted at 10 steps)
IDLE_REPLIES = 2
UNREADABLE_ANSWER = "the submit_answer arguments could not be read, even after a repair turn"


@dataclass(frozen=True)
class Progress:
    """The counters and flags of one question's run that its policies read and return."""

    last: int  # the step that must answer: max_steps, moved by a repair turn or by idle replies
    iteration: int = 0
    repaired_call: bool = False  # the one turn that quotes unreadable tool arguments back was spent
    repaired_answer: bool = False  # the one turn that restates the answer format was spent
    repaired_verification: bool = False  # the one turn that asks for the answer as written on its page was spent
    idle: int = 0  # replies in a row that called no tool (nothing searched, nothing answered)


def next_turn(progress: Progress) -> Progress:
    return replace(progress, iteration=progress.iteration + 1)


def spent_budget(budgets: Sequence[Budget]) -> str | None:
    """The first budget that is used up, said as its own message; None while every one has room."""
    return next((b.exhausted for b in budgets if b.exhausted), None)


def no_call_left(budgets: Sequence[Budget], progress: Progress) -> str | None:
    """The failure when a spent budget leaves nothing to make a call with: the question's first call, or
    the call that would repair its answer (a budget is never overdrawn for it); None: a call may be made."""
    spent = spent_budget(budgets)
    if not spent or not (progress.iteration == 1 or progress.repaired_answer or progress.repaired_verification):
        return None
    made = "no model call made" if progress.iteration == 1 else "no call left to repair the answer"
    return f"stopped: {spent}; {made}"


def forcing(budgets: Sequence[Budget], progress: Progress) -> tuple[bool, str | None]:
    """Whether this turn must answer (the last step, or a budget spent or about to be), and the budget's
    message when a budget is the reason (it becomes the answer's ``stopped early`` flag)."""
    spent = spent_budget(budgets) or next((due for b in budgets if (due := b.answer_due)), None)
    return progress.iteration >= progress.last or spent is not None, spent


@dataclass(frozen=True)
class CallRepair:
    """What to do with a reply some of whose tool calls could not be read."""

    action: Literal["repair", "give up", "none"]
    progress: Progress
    failure: str | None = None  # for ``give up``: the question's failure


def broken_calls(progress: Progress, calls: Sequence[ToolCall], force: bool) -> CallRepair:
    """One repair turn quotes the parse errors back (on the answer step it moves the last step one on);
    when that turn did not help and submit_answer is still unreadable, the question fails."""
    broken = [c for c in calls if c.error]
    if broken and not progress.repaired_call:
        last = max(progress.last, progress.iteration + 1) if force else progress.last
        return CallRepair("repair", replace(progress, repaired_call=True, last=last))
    unreadable = next((c.error for c in broken if c.name == "submit_answer"), None)
    if unreadable is not None:
        return CallRepair("give up", progress, f"{UNREADABLE_ANSWER}: {unreadable}")
    return CallRepair("none", progress)


def unanswered(progress: Progress, why: str) -> tuple[Progress, str | None]:
    """A reply on the answer step with no answer in it: one short turn restating the format (the last
    step one on), then the question's failure (second item; None while the repair turn is granted)."""
    if progress.repaired_answer:
        return progress, f"no answer could be read from the model's reply, even after a repair turn: {why}"
    return replace(progress, repaired_answer=True, last=progress.iteration + 1), None


def verification_repair(progress: Progress, unverified: bool, spent: str | None) -> Progress | None:
    """One repair turn for an answer not as MADQA asks (an item on no page seen, in another scale, too long):
    the next step must answer (a call like any other, so never when a budget is spent or due). None: no turn."""
    if progress.repaired_verification or not unverified or spent is not None:
        return None
    return replace(progress, repaired_verification=True, last=progress.iteration + 1)


def idle_reply(progress: Progress, force: bool) -> tuple[Progress, str | None]:
    """A reply that called no tool; after ``IDLE_REPLIES`` in a row the next step must answer (and the run's
    note says why, second item)."""
    idle = progress.idle + 1
    if idle >= IDLE_REPLIES and not force:
        note = f"forced to answer after {idle} replies in a row that called no tool"
        return replace(progress, idle=idle, last=min(progress.last, progress.iteration + 1)), note
    return replace(progress, idle=idle), None


def tools_called(progress: Progress) -> Progress:
    """A reply that called a tool ends a run of idle replies."""
    return replace(progress, idle=0)


def turn_usage(decision: ModelDecision, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               provider: str | None, budgets: Sequence[Budget]) -> tuple[Usage, bool]:
    """What a model call is charged (its usage, and whether that is an estimate): a reply that reports no
    tokens is estimated from what was sent and received when a budget counts tokens."""
    if decision.usage.total_tokens or not any(b.counts_tokens for b in budgets):
        return decision.usage, decision.estimated
    calls_made = [(c.name, c.arguments) for c in decision.tool_calls]
    return estimate_usage(messages, tools, decision.text, calls_made, provider), True
