"""What is read from a model's reply: tool calls written in its text, the answer object, why none was
there, a cut-off, and what the backend asked to be sent back. Pure functions of a ``ModelDecision``."""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from madqa.answer import ANSWER_KEYS, CITATION_KEYS, parse_answer
from madqa.errors import MadqaError
from madqa.tool_text import read_tool_calls, strip_reasoning
from madqa.types import ModelDecision, ToolCall


def answer_payload(decision: ModelDecision) -> Any:
    """The answer object in a decision: structured answer, submit_answer call, or JSON in text."""
    if decision.answer is not None:
        return decision.answer
    for call in decision.tool_calls:
        if call.name == "submit_answer":
            return call.arguments
    text = reply_text(decision)
    if not decision.tool_calls and text and parse_answer(text) is not None:
        return text
    return None


def replay(decision: ModelDecision) -> tuple[tuple[str, Any], ...]:
    """What the backend asked to be sent back with this reply's turn (``ModelDecision.replay``)."""
    return tuple(decision.replay.items())


def reply_text(decision: ModelDecision) -> str:
    """The reply's text without reasoning blocks (``<think>...``)."""
    return strip_reasoning(decision.text or "").strip()


def with_text_calls(decision: ModelDecision, tools: list[dict[str, Any]],
                    iteration: int) -> tuple[ModelDecision, tuple[str, ...]]:
    """The decision with tool calls written in its text (JSON, fences, ``<tool_call>`` tags, ...) as calls.

    Only for a reply with no native calls and no structured answer; only tools offered this turn."""
    if decision.tool_calls or decision.answer is not None or not decision.text:
        return decision, ()
    names = [t["function"]["name"] for t in tools]
    found = read_tool_calls(decision.text, names)
    if not found:
        return decision, ()
    calls = tuple(ToolCall(c.name, dict(c.arguments), f"text_{iteration}_{n}", c.error)  # ids unique in the conversation
                  for n, c in enumerate(found))
    shown = ", ".join(c.name for c in calls)
    return replace(decision, tool_calls=calls), (f"tool call(s) read from the reply's text: {shown}",)


def unread(decision: ModelDecision, calls: Sequence[ToolCall]) -> str:
    """Why a reply on the answer step holds no answer, in a few words."""
    answers = [c for c in calls if c.name == "submit_answer"]
    if answers:  # called, but under keys no reader knows
        args = answers[0].arguments
        keys = ", ".join(sorted(map(str, args))) if isinstance(args, dict) and args else "none"
        known = "/".join(ANSWER_KEYS + CITATION_KEYS)
        return (f"the model called submit_answer, but its arguments held no answer under any known key "
                f"({known}); they had: {keys}")
    if calls:
        names = ", ".join(sorted({c.name for c in calls}))
        return f"the model called {names} when it had to answer"
    text = reply_text(decision)
    if not text:
        return "the reply was empty"
    shown = text if len(text) <= 80 else text[:77] + "..."
    return f"the reply was not an answer object: {shown!r}"


def cut_off(decision: ModelDecision) -> str | None:
    """The failure of a reply cut off by the output limit or withheld by a content filter; None for any other."""
    if decision.finish_reason not in ("content_filter", "length"):
        return None
    said = "; ".join(str(n) for n in (decision.raw or {}).get("notes") or ())
    if decision.finish_reason == "content_filter":
        return ("the provider's content filter withheld or cut the reply (finish_reason content_filter)"
                + (f": {said}" if said else "") + "; the question was not answered")
    return ("the reply was cut off at the model's output limit (finish_reason length); raise it with "
            "--set backend.max_tokens=N (e.g. 4096)")


def backend_notes(decision: ModelDecision) -> tuple[str, ...]:
    """What the backend noticed in the reply (``raw["notes"]``: arguments repaired, no message, ...)."""
    return tuple(str(n) for n in (decision.raw or {}).get("notes") or ())


def describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, MadqaError) else f"{type(exc).__name__}: {exc}"


def traceback_text(exc: BaseException) -> str:
    """The error and its traceback, for the trajectory (the plugin's author reads it there)."""
    return "".join(traceback.format_exception(exc)).strip()[-4000:]
