"""The answer's own mark in the chat, apart from its quote's: what ``madqa.verification`` found of its items."""

from __future__ import annotations

from collections.abc import Callable

from madqa.types import AnswerStep


def answer_badge(step: AnswerStep, escape: Callable[[str], str] = str) -> str:
    """The answer's own mark: ✓ when every item is written on a page seen (and which), ✗ when one is not;
    ``escape`` makes a file name safe where the mark is shown (Markdown in the chat)."""
    if step.verified is None:
        return ""
    if step.verified:
        refs = list(dict.fromkeys(c.page for c in step.checks if c.page))
        one_file = len({r.file for r in refs}) == 1
        pages = ", ".join(f"p. {r.page}" if one_file else f"{escape(r.file)} p. {r.page}" for r in refs)
        return f"✓ answer found on {pages}"
    missing = [c for c in step.checks if not c.verified]
    if any(c.verdict == "long" for c in missing):
        return "✗ answer too long to be a short answer from the page (see the flags)"
    if any(c.verdict == "scale" for c in missing):
        return "✗ answer not written so on the page: it is in another scale or unit (see the flags)"
    return "✗ answer not on the cited page, nor on any page the agent saw"
