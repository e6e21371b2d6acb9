"""The context policy: what of the earlier steps each model request carries.

A pure function (``build_messages``) from the step history to the next request's messages, the
same for every backend; backends never see these rules. By default a page image goes to the
model in full once, in the request right after the search (or ``show_pages`` call) that found
it; later requests carry the page as its label plus a short excerpt of its text around the query
terms, and the model can ask to see it again (``show_pages``, or the same search once more).
Options (``[options.context]``, ``--set context.KEY=VALUE``):

- ``images_kept`` (0): also re-send the images of this many earlier steps.
- ``max_images_per_request`` (0 = no limit): pages past the limit get their text instead.
- ``image_format`` (the ``MADQA_IMAGE_FORMAT`` setting): png, jpeg or webp.
- ``detail`` (not sent): ``low``, ``high`` or ``auto`` on each image, for providers that take it.
- ``excerpt_chars`` (240) and ``text_chars`` (4000): an excerpt's length, and the most page text
  sent in place of an image (a model without vision, or past the image limit).
- ``cache`` (``auto``): mark the re-sent prefix with ``cache_control`` for providers that bill a
  cached prefix for less when asked (Anthropic); ``on``, ``off``. The prefix stays byte-stable
  either way, so providers that cache prefixes themselves (OpenAI, Gemini 2.5) reuse it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from madqa.contract import ShownPage as ShownPage  # moved to the contract (madqa.ShownPage): kept here
from madqa.errors import SettingsError
from madqa.options import read_options

DEFAULTS: dict[str, Any] = {"images_kept": 0, "max_images_per_request": 0, "image_format": None, "detail": None,
                            "excerpt_chars": 240, "text_chars": 4000, "cache": "auto"}
CACHING_PROVIDERS = ("anthropic",)  # take cache_control marks (litellm translates them)
CACHE_MARK = {"type": "ephemeral"}
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class ContextOptions:
    """The policy's options, checked; build with ``ContextOptions.from_options``."""

    images_kept: int = 0
    max_images_per_request: int = 0
    image_format: str | None = None
    detail: str | None = None
    excerpt_chars: int = 240
    text_chars: int = 4000
    cache: str = "auto"

    @classmethod
    def from_options(cls, options: dict[str, Any] | None) -> ContextOptions:
        """From a config's ``context`` table; an unknown key or a bad value raises."""
        opts = read_options(options, DEFAULTS, "context")
        for name in ("images_kept", "max_images_per_request", "excerpt_chars", "text_chars"):
            if opts[name] < 0:
                raise SettingsError(f"context.{name} must be 0 or more, not {opts[name]}")
        if opts["image_format"] not in (None, "png", "jpeg", "webp"):
            raise SettingsError(f"context.image_format must be png, jpeg or webp, not {opts['image_format']!r}")
        if opts["detail"] not in (None, "low", "high", "auto"):
            raise SettingsError(f"context.detail must be low, high or auto, not {opts['detail']!r}")
        if opts["cache"] not in ("auto", "on", "off"):
            raise SettingsError(f"context.cache must be auto, on or off, not {opts['cache']!r}")
        return cls(**opts)

    def marks_cache(self, provider: str | None) -> bool:
        return self.cache == "on" or (self.cache == "auto" and provider in CACHING_PROVIDERS)


# --- the history: what happened, in order ------------------------------------------------------


@dataclass(frozen=True)
class ModelTurn:
    """What the model said: free text and its tool calls as (id, name, arguments as JSON text), and the
    fields its backend asked to be sent back with it (``ModelDecision.replay``)."""

    iteration: int
    text: str | None
    calls: tuple[tuple[str, str, str], ...] = ()
    replay: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class ToolTurn:
    """The text result of one tool call and the pages it displayed."""

    iteration: int
    call_id: str
    text: str
    pages: tuple[ShownPage, ...] = ()


@dataclass(frozen=True)
class NoteTurn:
    """A message from the loop to the model (e.g. "call a tool"), after a reply without tool calls."""

    iteration: int
    text: str


Turn = ModelTurn | ToolTurn | NoteTurn


# --- the policy -----------------------------------------------------------------------------------


def build_messages(system: str, question: str, history: Sequence[Turn], options: ContextOptions, *,
                   vision: bool = True, cache: bool = False, context: str | None = None) -> list[dict[str, Any]]:
    """The next request's messages (OpenAI chat form) from the question and the history so far.

    ``context`` (the earlier turns of a conversation, ``madqa.conversation``) goes as a user message
    before the question.

    Pages of the newest step (and of ``images_kept`` steps before it) go as images, up to
    ``max_images_per_request``, or as their text when ``vision`` is False or past the limit; every
    other page shown earlier goes as its label and an excerpt. With ``cache`` the system prompt and
    the last message that the next request will repeat unchanged carry a ``cache_control`` mark.
    """
    last = max((t.iteration for t in history if isinstance(t, ModelTurn)), default=0)
    fresh_from = last - options.images_kept
    forms = _page_forms(history, fresh_from, options, vision)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                      *([{"role": "user", "content": context}] if context else []),
                                      {"role": "user", "content": question}]
    pending: list[tuple[ShownPage, str]] = []  # the pages of the tool results just emitted
    stable_end: int | None = None  # index of the last message the next request repeats unchanged

    def flush() -> None:
        nonlocal stable_end
        if not pending:
            return
        if stable_end is None and any(form != "excerpt" for _, form in pending):
            stable_end = len(messages) - 1
        messages.append({"role": "user", "content": _page_parts(pending, options)})
        pending.clear()

    for n, turn in enumerate(history):
        if isinstance(turn, ModelTurn):
            flush()
            if turn.calls:
                messages.append({"role": "assistant", "content": turn.text or None, "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
                    for call_id, name, arguments in turn.calls], **dict(turn.replay)})
            else:
                messages.append({"role": "assistant", "content": turn.text or "", **dict(turn.replay)})
        elif isinstance(turn, ToolTurn):
            messages.append({"role": "tool", "tool_call_id": turn.call_id, "content": turn.text})
            pending.extend((page, forms[(n, i)]) for i, page in enumerate(turn.pages))
        else:
            flush()
            messages.append({"role": "user", "content": turn.text})
    flush()
    if cache:
        _mark(messages, 0)
        if stable_end is not None and stable_end > 1:
            _mark(messages, stable_end)
    return messages


def _page_forms(history: Sequence[Turn], fresh_from: int, options: ContextOptions,
                vision: bool) -> dict[tuple[int, int], str]:
    """How each displayed page goes this time: ``image``, ``text`` or ``excerpt``.

    Keys are (history index, page index); under ``max_images_per_request`` the newest step's pages
    get the images first, in the order they were found."""
    keys = [(n, i) for n, t in enumerate(history) if isinstance(t, ToolTurn) for i in range(len(t.pages))]
    keys.sort(key=lambda k: (-history[k[0]].iteration, k))
    forms: dict[tuple[int, int], str] = {}
    images = 0
    limit = options.max_images_per_request or None
    for n, i in keys:
        turn = history[n]
        assert isinstance(turn, ToolTurn)
        if turn.iteration < fresh_from:
            forms[(n, i)] = "excerpt"
        elif vision and turn.pages[i].image is not None and (limit is None or images < limit):
            forms[(n, i)] = "image"
            images += 1
        else:
            forms[(n, i)] = "text"
    return forms


def _page_parts(pages: list[tuple[ShownPage, str]], options: ContextOptions) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    excerpts: list[str] = []
    for page, form in pages:
        label = page.ref.label()
        if form == "image":
            parts += [{"type": "text", "text": label}, image_part(page.image or b"", page.mime, options.detail)]
        elif form == "text":
            body = clip(page.text, options.text_chars) or "(this page has no text)"
            parts.append({"type": "text", "text": f"{label}\n{body}"})
        else:
            found = excerpt(page.text, page.terms, options.excerpt_chars)
            excerpts.append(f"{label}: \"{found}\"" if found else f"{label}: (no text)")
    if excerpts:
        parts.append({"type": "text", "text": "Pages shown earlier (excerpts; call show_pages to see one again):\n"
                                              + "\n".join(excerpts)})
    return parts


def image_part(data: bytes, mime: str, detail: str | None = None) -> dict[str, Any]:
    """An OpenAI ``image_url`` part with a base64 data URL (litellm translates it per provider)."""
    url: dict[str, Any] = {"url": f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"}
    if detail:
        url["detail"] = detail
    return {"type": "image_url", "image_url": url}


def _mark(messages: list[dict[str, Any]], index: int) -> None:
    """Put a cache breakpoint on one message (a copy: the history is never changed)."""
    message = dict(messages[index])
    content = message.get("content")
    if message["role"] == "tool":
        message["cache_control"] = dict(CACHE_MARK)  # litellm puts it on the tool_result block
    elif isinstance(content, str):
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(CACHE_MARK)}]
    elif isinstance(content, list) and content:
        message["content"] = [*content[:-1], {**content[-1], "cache_control": dict(CACHE_MARK)}]
    messages[index] = message


# --- text of a page ---------------------------------------------------------------------------------


def query_terms(query: str) -> tuple[str, ...]:
    """The words of a search query, without operators and syntax, for excerpts."""
    return tuple(w for w in _WORD.findall(query) if w not in ("AND", "OR", "NOT") and len(w) > 1)


def clip(text: str, limit: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)].rstrip() + "…"


def excerpt(text: str, terms: Sequence[str], width: int = 240) -> str:
    """Up to ``width`` characters of ``text``: windows around the query terms it contains, else its start."""
    flat = " ".join((text or "").split())
    if not flat or width <= 0:
        return ""
    lowered = flat.lower()
    hits = sorted({p for t in terms if (p := lowered.find(t.lower())) >= 0})
    if not hits:
        return clip(flat, width)
    windows: list[tuple[int, int]] = []
    span = max(40, width // min(len(hits), 3))
    for p in hits[:3]:
        start, end = max(0, p - span // 3), min(len(flat), p - span // 3 + span)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    pieces = [("…" if s > 0 else "") + flat[s:e].strip() + ("…" if e < len(flat) else "") for s, e in windows]
    return clip(" ".join(pieces), width)
