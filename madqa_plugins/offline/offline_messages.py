"""What the loop's messages tell the offline backend, which has no memory of its own: the queries it issued, how
many of its latest searches in a row showed no new page, and the pages it was shown (read from their text labels)."""

from __future__ import annotations

import json
import re
from typing import Any

_LABEL = re.compile(r"^File: (.+?), Page: (\d+)(?::|$)")  # a label, or an earlier page's "label: excerpt" line


def tool_name(tool: dict[str, Any]) -> str:
    """An offered tool's name, in either of the shapes tools are offered in."""
    return str(tool.get("function", {}).get("name", tool.get("name", "")))


def issued_queries(messages: list[dict[str, Any]]) -> list[str]:
    """The queries of every search the backend asked for so far, in order (a call it cannot read is skipped)."""
    out = []
    for m in messages:
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {})
            if fn.get("name") == "search_documents":
                try:
                    out.append(str(json.loads(fn.get("arguments") or "{}").get("query", "")))
                except ValueError:
                    continue
    return out


def fruitless_searches(messages: list[dict[str, Any]]) -> int:
    """How many of the latest searches in a row showed no new page (no labelled pages followed them)."""
    count = 0
    for m in reversed(messages):
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            return count
        if m.get("role") == "assistant" and m.get("tool_calls"):
            count += 1
    return count if any(m.get("tool_calls") for m in messages) else 0


def shown_pages(messages: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    """(file, page, rank within its search) of every page shown, in order, from the text labels
    (a page shown earlier comes back as a "label: excerpt" line; its text is read from the corpus)."""
    out: list[tuple[str, int, int]] = []
    seen: set[tuple[str, int]] = set()
    for m in messages:
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        rank = 0
        for part in m["content"]:
            if not (isinstance(part, dict) and part.get("type") == "text"):
                continue
            for line in str(part.get("text", "")).strip().splitlines():
                match = _LABEL.match(line.strip())
                if match and (match.group(1), int(match.group(2))) not in seen:
                    seen.add((match.group(1), int(match.group(2))))
                    out.append((match.group(1), int(match.group(2)), rank))
                    rank += 1
    return out
