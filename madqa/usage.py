"""Token usage when a server sends none: an estimate, flagged as one (``ModelDecision.estimated``).

Text: characters / 4. Images: the provider's published tile rule (madqa.image_tokens) on each image's
real pixel size; an image whose size cannot be read counts ``UNKNOWN_IMAGE_TOKENS``. Budgets stay
bounded (a token budget with no counts would otherwise never be spent); a bill is never taken from here.
One estimate for every backend: the litellm backend's (a server that sent no counts) and the loop's
(a backend that reports none).
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Sequence
from typing import Any

from madqa.image_tokens import provider_image_tokens
from madqa.types import Usage

CHARS_PER_TOKEN = 4
UNKNOWN_IMAGE_TOKENS = 1000


def text_tokens(text: str | None) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN if text else 0


def image_tokens(url: str, provider: str | None) -> int:
    """Tokens of one ``data:`` URL image under ``provider``'s rule; an image whose size cannot be read (not
    base64, not an image, a declared size past Pillow's bomb limit) counts as ``UNKNOWN_IMAGE_TOKENS``, an
    estimate like every other here (the usage is marked estimated), never 0."""
    from PIL import Image

    try:
        data = base64.b64decode(url.partition("base64,")[2])
        with Image.open(io.BytesIO(data)) as image:  # reads the header only
            width, height = image.size
    except (ValueError, OSError, Image.DecompressionBombError):  # binascii.Error is a ValueError
        return UNKNOWN_IMAGE_TOKENS
    return provider_image_tokens(width, height, provider)


def prompt_tokens(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None,
                  provider: str | None) -> int:
    """An estimate of a request's prompt tokens: its text, its tool schemas and its images."""
    total = text_tokens(json.dumps(tools)) if tools else 0
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            total += text_tokens(content)
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "image_url":
                total += image_tokens(str((part.get("image_url") or {}).get("url", "")), provider)
            else:
                total += text_tokens(str(part.get("text") or ""))
        if m.get("tool_calls"):
            total += text_tokens(json.dumps(m["tool_calls"]))
    return total


def completion_tokens(text: str | None, calls: Sequence[tuple[str, Any]]) -> int:
    """An estimate of a reply's tokens: its text and its tool calls' names and arguments."""
    return text_tokens(text) + sum(text_tokens(name) + text_tokens(json.dumps(args, default=str))
                                   for name, args in calls)


def estimate_usage(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None, reply: str | None,
                   calls: Sequence[tuple[str, Any]] = (), provider: str | None = None) -> Usage:
    """An estimate of one call's usage: the request's text, tool schemas and images; the reply's text and calls."""
    return Usage(prompt_tokens(messages, tools, provider), completion_tokens(reply, calls))
