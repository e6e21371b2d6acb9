"""Messages and replies of the litellm backend: the history for a model without native tools
(JSON-in-text protocol), and the parts of a reply (text, tool-call arguments, search requests).
"""

from __future__ import annotations

import json
from typing import Any

import madqa

NO_VISION_NOTE = "[page image omitted: this model does not accept images]"
# The JSON-in-text protocol's instructions (madqa.TEXT_PROTOCOL). The backend may switch to this protocol
# mid-run (a server that refused ``tools``), so it adds them to the system message itself when missing.
JSON_PROTOCOL = madqa.TEXT_PROTOCOL
PROTOCOL_MARK = '{"search": "<query>"}'


# --- messages for a model without native tools -----------------------------------------------


def without_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with image parts replaced by a note (the labels stay)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list) and any(p.get("type") == "image_url" for p in content if isinstance(p, dict)):
            parts = [p for p in content if not (isinstance(p, dict) and p.get("type") == "image_url")]
            parts.append({"type": "text", "text": NO_VISION_NOTE})
            m = {**m, "content": parts}
        out.append(m)
    return out


def as_plain_text(messages: list[dict[str, Any]], force_answer: bool, vision: bool,
                  with_protocol: bool = True, tools: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """History without tool calls or tool messages, for a model that has no tools.

    Assistant tool calls become the JSON the model is asked to write; tool results become user
    text; consecutive user messages are merged (some providers want alternating roles). With
    ``with_protocol`` (the turn offers tools), the system message carries the JSON-in-text
    instructions for ``tools`` (added when not already there).
    """
    if with_protocol:
        messages = with_json_protocol(messages, tools)
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for m in messages if vision else without_images(messages):
        role = m.get("role")
        if role == "assistant" and m.get("tool_calls"):
            for call in m["tool_calls"]:
                names[call.get("id", "")] = call.get("function", {}).get("name", "")
            text = content_text(m.get("content")) or "\n".join(_call_as_json(c) for c in m["tool_calls"])
            out.append({"role": "assistant", "content": text})
        elif role == "tool":
            name = names.get(m.get("tool_call_id", ""), "tool")
            _append_user(out, f"Result of {name}:\n{content_text(m.get('content')) or ''}")
        elif role == "user":
            _append_user(out, m.get("content") or "")
        else:
            out.append({k: v for k, v in m.items() if k in ("role", "content", "name")})
    if force_answer:
        _append_user(out, 'This is the last step: answer now. Reply with only {"answer": ["..."], '
                          '"citations": [{"file": "...", "page": 1}]}.')
    return out


def with_json_protocol(messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The messages with the JSON-in-text instructions (for the tools offered: ``madqa.text_protocol``) in
    the system message (a copy; unchanged when they are there already)."""
    if any(PROTOCOL_MARK in (content_text(m.get("content")) or "") for m in messages if m.get("role") == "system"):
        return messages
    protocol = madqa.text_protocol(tools or ())
    out = list(messages)
    for n, m in enumerate(out):
        if m.get("role") == "system":
            content = m.get("content")
            if isinstance(content, list):
                out[n] = {**m, "content": [*content, {"type": "text", "text": protocol.strip()}]}
            else:
                out[n] = {**m, "content": f"{content or ''}{protocol}"}
            return out
    return [{"role": "system", "content": protocol.strip()}, *out]


def _call_as_json(call: dict[str, Any]) -> str:
    function = call.get("function", {})
    name = function.get("name", "")
    arguments, _ = parse_arguments(function.get("arguments"))
    if name == "search_documents" and "query" in arguments:
        return json.dumps({"search": arguments["query"]}, ensure_ascii=False)
    return json.dumps({"tool": name, "arguments": arguments}, ensure_ascii=False)


def _append_user(out: list[dict[str, Any]], content: Any) -> None:
    if out and out[-1].get("role") == "user":
        previous = out[-1]["content"]
        if isinstance(previous, str) and isinstance(content, str):
            out[-1] = {"role": "user", "content": f"{previous}\n\n{content}" if previous else content}
        else:
            out[-1] = {"role": "user", "content": _parts(previous) + _parts(content)}
    else:
        out.append({"role": "user", "content": content})


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return list(content)
    return [{"type": "text", "text": str(content)}] if content else []


# --- replies ---------------------------------------------------------------------------------


def content_text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a list; None when empty."""
    if isinstance(content, list):
        content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    if not isinstance(content, str) or not content.strip():
        return None
    return content


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments as a dict, repaired when possible; ``{"_raw": ...}`` and a note when not."""
    arguments, note, _ = read_arguments(raw)
    return arguments, note


def read_arguments(raw: Any) -> tuple[dict[str, Any], str | None, str | None]:
    """(arguments, note for the trajectory, error): ``error`` is set when they cannot be used at all,
    saying why (the JSON parser's own message), so the loop can ask the model to send them again."""
    if isinstance(raw, dict):
        return raw, None, None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None, None
    if not isinstance(raw, str):
        return {"_raw": repr(raw)}, f"arguments were a {type(raw).__name__}, not JSON text", \
            f"the arguments were a {type(raw).__name__}, not JSON text"
    try:
        value = json.loads(raw)
    except ValueError as exc:
        value = madqa.find_json_object(raw)
        if isinstance(value, dict):
            return value, f"arguments were not valid JSON ({exc}) and were repaired", None
        shown = raw if len(raw) <= 200 else raw[:199] + "…"
        return {"_raw": raw}, f"arguments were not valid JSON ({exc}); kept as _raw", \
            f"not valid JSON ({exc}) in {shown!r}"
    if isinstance(value, dict):
        return value, None, None
    return {"_raw": raw}, "arguments were JSON but not an object; kept as _raw", \
        f"the arguments were JSON but not an object: {raw[:200]!r}"
