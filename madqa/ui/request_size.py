"""What one request may carry (issue 39, item 4): a 20 MB chat turn cost 41 s of server work and was echoed
back in full, though the question beside it is capped at 2,000 characters. Two checks, both before any work:

- ``RequestGuard`` (``madqa.ui.limits``) refuses an event whose body is over ``MAX_EVENT_MB`` before Gradio
  reads it (413, in the JSON Gradio's page reads);
- ``history_refusal`` says why Ask refuses a chat history past its message count, one message's size or the total, before
  Ask resolves a config or takes a job slot.

A real chat stays far below: a question with its summary, its steps and its answer is a few dozen messages of
a few KB each.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

MAX_EVENT_MB = 4  # one event's request body (the question, the chat history, the config panel's fields)
MAX_HISTORY_MESSAGES = 1_000  # messages of the chat history sent with a question
MAX_MESSAGE_CHARS = 100_000  # one message of it, as JSON
MAX_HISTORY_CHARS = 1_000_000  # all of them, as JSON


def message_chars(message: Any) -> int:
    """A message's size as the characters of its JSON (its text, its metadata, any file it names)."""
    if isinstance(message, str):
        return len(message)
    try:
        return len(json.dumps(message, ensure_ascii=False, default=str))
    except (TypeError, ValueError, RecursionError):  # not JSON-shaped: its text says as much as it can
        return len(str(message))


def history_refusal(history: Sequence[Any] | None) -> str | None:
    """Why a chat history is refused: past ``MAX_HISTORY_MESSAGES`` messages, a message over
    ``MAX_MESSAGE_CHARS`` or a total over ``MAX_HISTORY_CHARS``; None for an empty or a real chat."""
    if not history:
        return None
    if not isinstance(history, (list, tuple)):
        return "The chat history must be a list of messages."
    if len(history) > MAX_HISTORY_MESSAGES:
        return (f"A chat may have at most {MAX_HISTORY_MESSAGES:,} messages before a question; this one "
                f"has {len(history):,}. Start a new chat.")
    total = 0
    for number, message in enumerate(history, start=1):
        size = message_chars(message)
        if size > MAX_MESSAGE_CHARS:
            return (f"Message {number:,} of the chat has {size:,} characters; a message may have at "
                    f"most {MAX_MESSAGE_CHARS:,}.")
        total += size
        if total > MAX_HISTORY_CHARS:
            return (f"The chat's messages have more than {MAX_HISTORY_CHARS:,} characters together; "
                    "start a new chat.")
    return None
