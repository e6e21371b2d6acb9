"""The offline reader: typed answer spans on one page's text, each scored 0..1.

Each answer type lives in its own module (dates, numbers, names, codes, tables, phrases); this
one proposes every span a question's expected kind is compatible with, and scores it by how well
its kind fits, how close it sits to the question's terms (weighted by corpus rarity), and whether
a label or a table header names the asked attribute. Rule based and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from typing import NamedTuple

from madqa_plugins.offline.offline_codes import QUOTED_RE, SYMBOL_RE, codeish, file_kind_fit
from madqa_plugins.offline.offline_codes import SPAN_RES as CODE_RES
from madqa_plugins.offline.offline_dates import DATE_RE, TIME_RE, YEAR_RE
from madqa_plugins.offline.offline_names import HONORIFICS, NAME_RE, NOT_NAME, ORG_SUFFIX, PROPER_RE
from madqa_plugins.offline.offline_numbers import (
    FACTOR_RE,
    MONEY_RE,
    NUMBER_RE,
    ORDINAL_NOUN_RE,
    PERCENT_RE,
    PORT_RE,
    QUANTITY_RE,
    TUPLE_RE,
    port_number,
)
from madqa_plugins.offline.offline_page import LineReading, PageReading, read_line, read_page
from madqa_plugins.offline.offline_phrases import expansions
from madqa_plugins.offline.offline_question import NUMBER_WORDS
from madqa_plugins.offline.offline_question import STOPWORDS as STOP
from madqa_plugins.offline.offline_spans import (
    Bag,
    Candidate,
    Question,
    clean,
    label_match,
    proximity,
    stem,
    stems_of,
    words,
)

COMPATIBLE = {  # expected kind -> {candidate kind: fit}
    # the typed kinds a question names (a count, a port, a version, a date, a person, a percentage, a
    # factor) take candidates of that type only: a date is no count, a URL's digits no port
    "date": {"date": 1.0},
    "port": {"port": 1.0},
    "factor": {"factor": 1.0},
    "year": {"year": 1.0, "date": 0.3},
    "time": {"time": 1.0, "phrase": 0.3},
    "money": {"money": 1.0, "number": 0.8, "quantity": 0.3, "percent": 0.2},
    "percent": {"percent": 1.0},
    "number": {"number": 1.0, "quantity": 0.75},
    "quantity": {"quantity": 1.0, "tuple": 0.5, "number": 0.6, "money": 0.5, "percent": 0.4, "phrase": 0.3},
    "person": {"person": 1.0},
    "org": {"proper": 1.0, "person": 0.4, "phrase": 0.45},
    "place": {"proper": 1.0, "phrase": 0.45},
    "code": {"code": 1.0, "tuple": 0.6, "number": 0.55, "phrase": 0.35},
    "expansion": {"expansion": 1.0, "phrase": 0.5},
    "version": {"version": 1.0},
    "flag": {"flag": 1.0, "quoted": 0.6, "code": 0.5, "ident": 0.4, "phrase": 0.3},
    "file": {"file": 1.0, "code": 0.5, "ident": 0.4, "phrase": 0.3},
    "ident": {"ident": 1.0, "symbol": 1.0, "quoted": 0.8, "code": 0.6, "flag": 0.5, "file": 0.4, "phrase": 0.6},
    "phrase": {"phrase": 0.8, "ordinal": 0.8, "tuple": 0.75, "quoted": 0.75, "proper": 0.7, "person": 0.65, "code": 0.7, "quantity": 0.7, "date": 0.6, "money": 0.6,
               "number": 0.55, "percent": 0.6, "time": 0.6, "year": 0.45, "version": 0.6, "flag": 0.6,
               "file": 0.6, "ident": 0.6},
}
MEASURED = frozenset({"number", "quantity", "money", "percent", "factor", "port"})  # answered with digits
TYPED = frozenset({"number", "port", "version", "date", "person", "percent", "factor"})  # only their own type
SPAN_RES = {"date": DATE_RE, "year": YEAR_RE, "time": TIME_RE, "money": MONEY_RE, "percent": PERCENT_RE,
            "number": NUMBER_RE, "quantity": QUANTITY_RE, "factor": FACTOR_RE, "port": PORT_RE, "person": NAME_RE, "proper": PROPER_RE,
            "ordinal": ORDINAL_NOUN_RE, "tuple": TUPLE_RE, "quoted": QUOTED_RE, **CODE_RES}


def _kind_spans(text: str, kind: str, limit: int) -> list[tuple[int, str]]:
    """(position, text) of every span of ``kind`` starting before ``limit``."""
    out = []
    for m in SPAN_RES[kind].finditer(text):
        if m.start() >= limit:
            break
        value = m.group()
        if kind in ("person", "proper"):
            parts = [p for p in value.split() if p.rstrip(".") not in HONORIFICS]
            caps = [p for p in parts if p[:1].isupper()]
            if not caps or all(p.strip(".") in NOT_NAME for p in caps) or (kind == "person" and any(
                    p.strip(".") in NOT_NAME for p in caps)):
                continue
        if kind == "port" and not port_number(value):
            continue
        if kind == "quantity" and re.search(r"\s[a-z]$", value) and value[-1] in "alt":
            continue  # "2 a valid value": the article, not amperes (nor "5 l", "3 t" in running text)
        out.append((m.start(), value))
    return out


def find_candidates(text: str, file: str, page: int, q: Question, weights: dict[str, float],
                    rank: int = 0, exclude: set[str] | None = None,
                    common: AbstractSet[str] | None = None) -> list[Candidate]:
    """Every typed span on a page with its score; ``weights`` are the question stems' weights.

    ``exclude``: stems that cannot be the answer (the whole question's); ``common``: words the
    corpus also writes in lower case (so not names); the page's own words when None.
    """
    p = read_page(text, file, page, q, weights, COMPATIBLE.get(q.kind, COMPATIBLE["phrase"]), rank, exclude, common)
    if p is None:
        return []
    out: list[Candidate] = []
    for i, line in enumerate(p.lines):
        if not line.strip() or i in p.heading:
            continue
        out += _line_candidates(p, read_line(p, i))
    return out


def _line_candidates(p: PageReading, ln: LineReading) -> list[Candidate]:
    """The scored candidates of one line, each (value, kind) once, in the order its spans are proposed."""
    out: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    for pos, value, kind in _line_spans(p, ln):
        span = _answer_span(p, ln, pos, value, kind)
        if span is None or (span.value, span.kind) in seen:
            continue
        seen.add((span.value, span.kind))
        candidate = _scored(p, ln, span)
        if candidate is not None:
            out.append(candidate)
    return out


def _line_spans(p: PageReading, ln: LineReading) -> list[tuple[int, str, str]]:
    """(position, text, kind) of every span starting on the line that the question's kind may take."""
    q, joined, limit = p.q, ln.joined, len(ln.line)
    spans: list[tuple[int, str, str]] = []
    for kind in p.fits:
        if kind in SPAN_RES:
            spans += [(pos, s, kind) for pos, s in _kind_spans(joined, kind, limit)]
    if "symbol" in q.target and q.kind == "ident":  # "the symbol of the weber": Wb, cd, mol
        spans += [(m.start(), m.group(), "symbol") for m in SYMBOL_RE.finditer(joined)
                  if m.start() < limit and m.group().lower() not in p.common and m.group().lower() not in STOP]
    if "expansion" in p.fits:
        spans += [(pos, s, "expansion") for pos, s in expansions(joined, q)]
    if q.kind == "number":  # "There are ten data types": a count written as a word, before what it counts
        spans += [(m.start(1), m.group(1), "number") for m in _COUNT_WORD.finditer(joined)
                  if m.start(1) < limit and {stem(w) for w in words(m.group(2))} & p.qterms]
    if q.kind not in TYPED:  # a label's whole value has no type: only an untyped question takes it
        spans += [(pos, value[:80], "value") for _, pos, value in ln.pairs]
        spans += [(pos, value, "value") for pos, value in ln.stated]
    if "phrase" in p.fits:
        spans += [(pos, c, "phrase") for pos, c, _ in ln.cells]
    if q.kind == "code":  # a code without digits in a table's cell: an ISO code ("FIM"), a country code
        spans += [(pos, c, "code") for pos, c, _ in ln.cells if re.fullmatch(r"[A-Z]{2,6}", c)]
    return spans


class _Span(NamedTuple):
    """A proposed span as an answer: where it starts on the joined line, its cleaned text, kind and stems."""

    pos: int
    value: str
    kind: str
    stems: set[str]


def _answer_span(p: PageReading, ln: LineReading, pos: int, value: str, kind: str) -> _Span | None:
    """The span as an answer (the quoted command of a value, unquoted, cleaned), or None when it is none."""
    joined, line = ln.joined, ln.line
    end = pos + len(value)
    if kind != "value" and "  " in joined[pos:min(end, len(line))]:
        return None  # a span across a column gap joins two cells ("Stopsign  Stoppschild")
    if joined[pos - 1:pos] == "<" and joined[end:end + 1] == ">" and joined[pos - 2:pos - 1] in ("", " "):
        return None  # a <placeholder> says what to write there, it is no answer
    inner = QUOTED_RE.search(value) if kind in ("value", "phrase") else None
    if inner:  # "FIT_MAXITER: use 'set fit maxiter <n>' instead": the quoted command is the value
        pos, value, kind = pos + inner.start(), inner.group(), "quoted"
    if kind == "quoted":
        value = unquote(value)
    value = clean(value)
    vstems = set(stems_of(value))
    if not value or not vstems or vstems <= p.qstems:
        return None  # the question's own words are not its answer
    return None if _not_an_answer(p, ln, pos, value, kind) else _Span(pos, value, kind, vstems)


def _not_an_answer(p: PageReading, ln: LineReading, pos: int, value: str, kind: str) -> bool:
    """Whether the span, by its kind and what stands around it, cannot answer the question."""
    q, line = p.q, ln.line
    if q.kind in MEASURED and kind in ("value", "phrase") and not re.search(r"\d", value):
        return True  # an amount, a size or a count is written with digits ("math" is no size)
    if q.kind == "number" and kind == "number" and "." in value:
        return True  # a count is a whole number: "5.4" (a version) counts nothing
    if kind in ("number", "money", "quantity", "percent") and any(a <= pos < b for a, b in ln.dates):
        return True  # the day of a date or the hour of a time is no amount
    if kind in ("number", "code", "version", "quantity", "ident") and any(a <= pos < b for a, b in ln.wholes) and not \
            any(a == pos and b == pos + len(value) for a, b in ln.wholes):
        return True  # "9" of "(9, 2)" or "13th" of "13th CGPM (1967)": the whole span is proposed
    if kind not in ("value", "quoted") and _XREF.search(ln.joined[max(0, pos - 12):pos]) and not p.qterms & _XREF_WORDS:
        return True  # "see section 4.3.4", "Table 2", "page 13": a cross-reference, not an answer
    if kind == "number" and not line[:pos].strip() and re.match(r"\d{1,2}[.)]\s", line[pos:]):
        return True  # a section number
    # "6.3.2 Selecting the upload urgency": a section's number is no version, code or amount
    return not line[:pos].strip() and bool(re.match(r"\d{1,2}(?:\.\d{1,2}){1,3}\.?\s+[A-Z]", line[pos:]))


def _scored(p: PageReading, ln: LineReading, span: _Span) -> Candidate | None:
    """The span as a candidate scored by its fit, the question's terms near it and its label; None at 0."""
    pos, value, kind = span.pos, span.value, span.kind
    at = next((k for k, c in enumerate(ln.cells) if c[0] <= pos < c[0] + len(c[1]) + 1), None)
    cell = ln.cells[at] if at is not None else None
    head = cell[2] if cell else ""
    its_row, line_bags = ln.row_label, (ln.cell_window if cell else ln.window)
    if at is not None and ln.own_labels:  # one of several rows side by side: its own group's words, not the line's
        its_row = ln.own_labels[at]
        line_bags = [*line_bags[:ln.i - ln.lo], Bag(f"{its_row} {cell[1]}" if cell else ""), *line_bags[ln.i - ln.lo + 1:]]
    about = (f"{head} {ln.rows_head} " if cell else "") + (
        p.lines[ln.entry] if ln.entry is not None and ln.entry != ln.i else "")
    local, on_page, near = proximity(line_bags, ln.i - ln.lo, Bag(about), p.weights, p.page_bag, p.q.alts)
    before = ln.line[max(0, pos - 40):pos]
    lab = _label(p, ln, span, before, cell is not None, its_row, head)
    fit = _fit(p, span, before, lab, cell is not None and ln.headed, head)
    lab = _label_beside(p, ln, span, before, lab)
    # a label counts in full only beside the question's other terms ("version" is near every number)
    score = fit * (0.55 * local + 0.15 * on_page + 0.3 * lab * min(1.0, 2 * local)) * p.rank_prior
    score += 0.04 * fit * _closeness(pos, len(value), ln.anchors)  # ties on one line: the nearer span
    if score <= 0:
        return None
    why = f"{kind}; question terms on or near its line: {', '.join(near) or 'none'}"
    return Candidate(value, kind, p.file, p.page, round(score, 4), ln.i, why + ("; label match" if lab else ""),
                     round(local, 4), round(on_page, 4), round(lab, 4), round(fit, 4), pos=pos,
                     cell=cell is not None and bool(head))


def _label(p: PageReading, ln: LineReading, span: _Span, before: str, in_cell: bool, its_row: str, head: str) -> float:
    """How well what labels the span (the words before it, its label, row or column) names the asked attribute."""
    q, pos, kind = p.q, span.pos, span.kind
    pair = next((x for x in reversed(ln.pairs) if x[1] <= pos), None)
    lab = 0.8 * label_match(" ".join(words(before)[-4:]), q)
    if pair is not None:
        lab = max(lab, label_match(pair[0], q))
    elif in_cell:
        lab = max(lab, label_match(its_row, q), label_match(head, q))
        if head and p.specifiers & set(stems_of(head)):  # a table cell: its column is one the question names
            lab = max(lab, 0.5 + 0.5 * label_match(its_row, q))
    if (pos, span.value) in ln.stated:
        lab = max(lab, 0.9)  # "Default: #f", "the default is 300 ms" for a question about a default
    if kind in ("person", "proper") and re.search(r"\b(?:by|from|signed|author|chaired|led)\b[:\s]*$", before, re.I):
        lab = max(lab, 0.5)
    if kind == "person" and p.page <= 2 and ln.i < 15 and p.qterms & _AUTHORSHIP:
        lab = max(lab, 0.6)  # a title page names its authors under the title, without saying "author"
    if q.kind == "place" and re.search(r"\b(?:in|at|near|to)\s+$", before):
        lab = max(lab, 0.5)
    return lab


def _label_beside(p: PageReading, ln: LineReading, span: _Span, before: str, lab: float) -> float:
    """``lab`` raised by the asked attribute's words right beside the span, or spelt by a name in code."""
    q, pos, value, kind = p.q, span.pos, span.value, span.kind
    beside = words(ln.line[pos + len(value):pos + len(value) + 30])[:2] + words(before)[-2:]
    if q.target and set(q.target) & {stem(w) for w in beside} and kind != "value":
        lab = max(lab, 0.6)  # "Celia Marchetti (the Tenant)", "rent of GBP 1,150"
    if kind in ("flag", "ident", "code") and q.kind in ("flag", "ident", "code"):
        lab = max(lab, _echo(value, p.qterms))  # "-but_per_row" for "the number of buttons per row"
    if kind == "ordinal" and set(q.target) & span.stems:
        lab = max(lab, 0.6)  # "13th CGPM" for "which CGPM meeting": the noun it counts is the one asked
    return lab


def _fit(p: PageReading, span: _Span, before: str, lab: float, headed_cell: bool, head: str) -> float:
    """How well the span's kind and form fit what the question asks for (0..1); ``lab`` before ``_label_beside``."""
    q, fits, value, kind = p.q, p.fits, span.value, span.kind
    fit = fits.get(kind, 0.0)
    if kind == "value":  # the whole value of a label the question names, whatever its type
        fit = max(fits.get("phrase", 0.3), 0.9 * lab if lab >= 0.5 else 0.0)
    elif kind in ("phrase", "quoted") and headed_cell and q.kind not in TYPED and label_match(head, q) >= 0.8:
        fit = max(fit, 0.8)  # the whole cell under the column asked ("32 bits, 4 bytes" for the width)
    if kind == "symbol":
        fit *= 1.0 if len(value) > 1 else 0.7  # a lone letter is more often a variable than a unit
    elif q.kind == "ident":
        fit *= codeish(value, p.common)  # a variable or command is rarely a word of running text
        if "symbol" in q.target and kind != "symbol":
            fit *= 0.6  # a symbol is a few letters, not "s-2" of a unit's expansion
    if kind == "file" and q.kind == "file":
        fit *= file_kind_fit(value, p.qterms)  # "the map file": txr3.map, not pdftex.cfg
    if p.units and kind in ("quantity", "number"):
        fit *= 1.0 if re.search(rf"(?:{p.units})$", value) else 0.6
    return _fit_of_form(p, span, before, head, fit)


def _fit_of_form(p: PageReading, span: _Span, before: str, head: str, fit: float) -> float:
    """``fit`` lowered for what the span's form says against it: too long, a year, a common word as a name,
    another year than the one asked about."""
    q, common, value, kind = p.q, p.common, span.value, span.kind
    if kind in ("phrase", "value") and len(words(value)) > 8:
        fit *= 0.5
    if kind in ("number", "money") and YEAR_RE.fullmatch(value):
        fit *= 0.3
    if kind == "proper" and " " not in value and value.lower() in common or kind in ("proper", "person") and (
            value.split()[0].lower() in STOP or value.split()[0].lower() in _OPENERS):
        fit *= 0.3  # a capitalised common word ("However", "In MathProg", "See When") opening a sentence is no name
    if kind == "person" and any(w.lower() in common for w in words(value) if w[:1].isupper() and "." not in w):
        fit *= 0.5  # a word also written in lower case is rarely part of a name
    if kind == "proper" and q.kind == "org":
        fit *= 1.0 if re.search(ORG_SUFFIX, value) else 0.7
    if kind == "proper" and (len(value) <= 3 and q.kind != "code" or NAME_RE.fullmatch(value) and q.kind == "place"):
        fit *= 0.5
    asked = _ASKED_SCALE.search(q.text)
    if asked and kind in ("money", "number", "quantity") and (written := _WRITTEN_SCALE.search(value)) \
            and _scale_of(written.group(1)) != _scale_of(asked.group(1)):
        fit *= 0.4  # "in EUR thousand": "EUR 19 million" is the value in another unit, not as the question asks it
    context_years = set(YEAR_RE.findall(before[-14:] + " " + head))
    if p.qyears and context_years and not context_years & p.qyears:
        fit *= 0.6  # labelled with another year than the one asked about
    return fit




_SCALES = {"thousand": "k", "thousands": "k", "teur": "k", "k": "k", "million": "m", "millions": "m", "mn": "m",
           "mio": "m", "billion": "b", "billions": "b", "bn": "b"}
_SCALE_WORD = "|".join(sorted(_SCALES, key=len, reverse=True))
# the unit a question asks its value in: "in EUR thousand", "in thousands of euros", "in millions", "(in TEUR)"
_ASKED_SCALE = re.compile(rf"\bin\s+(?:[A-Z]{{3}}\s+|\w+\s+of\s+)?({_SCALE_WORD})\b", re.I)
_WRITTEN_SCALE = re.compile(rf"\b({_SCALE_WORD})\b", re.I)


def _scale_of(word: str) -> str:
    return _SCALES[word.lower()]


def _echo(value: str, qterms: AbstractSet[str]) -> float:
    """How much a name in code spells the question's words, whole or cut short ("-but_per_row": buttons, per,
    row; "--no-history": history): 0.6 for one such part, 0.9 for two or more, 0 for none."""
    parts = [p.lower() for p in re.split(r"[^A-Za-z]+|(?<=[a-z])(?=[A-Z])", value) if len(p) >= 3]
    hits = sum(1 for p in parts if any(t.startswith(p) or len(t) >= 3 and p.startswith(t) for t in qterms if t.isalpha()))
    return 0.0 if not hits else 0.6 if hits == 1 else 0.9


def unquote(value: str) -> str:
    """A quoted command without its quotes and a trailing ``<placeholder>`` argument ("set fit maxiter")."""
    inner = value[1:-1].strip()
    return re.sub(r"(?:\s+(?:<[^<>]+>|\[[^][]+\]))+$", "", inner) or inner


def _closeness(pos: int, length: int, anchors: list[int]) -> float:
    """1 when a question term starts right beside the span, falling to 0 at 60 characters away."""
    gaps = [min(abs(a - pos), abs(a - (pos + length))) for a in anchors if not pos <= a < pos + length]
    return max(0.0, 1 - min(gaps) / 60) if gaps else 0.0


_COUNT_WORD = re.compile(r"\b(" + "|".join(w for w in NUMBER_WORDS if w != "both") + r")\s+((?:[A-Za-z-]+\s+){0,1}[A-Za-z-]+)",
                         re.I)
_XREF_WORDS = frozenset(("section", "chapter", "table", "figure", "page", "appendix", "equation", "sect", "fig", "tab"))
_XREF = re.compile(r"\b(?:[Ss]ections?|[Cc]hapters?|[Tt]ables?|[Ff]igures?|[Ff]igs?\.|[Pp]ages?|pp?\.|[Aa]ppendix|[Ee]q\.|§)\s*$")
_OPENERS = frozenset("see warning note notes however when while if then this these those each every such also".split())
_AUTHORSHIP = frozenset(stem(w) for w in "author authors wrote written write made created maintainer maintains".split())
