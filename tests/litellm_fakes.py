"""Helpers for the litellm backend's tests against the fake servers: a backend aimed at a fake, and the
history of a question's second step (a search call, its result, a page image). Not a test by itself."""

from __future__ import annotations

import io
import json
from typing import Any

from madqa import TEXT_PROTOCOL
from madqa.agent import ANSWER_TOOL, SEARCH_TOOL, SYSTEM_PROMPT, image_part
from madqa_plugins.litellm.litellm_backend import LiteLLMBackend
from tests import fake_providers as fp

TOOLS = [SEARCH_TOOL, ANSWER_TOOL]
KEY = "sk-test-SECRET123"


def page_png(width: int = 850, height: int = 1100) -> bytes:
    """A real PNG of a page's size (the fakes read its header; the usage estimate its pixel size)."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("L", (width, height), 255).save(out, format="PNG")
    return out.getvalue()


def history(images: int = 1, text_protocol: bool = False) -> list[dict[str, Any]]:
    """The messages of a question's second step: a search call, its result, ``images`` page images."""
    png = page_png()
    labels: list[dict[str, Any]] = []
    for n in range(1, images + 1):
        labels += [{"type": "text", "text": f"File: report.pdf, Page: {n}"}, image_part(png, "image/png")]
    return [
        {"role": "system", "content": SYSTEM_PROMPT + (TEXT_PROTOCOL if text_protocol else "")},
        {"role": "user", "content": fp.QUESTION},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "search_documents", "arguments": json.dumps({"query": "revenue"})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": f"Found {images} pages; shown below"},
        *([{"role": "user", "content": labels}] if labels else []),
    ]


def backend(provider: fp.FakeProvider, sleeps: list[float] | None = None, **options: Any) -> LiteLLMBackend:
    """The litellm backend aimed at ``provider`` (its api_base), sleeping into ``sleeps``."""
    record = sleeps if sleeps is not None else []
    return LiteLLMBackend(provider.model, {"api_base": provider.url, "api_key": KEY, "sleep": record.append,
                                           "retry_base_delay": 0.01, **options})


def sent_tools(request: dict[str, Any]) -> bool:
    """Whether a request the fake received carried tools (any wire format)."""
    body = request["body"] or {}
    return bool(body.get("tools"))


def system_text(kind: str, request: dict[str, Any]) -> str:
    """The system prompt a fake received, as text."""
    body = request["body"] or {}
    if kind == "anthropic":
        system = body.get("system")
        return json.dumps(system)
    if kind == "gemini":
        return json.dumps(body.get("systemInstruction") or body.get("system_instruction"))
    return json.dumps([m.get("content") for m in body.get("messages") or [] if m.get("role") == "system"])
