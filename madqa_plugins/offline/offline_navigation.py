"""The offline baseline's navigation, when a config offers the navigation tools: after a search, read the
outline of the document its best page is in, open the section whose title shares the question's rarest
words, then turn to the next pages (a person's way through a manual: table of contents, chapter, page)."""

from __future__ import annotations

import json
import re
from typing import Any

import madqa
from madqa_plugins.offline.offline_spans import Question, stem, words

_ENTRY = re.compile(r"^\s*- (.+) \(page (\d+)\)$")
_PAGES = re.compile(r"^Outline of .+ \((\d+) pages;")


def _calls(messages: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(id, name, arguments) of every tool call made so far."""
    out = []
    for m in messages:
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {})
            try:
                arguments = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                arguments = {}
            out.append((str(call.get("id", "")), str(fn.get("name", "")), arguments if isinstance(arguments, dict) else {}))
    return out


def _result(messages: list[dict[str, Any]], call_id: str) -> str:
    return next((str(m.get("content") or "") for m in messages
                 if m.get("role") == "tool" and m.get("tool_call_id") == call_id), "")


def best_section(outline: str, q: Question, weights: dict[str, float]) -> tuple[str, int, float] | None:
    """(title, page, score) of the outline entry whose title holds the most of the question's weighted
    words (the deeper entry on a tie: it is the more specific); None when no title shares a word."""
    best: tuple[str, int, float, int] | None = None
    wanted = set(q.stems)
    for line in outline.splitlines():
        match = _ENTRY.match(line)
        if not match:
            continue
        title, page = match.group(1), int(match.group(2))
        score = sum(weights.get(s, 1.0) for s in {stem(w) for w in words(title)} & wanted)
        depth = len(line) - len(line.lstrip())
        if score > 0 and (best is None or (score, depth) > (best[2], best[3])):
            best = (title, page, score, depth)
    return None if best is None else best[:3]


def navigate(messages: list[dict[str, Any]], offered: set[str], q: Question, weights: dict[str, float],
             shown: list[tuple[str, int, int]], best_file: str | None, n: int) -> madqa.ToolCall | None:
    """The next navigation call, or None (not offered, nothing searched yet, or done for this question)."""
    if not {"document_outline", "open_page"} <= offered or not shown:
        return None
    calls = _calls(messages)
    outlined = [(cid, args) for cid, name, args in calls if name == "document_outline"]
    opened = [args for _, name, args in calls if name == "open_page"]
    if not outlined:
        file = best_file or shown[0][0]
        return madqa.ToolCall("document_outline", {"file": file}, f"offline_{n}")
    if not opened:
        call_id, args = outlined[-1]
        found = best_section(_result(messages, call_id), q, weights)
        seen = {(f, p) for f, p, _ in shown}
        if found is None or (args.get("file"), found[1]) in seen:
            return None
        return madqa.ToolCall("open_page", {"file": args.get("file"), "page": found[1]}, f"offline_{n}")
    pages = _PAGES.match(_result(messages, outlined[-1][0]))
    last = opened[-1]
    if "next_pages" in offered and not any(name == "next_pages" for _, name, _ in calls) \
            and (pages is None or int(last.get("page") or 0) < int(pages.group(1))):
        return madqa.ToolCall("next_pages", {"file": last.get("file"), "page": last.get("page"), "count": 2},
                              f"offline_{n}")
    return None
