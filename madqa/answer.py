"""Parse and repair a model's final answer, and check its citations against what the agent saw."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Protocol

from madqa.errors import MadqaError
from madqa.text import match_key as match_key  # re-exported: its home was here
from madqa.text import quote_on_page
from madqa.types import PageRef, Passage

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
_PAGE_NUMBER = re.compile(r"-?\d+")
MAX_QUOTE_CHARS = 400  # a sentence or a table row; longer quotes are cut (and flagged)
MAX_JSON_SCAN_CHARS = 200_000  # a model's reply is searched for JSON up to here
_MAX_BRACE_STARTS = 8  # unclosed braces skipped before giving up: bounded work on hostile text
_FILE_EDGES = " \t\"'`,;:-([<"
# "report.pdf p. 6", "File: report.pdf, Page: 6", "report.pdf#page=6", "report.pdf (pp. 6-7)": the first page
_CITATION_TEXT = re.compile(r"\s*(?:file(?:name)?\s*[:=]\s*)?(?P<file>[^\n]+?)[\s,;(\[\-]*"
                            r"(?:#page=|\bpages?\s*[:=#]?\s*|\bpp?\.?\s*|\bpg\.?\s*)(?P<page>\d+)"
                            r"(?:\s*[-\u2013]\s*\d+)?\s*[)\]]?\s*\.?\s*$", re.I)
_CITATION_PDF = re.compile(r"\s*(?:file(?:name)?\s*[:=]\s*)?(?P<file>[^\n]+?\.pdf)\s*[:,#]?\s*(?P<page>\d+)\s*$", re.I)
_BRACE_OR_QUOTE = re.compile(r"[{}\"']")
_STRING_REST = {q: re.compile(rf"(?:[^{q}\\]|\\.)*+{q}", re.S) for q in "\"'"}


class PageBook(Protocol):
    """What citation checking needs of a corpus (page texts: to move a citation to its quote's page)."""

    documents: dict[str, Any]

    def has_page(self, file: str, page: int) -> bool: ...

    def page_text(self, file: str, page: int) -> str: ...


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
    if isinstance(value, (dict, str)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        return [], [f"citations of type {type(value).__name__} ignored"]
    out = []
    for item in value:
        if not isinstance(item, dict):
            read = citation_from_text(item)
            if read is None:
                flags.append(f"citation {item!r} is not an object")
                continue
            flags.append(f"citation {item!r} given as text, read as {read['file']} p.{read['page']}")
            item = read
        file, file_key = _first_key(item, FILE_KEYS)
        page, page_key = _first_key(item, PAGE_KEYS)
        flags += [f"citation {name} read from {key}" for name, key in (("file", file_key), ("page", page_key))
                  if key not in (None, name)]
        if page is None and isinstance(file, str) and (read := citation_from_text(file)) is not None:
            flags.append(f"citation file {file!r} holds its page, read as {read['file']} p.{read['page']}")
            file, page = read["file"], read["page"]
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
    if not isinstance(payload, dict) or not ((set(ANSWER_KEYS) | set(CITATION_KEYS)) & set(payload)):
        return None
    value, answer_key = _first_key(payload, ANSWER_KEYS)
    cited, citations_key = _first_key(payload, CITATION_KEYS)
    flags += [f"{name} read from {key}" for name, key in (("answer", answer_key), ("citations", citations_key))
              if key not in (None, name)]
    answer, f1 = normalize_answer(value)
    citations, f2 = normalize_citations(cited)
    return answer, citations, flags + f1 + f2


# The keys a model may give each part under (the first present wins); one other than the first is flagged.
ANSWER_KEYS = ("answer", "answers", "final_answer")
CITATION_KEYS = ("citations", "sources", "references")
FILE_KEYS = ("file", "document", "filename")
PAGE_KEYS = ("page", "page_number", "page_no")


def _first_key(obj: dict[str, Any], keys: tuple[str, ...]) -> tuple[Any, str | None]:
    """(the value, its key) of the first of ``keys`` present and not None in ``obj``; (None, None) if none."""
    for key in keys:
        if obj.get(key) is not None:
            return obj[key], key
    return None, None


def citation_from_text(item: Any) -> dict[str, Any] | None:
    """``{"file", "page"}`` from a citation written as text (``"report.pdf p. 6"``, ``"report.pdf, page 6"``,
    ``"File: report.pdf, Page: 6"``, ``"report.pdf#page=6"``, ``"report.pdf:6"``) or as a ``[file, page]``
    pair; None when it is neither."""
    if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str) \
            and isinstance(item[1], int) and not isinstance(item[1], bool):
        return {"file": item[0].strip(), "page": item[1]} if item[0].strip() else None
    if not isinstance(item, str) or len(item) > 500:
        return None
    match = _CITATION_TEXT.match(item) or _CITATION_PDF.match(item)
    if match is None:
        return None
    file = match.group("file").strip(_FILE_EDGES)
    return {"file": file, "page": int(match.group("page"))} if file else None


@dataclass(frozen=True)
class Citations:
    """The citations of an answer read against the corpus: the valid pages (each once), the first quote given
    for each (None: none), and what was dropped or repaired."""

    refs: tuple[PageRef, ...]
    quotes: tuple[str | None, ...]
    flags: tuple[str, ...]


def resolve_citations(raw: list[dict[str, Any]], corpus: PageBook, seen: set[PageRef]) -> Citations:
    """The citations that name a real, seen page, de-duplicated, with their quotes; flags say what was
    dropped, what repaired.

    A file named by its bare name (as MADQA files are) is matched when that name is unique; one named
    in another letter case, under another folder, with backslashes or without ``.pdf`` is matched (and
    flagged) when exactly one corpus file fits. A citation whose quote is not on its page but on the
    page before or after, one the agent saw, is moved there (flagged).
    """
    valid: list[PageRef] = []
    quotes: dict[PageRef, str | None] = {}
    flags: list[str] = []
    for cited in _read_citations(raw, corpus, seen):
        flags += cited.flags
        if cited.ref is None:
            continue
        if cited.ref not in valid:
            valid.append(cited.ref)
        if quotes.get(cited.ref) is None:
            quotes[cited.ref] = cited.quote
    return Citations(tuple(valid), tuple(quotes[ref] for ref in valid), tuple(flags))


def validate_citations(raw: list[dict[str, Any]], corpus: PageBook,
                       seen: set[PageRef]) -> tuple[list[PageRef], list[str]]:
    """``resolve_citations``' pages and flags, for callers that check no quotes."""
    cited = resolve_citations(raw, corpus, seen)
    return list(cited.refs), list(cited.flags)


@dataclass(frozen=True)
class _Cited:
    """One raw citation read against the corpus: the page it stands for (None: dropped), its quote, flags."""

    ref: PageRef | None
    quote: str | None
    flags: tuple[str, ...]


def _read_citations(raw: list[dict[str, Any]], corpus: Any, seen: set[PageRef]) -> list[_Cited]:
    by_name = _names(corpus)
    out = []
    for item in raw:
        quote = item.get("quote") if isinstance(item.get("quote"), str) and item["quote"].strip() else None
        file, how = _match_file(item["file"], corpus, by_name)
        if file is None:
            out.append(_Cited(None, quote, (f"cited file {item['file']!r} {how}",)))
            continue
        flags = [f"cited file {item['file']!r} read as {file}"] if how else []
        page = item["page"]
        if quote is not None and not _quote_on(corpus, file, page, quote):
            near = next((p for p in (page - 1, page + 1)
                         if PageRef(file, p) in seen and _quote_on(corpus, file, p, quote)), None)
            if near is not None:
                flags.append(f"citation moved from p.{page} to p.{near}: its quote is on that page")
                page = near
        cited = PageRef(file, page)
        ref: PageRef | None = cited
        if not corpus.has_page(file, page):
            flags.append(f"cited page {page} of {file} does not exist")
            ref = None
        elif cited not in seen:
            flags.append(f"cited {cited.label()} was never shown to the model")
            ref = None
        out.append(_Cited(ref, quote, tuple(flags)))
    return out


def _quote_on(corpus: Any, file: str, page: int, quote: str) -> bool:
    """Whether ``quote`` is on an existing page; a page whose text cannot be read does not have it."""
    if not corpus.has_page(file, page):
        return False
    try:
        return quote_on_page(quote, corpus.page_text(file, page) or "")
    except MadqaError:  # a damaged page store: checked again, and reported, by check_quotes
        return False


def _names(corpus: PageBook) -> dict[str, list[str]]:
    by_name: dict[str, list[str]] = {}
    for file in corpus.documents:
        by_name.setdefault(PurePosixPath(file).name, []).append(file)
    return by_name


def _match_file(file: str, corpus: PageBook, by_name: dict[str, list[str]]) -> tuple[str | None, str]:
    """(the corpus file a citation names, "" or "repaired"), or (None, why not).

    Itself, or the one file with that bare name: no repair. Otherwise, compared case-insensitively with
    backslashes as slashes, a leading folder and a missing ``.pdf`` allowed: a repair when exactly one fits.
    """
    if file in corpus.documents:
        return file, ""
    if len(by_name.get(file, [])) == 1:
        return by_name[file][0], ""
    path = re.sub(r"^(?:\.?/)+", "", file.strip().strip(_FILE_EDGES).replace("\\", "/")).casefold()
    forms = [path] if path.endswith(".pdf") else [path, path + ".pdf"]
    folded = [(f, f.casefold()) for f in corpus.documents]
    tiers = (lambda f, c: f == c,  # the same path in another letter case
             lambda f, c: c.endswith("/" + f) or f.endswith("/" + c),  # a folder more or less
             lambda f, c: PurePosixPath(f).name == PurePosixPath(c).name)  # another folder
    for fits_tier in tiers:
        for form in forms:
            fits = [f for f, key in folded if fits_tier(key, form)]
            if len(fits) == 1:
                return fits[0], "repaired"
            if len(fits) > 1:
                return None, f"fits {len(fits)} corpus files; name it as its page label does"
    return None, "is not in the corpus"


# --- supporting quotes -------------------------------------------------------------------------


class PageTexts(Protocol):
    """What quote checking needs of a corpus: the stored text (text layer or OCR) of a page."""

    def page_text(self, file: str, page: int) -> str: ...


@dataclass(frozen=True)
class QuoteCheck:
    """The supporting quote of each validated citation (None: none given) and whether it is on that page."""

    quotes: tuple[str | None, ...]
    found: tuple[bool | None, ...]
    flags: tuple[str, ...]


def check_quotes(cited: Citations, corpus: Any) -> QuoteCheck:
    """Look for each resolved citation's quote (the first given for its page) on that page.

    A quote that is not on the cited page (after normalisation) is flagged: the model says the page
    reads something it does not; so is a citation with no quote. ``found`` is None where no quote was
    given. The citations are those ``resolve_citations`` read (repaired names, moved pages), not read again.
    """
    found: list[bool | None] = []
    flags: list[str] = []
    for ref, quote in zip(cited.refs, cited.quotes, strict=True):
        if quote is None:
            found.append(None)
            flags.append(f"citation of {ref.file} p.{ref.page} carries no quote")
            continue
        try:
            text = corpus.page_text(ref.file, ref.page) or ""
        except MadqaError as exc:  # a damaged page store: a page whose text cannot be read cannot confirm the quote
            text = ""
            flags.append(f"the text of {ref.label()} could not be read to check its quote ({exc})")
        ok = quote_on_page(quote, text)
        found.append(ok)
        if not ok:
            shown = quote if len(quote) <= 80 else quote[:77] + "..."
            flags.append(f"quote not found on cited {ref.label()}: {shown!r}")
    return QuoteCheck(cited.quotes, tuple(found), tuple(flags))


MAX_PASSAGES = 5  # pages of closest passages kept on a refusal
MAX_PASSAGE_LINES = 4  # lines kept per page


def read_passages(payload: Any, corpus: PageBook, seen: set[PageRef]) -> tuple[Passage, ...]:
    """The ``closest_passages`` a refusal payload offers, kept only where they are true.

    Each item is ``{"file", "page", "lines": [str]}``; a page kept must exist and have been shown
    to the agent, and a line only when it is found on that page's text (as quotes are checked).
    Anything malformed is left out: the passages are a courtesy beside an empty answer, never an answer.
    """
    items = payload.get("closest_passages") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        return ()
    out: list[Passage] = []
    for item in items:
        if len(out) >= MAX_PASSAGES:
            break
        if not isinstance(item, dict) or not isinstance(item.get("file"), str):
            continue
        page, lines = item.get("page"), item.get("lines")
        if isinstance(page, bool) or not isinstance(page, int) or not isinstance(lines, list):
            continue
        ref = PageRef(item["file"], page)
        if ref not in seen or any(p.ref == ref for p in out):
            continue
        kept = tuple(ln.strip()[:MAX_QUOTE_CHARS] for ln in lines if isinstance(ln, str) and ln.strip()
                     and _quote_on(corpus, ref.file, ref.page, ln.strip()[:MAX_QUOTE_CHARS]))
        if kept:
            out.append(Passage(ref.file, ref.page, kept[:MAX_PASSAGE_LINES]))
    return tuple(out)
