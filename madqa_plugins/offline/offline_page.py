"""A page as the offline reader reads it for one question, read once: its lines' stems, table rows and
entries, and per line what is near it, what labels its values and what on it is no answer of its own."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from madqa_plugins.offline.offline_dates import DATE_RE, TIME_RE, YEAR_RE
from madqa_plugins.offline.offline_entries import entry_heads
from madqa_plugins.offline.offline_numbers import ORDINAL_NOUN_RE, TUPLE_RE, UNIT_OF
from madqa_plugins.offline.offline_spans import Bag, Question, lowercase_words, stem, stems_of, words
from madqa_plugins.offline.offline_tables import TableRow, label_pairs, read_row

NOTHING = Bag("")  # a line whose words do not count as near (another entry's)


@dataclass(frozen=True)
class PageReading:
    """One page read for one question: its lines, their stems and table rows, and the question's terms."""

    file: str
    page: int
    q: Question
    weights: dict[str, float]
    lines: list[str]
    common: AbstractSet[str]  # words written in lower case (so not names)
    fits: dict[str, float]  # candidate kind -> how well it fits the expected kind
    qstems: set[str]  # stems that cannot be the answer
    qterms: set[str]
    qyears: set[str]
    specifiers: set[str]  # the question's stems with digits and its target: a column that names one is asked
    units: str  # a regex alternation of the units the question names ("" when none)
    rank_prior: float
    bags: list[Bag]
    page_bag: Bag
    heading: set[int]  # lines naming a table's columns
    rows: list[TableRow]
    near_bags: list[Bag]  # ``bags`` without the table lines (a cell takes no words from the rows around it)
    entries: list[int | None]  # a manual's entry: what its head line names is said of every line below it


def read_page(text: str, file: str, page: int, q: Question, weights: dict[str, float], fits: dict[str, float],
              rank: int = 0, exclude: set[str] | None = None,
              common: AbstractSet[str] | None = None) -> PageReading | None:
    """The page as the reader reads it for ``q`` (``fits``: its kind's compatible candidate kinds), or None
    when it has no text."""
    lines = text.splitlines()
    if not any(ln.strip() for ln in lines):
        return None
    bags = [Bag(ln) for ln in lines]
    rows = [read_row(lines, i) for i in range(len(lines))]
    heading = {k for row in rows for k in row.header_lines}  # lines naming a table's columns hold no answer
    # nor do they bring their words to the rows near them: a cell has its own column's header (and the row
    # labels'), so the first rows of a table are not nearer to every question than the others
    # and the other rows of a table are records of their own: a cell takes no words from the rows around it
    near_bags = [Bag("") if k in heading or rows[k].cells else b for k, b in enumerate(bags)]
    units = "|".join(UNIT_OF[w] for w in dict.fromkeys([*q.target, *(stem(w) for w in words(q.text.lower()))])
                     if w in UNIT_OF)
    return PageReading(
        file=file, page=page, q=q, weights=weights, lines=lines,
        common=common if common is not None else lowercase_words(text),
        fits=fits,
        qstems=(exclude or set()) | set(stems_of(q.text)), qterms=set(q.stems), qyears=set(YEAR_RE.findall(q.text)),
        specifiers={stem(w) for w in words(q.text) if any(ch.isdigit() for ch in w)} | set(q.target),
        units=units, rank_prior=1.0 - min(rank, 10) * 0.01,
        bags=bags, page_bag=Bag(stems=tuple(x for b in bags for x in b.seq.split())),
        heading=heading, rows=rows, near_bags=near_bags, entries=entry_heads(lines))


@dataclass(frozen=True)
class LineReading:
    """Line ``i`` of a page: its text with the next line joined on (a span may run over), its table row, the
    lines near it whose words count, and the positions of what on it is no answer of its own."""

    i: int
    line: str
    joined: str
    row_label: str  # "" when longer than eight words (a sentence, not a label)
    cells: list[tuple[int, str, str]]  # (position, text, column header)
    headed: bool  # a table of words under its header line (not a row of numbers guessed at)
    rows_head: str
    own_labels: list[str]
    entry: int | None
    lo: int  # the page line that ``window[0]`` is
    window: list[Bag]
    cell_window: list[Bag]
    pairs: list[tuple[str, int, str]]  # (label, position, value)
    dates: list[tuple[int, int]]  # dates and times: their digits are no amounts
    wholes: list[tuple[int, int]]  # tuples and ordinal nouns: proposed whole, never a part
    stated: list[tuple[int, str]]  # values stated as a default (only when the question asks for one)
    anchors: list[int]  # where the question's terms start


def read_line(p: PageReading, i: int) -> LineReading:
    """Line ``i`` of page ``p`` as the reader proposes and scores its spans."""
    lines, line = p.lines, p.lines[i]
    nxt = lines[i + 1].strip() if i + 1 < len(lines) and i + 1 not in p.heading else ""
    joined = line + (" " + nxt if nxt else "")
    row_label, cells, header_lines, rows_head, own_labels = p.rows[i]
    entry = p.entries[i]
    # the lines whose words count as near (proximity looks 8 lines away at most): none of another entry's;
    # for a cell, none of the table's other rows nor its header (``near_bags``)
    lo, hi = max(0, i - 8), min(len(p.bags), i + 9)
    window = [NOTHING if entry is not None and p.entries[k] != entry else p.bags[k] for k in range(lo, hi)]
    cell_window = [b if k == i or b is NOTHING else p.near_bags[k] for k, b in zip(range(lo, hi), window, strict=True)]
    return LineReading(
        i=i, line=line, joined=joined, row_label=row_label if len(words(row_label)) <= 8 else "", cells=cells,
        headed=bool(header_lines), rows_head=rows_head, own_labels=own_labels, entry=entry,
        lo=lo, window=window, cell_window=cell_window, pairs=label_pairs(line),
        dates=[(m.start(), m.end()) for m in DATE_RE.finditer(joined)] +
              [(m.start(), m.end()) for m in TIME_RE.finditer(joined)],
        wholes=[(m.start(), m.end()) for r in (TUPLE_RE, ORDINAL_NOUN_RE) for m in r.finditer(joined)],
        stated=defaults_stated(joined, len(line)) if "default" in p.qterms else [],
        anchors=[m.start() for m in re.finditer(r"[^\W_][\w'&.\-/]*", joined) if stem(m.group()) in p.qterms])


# a stated default is the value after a connector ("defaults to 75 dpi", "Default: #f", "the default is 300 ms",
# "the default location is /usr/local", "the default value being auto-auto"): the words between "default" and
# the connector name the attribute ("location", "value of outputtemplate") and are never the value itself
_DEFAULT = re.compile(r"\b[Dd]efaults?(?:\s+to\b|(?:\s+[\w-]+){0,4}?\s*(?::|=|\bis\b|\bbeing\b|\bwill be\b))"
                      r"\s*:?\s*(?:is\s+)?(?:set\s+to\s+)?"  # "The default value is: NO"
                      r"([^\s,;]+?(?:\s(?:ms|s|seconds?|dpi|points?|pt|bp|cm|mm|in|inches|px|pixels|%|lines?))?)(?=[\s,;)]|\.\s|\.?$)")

_MARKED_DEFAULT = re.compile(r"([^\s,;()]+)\s*\((?:the\s+)?default\)")
_BRACKETED_DEFAULT = re.compile(r"\((?:the\s+)?defaults?:?\s+([^\s,;()]+)\s*\)")  # "Size of arrowheads (default: 4bp)"
_NO_VALUE = frozenset(("the", "a", "an", "value", "setting", "is", "this", "not", "to", "used", "set", "given", "that"))


def defaults_stated(text: str, limit: int) -> list[tuple[int, str]]:
    """(position, value) stated as a default ("Default: #f", "defaults to 75 dpi", "the default is 300 ms",
    "PROGRESS (default)")."""
    out = [(m.start(1), m.group(1).strip("\"'`")) for r in (_MARKED_DEFAULT, _BRACKETED_DEFAULT)
           for m in r.finditer(text) if m.start(1) < limit]
    for m in _DEFAULT.finditer(text):
        value = m.group(1).strip("\"'`")
        if m.start(1) < limit and value and value.lower() not in _NO_VALUE:
            out.append((m.start(1), value))
    return out
