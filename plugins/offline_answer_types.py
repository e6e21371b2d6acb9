"""Question analysis and answer-span extraction for the offline extractive baseline (no model).

``analyze`` reads a question into its expected answer type, content terms and the attribute it
asks for; ``find_candidates`` proposes typed spans on a page's text (dates, years, numbers,
money, percentages, person names, codes, ``label: value`` pairs, table cells, short phrases),
each scored by its type fit and its closeness to the question's terms (0..1).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

STOPWORDS = frozenset("""
a about above according after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have
having he her here hers him his how i if in into is it its itself just me more most my no nor not of off on
once only or other our ours out over own same she should so some such than that the their theirs them then
there these they this those through to too under until up very was we were what when where which while who
whom whose why will with would you your yours please tell give state find show according document documents
mentioned listed stated given shown specified provided written noted indicated reported described name named
value exact exactly kind type many much did does whats what's
""".split())
GENERIC_ATTRIBUTE = frozenset({"name", "value", "amount", "number", "total", "date", "year"})
LINK_WORDS = frozenset("of in for on at by to from with during per as under between within".split())
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10, "both": 2}
MONTHS = ("january february march april may june july august september october november december "
          "jan feb mar apr jun jul aug sep sept oct nov dec").split()
_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|" \
         r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
DATE_RE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+\d{{4}}|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{2,4}}|{_MONTH}\s+\d{{4}})\b", re.I)
YEAR_RE = re.compile(r"(?<![\d,.\-/])(?:1[89]|20)\d\d(?![\d,%]|\.\d)")
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE = r"(?:\s?(?:million|billion|thousand|bn|mn|[mMkKbB])\b)?"
MONEY_RE = re.compile(rf"(?:[$€£¥]|\b(?:USD|EUR|GBP|CHF|JPY|CAD|AUD|Rs\.?)\s?)\s?-?(?:{_NUM}){_SCALE}"
                      rf"|(?<![\w.])(?:{_NUM}){_SCALE}\s?(?:USD|EUR|GBP|CHF|dollars|euros|pounds)\b", re.I)
PERCENT_RE = re.compile(rf"(?<![\w.])-?(?:{_NUM})\s?(?:%|percent\b|per cent\b|pct\b)", re.I)
NUMBER_RE = re.compile(rf"(?<![\w.,/-])-?(?:{_NUM})(?![\w%/]|[.,]\d|-\d)")
CODE_RE = re.compile(r"(?<![\w-])(?=[A-Za-z0-9/.\-#]*\d)(?=[A-Za-z0-9/.\-#]*[A-Za-z\-/#])[A-Za-z0-9][A-Za-z0-9/.\-#]"
                     r"{2,24}[A-Za-z0-9](?![\w-])")
NAME_RE = re.compile(r"\b(?:(?:Dr|Mr|Mrs|Ms|Prof|Sir)\.?\s+)?[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?(?:\s+[A-Z]\.)?"
                     r"(?:\s+(?:van|von|de|da|del|der|di|le|la)(?=\s+[A-Z]))?(?:\s+[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?){1,2}\b")
PROPER_RE = re.compile(r"\b[A-Z][\w&'.\-]*(?:\s+(?:of|and|&|for|de|the)?\s*[A-Z][\w&'.\-]*){0,4}")
NOT_NAME = frozenset(m.capitalize() for m in MONTHS) | frozenset("""
The A An This That These Those Inc Ltd Llc Corp Corporation Company Co Group Report Annual Total Department Office
Street Road Avenue Table Figure Page Section Chapter Summary Invoice Memo Memorandum Subject Date From To Re Dear
Monday Tuesday Wednesday Thursday Friday Saturday Sunday University Institute Bank Board Committee Project Plan
Policy Agreement Contract Order Purchase Net Gross Revenue Income Budget Quarter Fiscal Year North South East West
New Old United States Kingdom National International Global Services Systems Solutions Technologies Industries
Holdings Partners Limited Ministry Council City County Hospital School College Center Centre Program Programme
Director Manager Chief Officer President Executive Vice Head Chair Chairman Secretary Treasurer Approved Prepared
Signed Sincerely Regards Best Thank Thanks Please Note Notes Key Main General Final Draft Internal Public Private
""".split())
KIND_CUES: tuple[tuple[str, str], ...] = (
    (r"\b(?:what|which)\s+(?:percentage|percent|proportion|share|fraction)\b|\bhow many percent\b|\bwhat % ", "percent"),
    (r"\b(?:in|during)\s+(?:what|which)\s+year\b|\b(?:what|which)\s+year\b|\byear\s+(?:did|was|were|of)\b", "year"),
    (r"\bwhen\b|\b(?:what|which)\s+(?:date|day)\b|\bon what (?:date|day)\b|\bdate\s+(?:of|on|did|was)\b|\bdated\b"
     r"|\bdeadline\b|\bdue date\b", "date"),
    (r"\bhow much\b|\b(?:cost|price|amount|paid|pay|fee|fees|budget|salary|revenue|revenues|sales|income|profit|"
     r"spend|spent|expense|expenses|worth|funding|grant|balance|subtotal|total due|invoice total)\b", "money"),
    (r"\bhow many\b|\bnumber of\b|\bcount of\b|\bhow (?:old|long|far|big|large|tall|high)\b", "number"),
    (r"\bwho\b|\bwhom\b|\bwhose\b|\bwhich (?:person|employee|author|manager|officer|individual)\b"
     r"|\bname of the (?:person|author|manager|director|officer|ceo|cfo|chair|president|contact|signatory)\b", "person"),
    (r"\b(?:id|identifier|code|reference|ref|serial|account|invoice|order|policy|case|file|po|tracking|registration|"
     r"license|licence|contract|model|part|ticket|claim)\s+(?:number|no\.?|#|id|code)\b|\b(?:what|which) (?:id|code)\b", "code"),
    (r"^(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\b", "yesno"),
)
COMPATIBLE = {  # expected kind -> {candidate kind: fit}
    "date": {"date": 1.0, "year": 0.35},
    "year": {"year": 1.0},
    "money": {"money": 1.0, "number": 0.8, "percent": 0.2},
    "percent": {"percent": 1.0, "number": 0.55},
    "number": {"number": 1.0, "money": 0.7, "percent": 0.6, "year": 0.15},
    "person": {"person": 1.0, "phrase": 0.3},
    "code": {"code": 1.0, "number": 0.7, "phrase": 0.35},
    "phrase": {"phrase": 0.8, "person": 0.6, "code": 0.6, "date": 0.6, "money": 0.6, "number": 0.55,
               "percent": 0.6, "year": 0.45},
}
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'&.\-/]*[A-Za-z0-9]|[A-Za-z0-9]")
_LABEL = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ()/#.'&\-]{1,60}?)\s*(?::|\s-\s|\s{2,}|\.{3,})\s*(\S.*?)\s*$")
_CELL_SPLIT = re.compile(r"\s{2,}|\t|\s\|\s")


def stem(word: str) -> str:
    """A light, deterministic stem: lowercase, no possessive, no common plural/verb suffix."""
    w = word.lower().strip(".'-/")
    w = re.sub(r"'s$", "", w)
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("es", ""), ("s", ""), ("ing", ""), ("ed", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss") and w.isalpha():
            return w[: len(w) - len(suffix)] + keep
    return w.replace(",", "")


def words(text: str) -> list[str]:
    return _WORD.findall(text)


@dataclass(frozen=True)
class Question:
    """What the question asks for: expected kind, content terms, the asked attribute, item count."""

    text: str
    kind: str
    terms: tuple[str, ...]  # content words as written, in order (for queries)
    stems: tuple[str, ...]  # their stems, de-duplicated
    target: tuple[str, ...]  # stems of the attribute asked for ("invoice number", "revenue")
    phrases: tuple[str, ...] = ()  # quoted strings
    count: int = 1  # how many items are expected (0: a list of unknown length)


def analyze(question: str) -> Question:
    """Read a question into a Question (deterministic, rule based)."""
    text = " ".join(question.split())
    low = text.lower()
    phrases = tuple(p.strip() for p in re.findall(r"[\"“”]([^\"“”]{2,80})[\"“”]", text) if p.strip())
    kind = next((k for pattern, k in KIND_CUES if re.search(pattern, low)), "phrase")
    if kind == "money" and re.search(r"\bhow many\b", low) and not re.search(r"\b(dollars|euros|pounds)\b", low):
        kind = "number"
    terms: list[str] = []
    for w in words(text):
        lw = w.lower()
        if lw in STOPWORDS and not w.isupper() or (lw in NUMBER_WORDS and not w[0].isdigit()) or len(lw) < 2 and not w.isdigit():
            continue
        if w not in terms:
            terms.append(w)
    stems = tuple(dict.fromkeys(stem(t) for t in terms))
    count = 1
    m = re.search(r"\b(?:which|what|name|list|the)\s+(two|three|four|five|six|both|\d)\b", low)
    if m:
        count = NUMBER_WORDS.get(m.group(1), int(m.group(1)) if m.group(1).isdigit() else 1)
    elif re.search(r"^(?:list|name all|enumerate)\b|\b(?:what|which) are (?:the|all)\b|\ball of the\b|\bwhich .+ (?:are|were) ", low):
        count = 0
    return Question(text, kind, tuple(terms), stems, _target(low), phrases, count)


def _target(low: str) -> tuple[str, ...]:
    """Stems of the attribute asked for: content words after the question word, before a link word."""
    m = re.search(r"\b(?:what|which|who|whom|whose|when|how much|how many|list|name)\b(.*)", low)
    rest = words(m.group(1) if m else low)
    out: list[str] = []
    for w in rest:
        lw = w.lower()
        if lw in LINK_WORDS and out:
            break
        if lw in STOPWORDS or lw in NUMBER_WORDS:
            if out and lw in ("did", "does", "was", "were", "is", "are", "has", "have"):
                break
            continue
        out.append(stem(lw))
        if len(out) >= 4:
            break
    return tuple(out)


@dataclass
class Candidate:
    """One proposed answer span on one page, with its score (0..1) and why."""

    value: str
    kind: str
    file: str
    page: int
    score: float
    line: int
    why: str = ""
    extra: dict[str, float] = field(default_factory=dict)

    def key(self) -> str:
        return re.sub(r"[^a-z0-9]+", "", self.value.lower())


def _clean(value: str) -> str:
    return value.strip(" \t,;:.()[]\"'").strip()


def _spans(line: str, kind: str) -> list[tuple[int, str]]:
    """(position, text) of every span of ``kind`` on one line."""
    regex = {"date": DATE_RE, "year": YEAR_RE, "money": MONEY_RE, "percent": PERCENT_RE, "number": NUMBER_RE,
             "code": CODE_RE}.get(kind)
    if regex is not None:
        return [(m.start(), m.group().strip()) for m in regex.finditer(line)]
    if kind == "person":
        out = []
        for m in NAME_RE.finditer(line):
            parts = [p for p in m.group().split() if p.rstrip(".") not in ("Dr", "Mr", "Mrs", "Ms", "Prof", "Sir")]
            if parts and not any(p.strip(".") in NOT_NAME for p in parts if p[0].isupper()):
                out.append((m.start(), m.group()))
        return out
    return []


def proximity(lines: list[str], i: int, col_text: str, weights: dict[str, float]) -> tuple[float, list[str]]:
    """How close the question's terms are to line ``i``: 1 on the line (or its column header), less farther away."""
    found = {t: 0.0 for t in weights}
    line_sets = [{stem(w) for w in words(ln)} for ln in lines]
    page_set = set().union(*line_sets) if line_sets else set()
    col = {stem(w) for w in words(col_text)}
    for t in weights:
        if t in line_sets[i] or t in col:
            found[t] = 1.0
            continue
        for d, w in ((1, 0.7), (2, 0.55), (3, 0.4), (4, 0.3), (5, 0.3), (8, 0.2)):
            near = range(max(0, i - d), min(len(lines), i + d + 1))
            if any(t in line_sets[j] for j in near):
                found[t] = w
                break
        else:
            found[t] = 0.12 if t in page_set else 0.0
    total = sum(weights.values()) or 1.0
    return sum(weights[t] * v for t, v in found.items()) / total, [t for t, v in found.items() if v >= 0.7]


def _label_match(label: str, target: tuple[str, ...]) -> float:
    """Share of the asked attribute's words found in a label (0 when there is no attribute)."""
    if not target:
        return 0.0
    got = {stem(w) for w in words(label)}
    hits = sum(1 for t in target if t in got)
    generic = sum(1 for t in target if t in GENERIC_ATTRIBUTE)
    return hits / len(target) if hits > generic or hits == len(target) else 0.0


def _columns(lines: list[str], i: int) -> list[tuple[int, str, str]]:
    """Cells of a table row: (position, cell, aligned header cell) using the nearest header line above."""
    cells = [(m.start(), m.group()) for m in re.finditer(r"\S+(?: \S+)*", lines[i])]
    if len(cells) < 2 or len(_CELL_SPLIT.findall(lines[i].strip())) < 1:
        return []
    header: list[str] = []
    for j in range(i - 1, max(-1, i - 25), -1):
        above = [c.group() for c in re.finditer(r"\S+(?: \S+)*", lines[j])]
        if len(above) >= 2 and len(above) >= len(cells) - 1 and not any(NUMBER_RE.fullmatch(c) for c in above[:1] + above[-1:]
                                                                         if not YEAR_RE.fullmatch(c)):
            header = above
            break
    out = []
    for k, (pos, cell) in enumerate(cells):
        from_right = len(cells) - k
        head = header[-from_right] if header and from_right <= len(header) and k > 0 else ""
        out.append((pos, cell, head))
    return out


def find_candidates(text: str, file: str, page: int, q: Question, weights: dict[str, float],
                    rank: int = 0) -> list[Candidate]:
    """Every typed span on a page with its score; ``weights`` are the question stems' weights."""
    lines = [ln for ln in text.splitlines()]
    if not any(ln.strip() for ln in lines):
        return []
    fits = COMPATIBLE.get(q.kind, COMPATIBLE["phrase"])
    qstems = set(q.stems) | {stem(w) for w in words(q.text)}
    qlow = q.text.lower()
    rank_prior = 1.0 - min(rank, 10) * 0.01
    out: list[Candidate] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        cols = _columns(lines, i)
        label = _LABEL.match(line)
        label_sim = _label_match(label.group(1), q.target) if label else 0.0
        first_cell_sim = _label_match(cols[0][1], q.target) if cols else 0.0
        spans: list[tuple[int, str, str]] = []
        for kind in fits:
            spans += [(pos, s, kind) for pos, s in _spans(line, kind)]
        if label and "phrase" in fits:
            spans.append((label.start(2), _clean(label.group(2))[:80], "phrase"))
        for pos, cell, _head in cols[1:]:
            if "phrase" in fits:
                spans.append((pos, cell, "phrase"))
        seen_here: set[tuple[str, str]] = set()
        for pos, value, kind in spans:
            value = _clean(value)
            if not value or (value, kind) in seen_here:
                continue
            seen_here.add((value, kind))
            vstems = {stem(w) for w in words(value)}
            if not vstems or vstems <= qstems or value.lower() in qlow:
                continue  # the question's own words are not its answer
            head = next((h for p, c, h in cols if p <= pos < p + len(c) + 1), "")
            prox, near = proximity(lines, i, head, weights)
            in_value = label is not None and pos >= label.start(2)
            lab = label_sim if in_value else (first_cell_sim if cols and pos > cols[0][0] else 0.0)
            if head and _label_match(head, q.target) > lab:
                lab = _label_match(head, q.target)
            fit = fits[kind]
            if kind == "phrase" and len(words(value)) > 8:
                fit *= 0.5
            if kind == "number" and YEAR_RE.fullmatch(value):
                fit *= 0.4
            if kind == "person" and re.search(r"\b(?:by|from|signed|to|dear|attn|contact|author|prepared)\b[:\s]*$",
                                              line[:pos], re.I):
                lab = max(lab, 0.5)
            score = fit * (0.65 * prox + 0.35 * lab) * rank_prior
            why = f"{kind}, terms near: {', '.join(near) or 'none'}" + (", label/header match" if lab else "")
            out.append(Candidate(value, kind, file, page, round(score, 4), i, why))
    return out


def phrase_after_terms(text: str, file: str, page: int, q: Question, weights: dict[str, float]) -> list[Candidate]:
    """Fallback phrases: the words after the asked attribute ("the project is called X" -> X)."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        low = line.lower()
        for t in q.target:
            m = re.search(rf"\b{re.escape(t)}\w*\b(?:\s+(?:is|was|are|were|called|named|of|:|-))+\s+([^.;:()]{{2,60}})", low)
            if not m:
                continue
            value = " ".join(line[m.start(1):m.end(1)].split()[:6])
            prox, _ = proximity(lines, i, "", weights)
            out.append(Candidate(_clean(value), "phrase", file, page, round(0.45 * prox, 4), i, "phrase after term"))
    return out


def term_weights(stems: tuple[str, ...], df: dict[str, int], pages: int) -> dict[str, float]:
    """IDF-like weight of each question stem (rarer is heavier; unseen terms weigh the most)."""
    out = {}
    for s in stems:
        n = df.get(s, 0)
        out[s] = math.log(1 + (pages + 1) / (n + 0.5)) if pages else 1.0
    return out
