"""Parse and repair a model's final answer, and check its citations against what the agent saw."""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Protocol

from madqa.types import PageRef

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
_PAGE_NUMBER = re.compile(r"-?\d+")
MAX_QUOTE_CHARS = 400  # a sentence or a table row; longer quotes are cut (and flagged)
_NOT_ALNUM = re.compile(r"[\W_]+")
MAX_JSON_SCAN_CHARS = 200_000  # a model's reply is searched for JSON up to here
_MAX_BRACE_STARTS = 8  # unclosed braces skipped before giving up: bounded work on hostile text
_BRACE_OR_QUOTE = re.compile(r"[{}\"']")
_STRING_REST = {q: re.compile(rf"(?:[^{q}\\]|\\.)*+{q}", re.S) for q in "\"'"}


class PageBook(Protocol):
    """What citation checking needs of a corpus."""

    documents: dict[str, Any]

    def has_page(self, file: str, page: int) -> bool: ...


def find_json_object(text: str) -> Any:
    """The first JSON (or Python-literal) object in ``text``: fenced blocks first, then braces.

    Returns None when nothing parses. Repairs single quotes and trailing commas. Bounded work: the
    first ``MAX_JSON_SCAN_CHARS`` are read and at most ``_MAX_BRACE_STARTS`` unclosed braces retried.
    """
    text = text[:MAX_JSON_SCAN_CHARS]
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    start = text.find("{")
    for _ in range(_MAX_BRACE_STARTS):
        if start == -1:
            break
        end = _matching_brace(text, start)
        if end is not None:
            candidates.append(text[start:end + 1])
            break
        start = text.find("{", start + 1)
    for raw in candidates:
        raw = raw.strip()
        for attempt in (raw, re.sub(r",\s*([}\]])", r"\1", raw)):
            try:
                return json.loads(attempt)
            except (ValueError, RecursionError):
                pass
            try:
                return ast.literal_eval(attempt)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):  # TypeError: {{}}
                pass
    return None


def _matching_brace(text: str, start: int) -> int | None:
    """Index of the brace closing the one at ``start``, skipping quoted strings; None if unclosed."""
    depth, pos = 0, start
    while (m := _BRACE_OR_QUOTE.search(text, pos)) is not None:
        ch = m.group()
        if ch in "\"'":
            closed = _STRING_REST[ch].match(text, m.end())
            if closed is None:
                return None
            pos = closed.end()
            continue
        depth += 1 if ch == "{" else -1
        if depth == 0:
            return m.start()
        pos = m.end()
    return None


def normalize_answer(value: Any) -> tuple[list[str], list[str]]:
    """A list of short strings from whatever the model gave; returns (answer, repair flags)."""
    flags: list[str] = []
    if value is None:
        return [], flags
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        flags.append("answer given as a single value, wrapped in a list")
        value = [value]
    if not isinstance(value, (list, tuple)):
        flags.append(f"answer of type {type(value).__name__} ignored")
        return [], flags
    answer = []
    for item in value:
        if item is None:
            continue
        text = item if isinstance(item, str) else json.dumps(item) if isinstance(item, (dict, list)) else str(item)
        text = " ".join(text.split())
        if text:
            answer.append(text)
    return answer, flags


def normalize_citations(value: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Citations as ``[{"file": str, "page": int}]``; unusable entries are flagged and skipped."""
    flags: list[str] = []
    if value is None:
        return [], flags
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, (list, tuple)):
        return [], [f"citations of type {type(value).__name__} ignored"]
    out = []
    for item in value:
        if not isinstance(item, dict):
            flags.append(f"citation {item!r} is not an object")
            continue
        file = item.get("file", item.get("document", item.get("filename")))
        page = item.get("page", item.get("page_number"))
        if isinstance(page, str):
            match = _PAGE_NUMBER.search(page)
            page = int(match.group()) if match else None
        elif isinstance(page, float) and page.is_integer():
            page = int(page)
        if not isinstance(file, str) or not file.strip() or not isinstance(page, int) or isinstance(page, bool):
            flags.append(f"citation {item!r} has no usable file and page")
            continue
        citation: dict[str, Any] = {"file": file.strip(), "page": page}
        quote = item.get("quote", item.get("evidence"))
        if isinstance(quote, str) and quote.strip():
            quote = " ".join(quote.split())
            if len(quote) > MAX_QUOTE_CHARS:
                flags.append(f"quote for {citation['file']} p.{page} cut to {MAX_QUOTE_CHARS} characters")
                quote = quote[:MAX_QUOTE_CHARS]
            citation["quote"] = quote
        elif quote is not None and not isinstance(quote, str):
            flags.append(f"quote of type {type(quote).__name__} for {citation['file']} p.{page} ignored")
        out.append(citation)
    return out, flags


def parse_answer(payload: Any) -> tuple[list[str], list[dict[str, Any]], list[str]] | None:
    """(answer, raw citations, flags) from a tool-call argument dict, a dict, or text holding JSON.

    None when the payload holds no answer object at all.
    """
    flags: list[str] = []
    if isinstance(payload, str):
        parsed = find_json_object(payload)
        if parsed is None:
            return None
        payload = parsed
    if isinstance(payload, list):
        payload = {"answer": payload}
    if not isinstance(payload, dict) or not ({"answer", "answers", "citations"} & set(payload)):
        return None
    answer, f1 = normalize_answer(payload.get("answer", payload.get("answers")))
    citations, f2 = normalize_citations(payload.get("citations"))
    return answer, citations, flags + f1 + f2


def validate_citations(raw: list[dict[str, Any]], corpus: PageBook,
                       seen: set[PageRef]) -> tuple[list[PageRef], list[str]]:
    """The citations that name a real, seen page, de-duplicated; flags say what was dropped and why.

    A file named by its bare name (as MADQA files are) is matched when that name is unique.
    """
    by_name = _names(corpus)
    valid: list[PageRef] = []
    flags: list[str] = []
    for item in raw:
        file, page = _resolve(item["file"], corpus, by_name), item["page"]
        if file is None:
            flags.append(f"cited file {item['file']!r} is not in the corpus")
            continue
        if not corpus.has_page(file, page):
            flags.append(f"cited page {page} of {file} does not exist")
            continue
        ref = PageRef(file, page)
        if ref not in seen:
            flags.append(f"cited {ref.label()} was never shown to the model")
            continue
        if ref not in valid:
            valid.append(ref)
    return valid, flags


def _names(corpus: PageBook) -> dict[str, list[str]]:
    by_name: dict[str, list[str]] = {}
    for file in corpus.documents:
        by_name.setdefault(PurePosixPath(file).name, []).append(file)
    return by_name


def _resolve(file: str, corpus: PageBook, by_name: dict[str, list[str]]) -> str | None:
    """The corpus file a citation names: itself, or the one file with that bare name; None if neither."""
    if file in corpus.documents:
        return file
    matches = by_name.get(PurePosixPath(file.replace("\\", "/")).name, [])
    return matches[0] if len(matches) == 1 else None


# --- supporting quotes -------------------------------------------------------------------------


def match_key(text: str) -> str:
    """``text`` reduced for quote matching: ligatures unfolded (NFKC), case folded, and only letters and
    digits kept, so whitespace, line breaks, hyphenation at a line end and punctuation spacing (the
    ways a text layer or OCR differs from a quote typed by a model) do not matter."""
    return _NOT_ALNUM.sub("", unicodedata.normalize("NFKC", text).casefold())


def quote_on_page(quote: str, page_text: str) -> bool:
    """True when ``quote`` is, up to ``match_key``'s normalisation, a span of ``page_text``."""
    key = match_key(quote)
    return bool(key) and key in match_key(page_text)


class PageTexts(Protocol):
    """What quote checking needs of a corpus: the stored text (text layer or OCR) of a page."""

    def page_text(self, file: str, page: int) -> str: ...


@dataclass(frozen=True)
class QuoteCheck:
    """The supporting quote of each validated citation (None: none given) and whether it is on that page."""

    quotes: tuple[str | None, ...]
    found: tuple[bool | None, ...]
    flags: tuple[str, ...]


def check_quotes(raw: list[dict[str, Any]], citations: list[PageRef], corpus: Any) -> QuoteCheck:
    """Pair each validated citation with the first quote given for it and look for it on the page.

    A quote that is not on the cited page (after normalisation) is flagged: the model says the page
    reads something it does not. ``found`` is None where no quote was given.
    """
    by_name = _names(corpus)
    given: dict[PageRef, str] = {}
    for item in raw:
        quote = item.get("quote")
        file = _resolve(item["file"], corpus, by_name)
        if isinstance(quote, str) and file is not None:
            given.setdefault(PageRef(file, item["page"]), quote)
    quotes: list[str | None] = []
    found: list[bool | None] = []
    flags: list[str] = []
    for ref in citations:
        quote = given.get(ref)
        quotes.append(quote)
        if quote is None:
            found.append(None)
            continue
        try:
            text = corpus.page_text(ref.file, ref.page) or ""
        except Exception as exc:  # a page whose text cannot be read cannot confirm the quote
            text = ""
            flags.append(f"the text of {ref.label()} could not be read to check its quote ({exc})")
        ok = quote_on_page(quote, text)
        found.append(ok)
        if not ok:
            shown = quote if len(quote) <= 80 else quote[:77] + "..."
            flags.append(f"quote not found on cited {ref.label()}: {shown!r}")
    return QuoteCheck(tuple(quotes), tuple(found), tuple(flags))
