"""Answers of prediction rows checked on their pages after the fact (``madqa eval --corpus DIR``): rows written
before answers were checked, or by another tool, get the ``answer_check`` the loop gives rows today."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from madqa.errors import MadqaError
from madqa.types import PageRef
from madqa.verification import check_answer


def seen_pages(row: Mapping[str, Any]) -> list[PageRef]:
    """The pages a row's trajectory shows were seen: each search's new pages and each tool's, in order."""
    out: list[PageRef] = []
    for step in row.get("trajectory") or ():
        if isinstance(step, Mapping) and step.get("type") in ("search", "tool"):
            for page in step.get("new_pages") or ():
                if isinstance(page, Mapping) and isinstance(page.get("page"), int):
                    out.append(PageRef(str(page.get("file")), page["page"]))
    return list(dict.fromkeys(out))


def checked_row(row: dict[str, Any], corpus: Any, again: bool = False) -> dict[str, Any]:
    """``row`` with an ``answer_check`` made on ``corpus``'s page texts (kept as it is when it has one and not
    ``again``). Cited pages count as seen: a row from another tool may have no trajectory."""
    if isinstance(row.get("answer_check"), Mapping) and not again:
        return row
    answer = row.get("answer")
    items = [str(a) for a in answer] if isinstance(answer, list) else ([str(answer)] if answer else [])
    cited = [PageRef(str(c.get("file")), c["page"]) for c in row.get("citations") or ()
             if isinstance(c, Mapping) and isinstance(c.get("page"), int)]
    seen = list(dict.fromkeys([*seen_pages(row), *cited]))

    def text(ref: PageRef) -> str:
        try:
            return corpus.page_text(ref.file, ref.page) if corpus.has_page(ref.file, ref.page) else ""
        except MadqaError:
            return ""

    checks = check_answer(items, cited, seen, text)
    verified = all(c.verified for c in checks) if checks else None
    return {**row, "answer_check": {"verified": verified, "items": [c.to_dict() for c in checks]}}
