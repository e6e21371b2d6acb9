"""The answer a reply holds, read and checked: citations resolved against the pages seen and the corpus, quotes
looked for on their pages, and each answer item looked for on the pages (``madqa.verification``) — an item
found on another page seen moves its citation there. Pure functions of the payload, the corpus and the search."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from madqa.answer import PageBook, check_quotes, parse_answer, read_passages, resolve_citations
from madqa.contract import SearchState
from madqa.errors import MadqaError
from madqa.refusals import refusal_items
from madqa.types import AnswerStep, ItemCheck, PageRef
from madqa.verification import check_answer, item_flag


def read_answer(iteration: int, payload: Any, corpus: PageBook, search: SearchState) -> AnswerStep | None:
    """The answer in ``payload`` with its citations, quotes and items checked; None when it holds no answer
    object. An answer whose every item reads as a refusal ("Not found in the documents") is a refusal."""
    parsed = parse_answer(payload)
    if parsed is None:
        return None
    answer, raw, parse_flags = parsed
    flags = list(parse_flags)
    if answer and refusal_items(answer):
        flags.append(f"the answer reads as a refusal: {answer[0][:80]!r}")
        answer, raw = [], []
    cited = resolve_citations(raw, corpus, search.seen)
    quotes = check_quotes(cited, corpus)
    checks = check_answer(answer, cited.refs, seen_in_order(search), lambda ref: _text(corpus, ref))
    refs, quoted, found = moved_citations(cited.refs, quotes.quotes, quotes.found, checks)
    flags += [*cited.flags, *quotes.flags, *(f for c in checks if (f := item_flag(c)))]
    passages = () if answer else read_passages(payload, corpus, search.seen)
    return AnswerStep(iteration, tuple(answer), refs, tuple(raw), tuple(flags), not answer, quoted, found,
                      closest_passages=passages, checks=checks)


def seen_in_order(search: SearchState) -> list[PageRef]:
    """The pages the agent saw: in the order its searches found them, then those its other tools showed."""
    out = list(dict.fromkeys(hit.ref for hits in search.hits for hit in hits if hit.ref in search.seen))
    return out + sorted(search.seen - set(out), key=lambda r: (r.file, r.page))


def moved_citations(refs: Sequence[PageRef], quotes: Sequence[str | None], found: Sequence[bool | None],
                    checks: Sequence[ItemCheck]) -> tuple[tuple[PageRef, ...], tuple[str | None, ...],
                                                         tuple[bool | None, ...]]:
    """The citations with each page an item moved to added (no quote of its own), and a cited page that holds no
    item and no quote found on it dropped when an item moved: the model cited the wrong page."""
    moved = [c.page for c in checks if c.verdict == "moved" and c.page is not None]
    if not moved:
        return tuple(refs), tuple(quotes), tuple(found)
    holding = {c.page for c in checks if c.verdict == "cited"}
    kept = [n for n, ref in enumerate(refs) if ref in holding or (n < len(found) and found[n])]
    new = [ref for ref in dict.fromkeys(moved) if ref not in {refs[n] for n in kept}]
    return (tuple(refs[n] for n in kept) + tuple(new), tuple(quotes[n] for n in kept if n < len(quotes)) + (None,) * len(new),
            tuple(found[n] for n in kept if n < len(found)) + (None,) * len(new))


def _text(corpus: PageBook, ref: PageRef) -> str:
    try:
        return corpus.page_text(ref.file, ref.page) or ""
    except MadqaError:  # a damaged page store: a page whose text cannot be read holds no answer that can be checked
        return ""
