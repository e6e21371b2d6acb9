"""Reading a litellm response into a ModelDecision: text, tool calls, the finish reason normalised, and
usage (counted, or estimated when the server sent none)."""

from __future__ import annotations

from typing import Any

import madqa
from madqa_plugins.litellm.litellm_messages import content_text, read_arguments
from madqa_plugins.litellm.litellm_options import whole

# Provider stop reasons -> the normalised ones (litellm maps most already; these are what may still come)
NORMAL_FINISH = {"stop": "stop", "end_turn": "stop", "stop_sequence": "stop", "tool_calls": "tool_calls",
                 "function_call": "tool_calls", "tool_use": "tool_calls", "length": "length",
                 "max_tokens": "length", "content_filter": "content_filter", "refusal": "content_filter",
                 "safety": "content_filter", "recitation": "content_filter", "prohibited_content": "content_filter"}


def read_reply(response: Any, request: dict[str, Any], notes: list[str], *, provider: str, call_no: int,
               cost: float | None) -> madqa.ModelDecision:
    """The decision in one litellm response to ``request``; ``notes`` (what the backend did) come first
    in ``raw["notes"]``. Text is reported as the model wrote it: tool calls written in it (the JSON-in-text
    protocol's, or a model's own shapes) are the loop's to read (madqa.tool_text)."""
    notes = list(notes)
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    finish_reason = getattr(choices[0], "finish_reason", None) if choices else None
    if message is None:
        notes.append("the model returned no message")
    text = content_text(getattr(message, "content", None)) if message is not None else None
    calls: list[madqa.ToolCall] = []
    for n, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        name = str(getattr(function, "name", "") or "")
        arguments, note, error = read_arguments(getattr(function, "arguments", None))
        if note:
            notes.append(f"{name or 'tool call'}: {note}")
        call_id = str(getattr(call, "id", "") or f"call_{call_no}_{n}")
        calls.append(madqa.ToolCall(name, {} if error else arguments, call_id, error))
    finish = finish_of(finish_reason, choices[0] if choices else None, response, bool(calls), notes)
    usage = getattr(response, "usage", None)
    counted = madqa.Usage(whole(getattr(usage, "prompt_tokens", 0)), whole(getattr(usage, "completion_tokens", 0)))
    estimated = counted.total_tokens == 0
    if estimated:
        counted = madqa.estimate_usage(request["messages"], request.get("tools"), text,
                                       [(c.name, c.arguments) for c in calls], provider)
        notes.append("the server sent no token counts: usage estimated (characters / 4, image tile rules)")
    raw: dict[str, Any] = {"finish_reason": finish_reason, "model": str(getattr(response, "model", "") or ""),
                           "provider": provider}
    if notes:
        raw["notes"] = notes
    return madqa.ModelDecision(text=text, tool_calls=tuple(calls), usage=counted, cost_usd=cost, raw=raw,
                               finish_reason=finish, estimated=estimated, replay=replayed(message))


def replayed(message: Any) -> dict[str, Any]:
    """The reply's signed thinking blocks (Anthropic extended thinking, as litellm gives them), to be sent
    back with its assistant message: with thinking on, a tool call's turn that lacks them is refused."""
    blocks = getattr(message, "thinking_blocks", None) if message is not None else None
    if not isinstance(blocks, list) or not blocks:
        return {}
    kept = [dict(b) for b in blocks if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")]
    return {"thinking_blocks": kept} if kept else {}


def finish_of(reason: Any, choice: Any, response: Any, called: bool, notes: list[str]) -> str | None:
    """The finish reason normalised (stop, tool_calls, length, content_filter; None when unknown), with
    the provider's own filter reason added to ``notes`` when it gave one."""
    native = (getattr(choice, "provider_specific_fields", None) or {}).get("native_finish_reason")
    finish = NORMAL_FINISH.get(str(reason).lower()) if reason else None
    if native and NORMAL_FINISH.get(str(native).lower()) in ("length", "content_filter"):
        finish = NORMAL_FINISH[str(native).lower()]
    if finish == "stop" and called:
        finish = "tool_calls"
    if finish == "content_filter":
        hidden = getattr(response, "_hidden_params", None) or {}
        ratings = hidden.get("vertex_ai_safety_results") or []
        blocked = [r.get("category") for group in ratings for r in (group if isinstance(group, list) else [group])
                   if isinstance(r, dict) and r.get("blocked")]
        named = native or ", ".join(str(b) for b in blocked if b) or reason
        notes.append(f"the provider's content filter stopped the reply ({named})")
    return finish
