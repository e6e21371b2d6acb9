"""Typed answer-span extraction for the offline extractive baseline (no model).

A ``Question`` says what kind of answer is expected and which attribute is asked for (the
backend reads questions into it). ``find_candidates`` proposes typed spans on one page's text:
dates, years, times, money, percentages, numbers, quantities, codes, person and proper names,
acronym expansions, ``label: value`` pairs, table cells (row label plus column header) and
short phrases, each scored 0..1 by how well its kind fits and how close it sits to the
question's terms. Rule based and deterministic.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

UNIT_OF = {  # an asked quantity -> the units that measure it
    "capacity": r"k?Wh|m?Ah|l|ml|GB|TB|MB", "voltage": r"[mk]?V", "weight": r"k?g|t|tonnes?|lbs?", "heavy": r"k?g|t|lbs?",
    "length": r"[mck]?m|in|ft", "height": r"[mc]?m|in|ft", "width": r"[mc]?m|in|ft", "depth": r"[mc]?m|ft",
    "distance": r"k?m|mi|miles", "temperature": r"°?[CF]", "power": r"[kM]?W", "speed": r"km/h|mph|m/s",
    "memory": r"[MGT]B", "storage": r"[MGT]B", "pressure": r"bar|psi|k?Pa", "frequency": r"[kMG]?Hz",
    "life": r"hours?|days?|weeks?|months?|years?", "duration": r"minutes?|hours?|days?|weeks?|months?|years?",
    "long": r"minutes?|hours?|days?|weeks?|months?|years?|[mck]?m", "warranty": r"months?|years?",
    "guarantee": r"months?|years?", "term": r"months?|years?", "period": r"days?|weeks?|months?|years?",
    "old": r"years?", "often": r"seconds?|minutes?|hours?|days?|weeks?|months?",
}
GENERIC_ATTRIBUTE = frozenset({"name", "value", "amount", "number", "total", "date", "year", "figure"})
LABEL_SYNONYMS = {  # an asked attribute -> label words that name it on forms and letters
    "sent": ("from", "sender", "author"), "send": ("from", "sender"), "sender": ("from",),
    "wrote": ("from", "author", "by"), "written": ("from", "author", "by"), "author": ("from", "by", "prepared"),
    "prepared": ("by", "from", "author"), "issued": ("from", "date"), "recipient": ("to", "attn"),
    "addressed": ("to", "attn"), "received": ("to",), "signed": ("signature", "signed", "by"),
    "customer": ("bill", "client", "sold", "buyer"), "client": ("customer", "bill"), "supplier": ("vendor", "from"),
    "vendor": ("supplier", "seller"), "due": ("payable", "deadline"), "pay": ("due", "payable", "payment"),
    "stand": ("meaning",), "mean": ("meaning", "description"), "cost": ("price", "amount", "charge"),
    "price": ("cost", "rate", "unit"), "staff": ("employee", "headcount"), "employee": ("staff", "headcount"),
    "revenue": ("sale", "turnover"), "chaired": ("chair", "chairman", "chairperson"), "chair": ("chaired", "chairman"),
}
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
          r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
MONTHS = frozenset("January February March April May June July August September October November December".split())
DATE_RE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+\d{{4}}|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}[/.]\d{{1,2}}[/.](?:\d{{4}}|\d{{2}})|{_MONTH}\s+\d{{4}})(?![\w/.-]\d)")
YEAR_RE = re.compile(r"(?<![\w,.\-/])(?:1[89]|20)\d\d(?![\w,%/-]|\.\d)")
TIME_RE = re.compile(r"(?:between\s+)?\b\d{1,2}[:.]\d{2}\s?(?:[ap]\.?m\.?)?(?:\s*(?:and|to|-|–)\s*\d{1,2}[:.]\d{2}"
                     r"\s?(?:[ap]\.?m\.?)?)?(?!\d)", re.I)
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE = r"(?:\s?(?:million|billion|thousand|bn|mn|m|k)\b)?"
_MONEY1 = rf"(?:[$€£¥]\s?|\b(?:USD|EUR|GBP|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN)\s?)-?(?:{_NUM}){_SCALE}"
_MONEY2 = rf"(?<![\w.,])(?:{_NUM}){_SCALE}\s?(?:USD|EUR|GBP|CHF|dollars|euros|pounds)\b"
MONEY_RE = re.compile(rf"(?:between\s+)?(?:{_MONEY1}|{_MONEY2})(?:\s*(?:and|to|-|–)\s*(?:{_MONEY1}|{_MONEY2}))?", re.I)
PERCENT_RE = re.compile(rf"(?<![\w.,])[-+−]?(?:{_NUM})\s?(?:%|percent\b|per cent\b)", re.I)
NUMBER_RE = re.compile(rf"(?<![\w.,/:-])[-−]?(?:{_NUM})(?![\w%/:]|[.,]\d|-\d)")
UNITS = (r"seconds?|minutes?|hours?|days?|weeks?|months?|years?|mm|cm|km|m|kg|g|t|tonnes?|l|ml|V|mV|A|mA|Ah|mAh|W|"
         r"kW|kWh|MW|MWh|Hz|kHz|MHz|GHz|°C|°F|bar|psi|Pa|kPa|dB|MB|GB|TB|Mbit/s|km/h|mph|m²|sq ft|pages?|units?|"
         r"pieces?|pcs|people|persons|employees|sites|rooms|beds|seats")
QUANTITY_RE = re.compile(rf"(?<![\w.,])(?:{_NUM}|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b)"
                         rf"\s?(?:{UNITS})(?![\w²])", re.I)
CODE_RE = re.compile(r"(?<![\w-])(?:\d+(?:\.\d+){2,}|(?=[\w/.\-#]*\d)(?=[\w/.\-#]*[A-Za-z\-/#])[A-Za-z0-9][\w/.\-#]{1,30}"
                     r"[A-Za-z0-9])(?![\w-])")
_NAMEWORD = r"[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?"
NAME_RE = re.compile(rf"\b(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?{_NAMEWORD}(?:\s+[A-Z]\.)?(?:\s+(?:van|von|de|da|del|der|di|le|la)"
                     rf"(?=\s+[A-Z]))?(?:\s+{_NAMEWORD}){{1,2}}\b")
PROPER_RE = re.compile(r"\b[A-Z][\w&'.\-]*[\w&](?:(?:\s+(?:of|and|&|for|de|the|der|von))?\s+[A-Z0-9][\w&'.\-]*[\w&]){0,5}"
                       r"|\b[A-Z]{2,}\b")
NOT_NAME = MONTHS | frozenset("""
The A An This That These Those Inc Ltd LLC LLP GmbH AG Corp Corporation Company Co Group Report Annual Total Department
Office Street Road Avenue Table Figure Page Section Chapter Summary Invoice Memo Memorandum Subject Date From To Re
Dear Monday Tuesday Wednesday Thursday Friday Saturday Sunday University Institute Bank Board Committee Project Plan
Policy Agreement Contract Order Purchase Net Gross Revenue Income Budget Quarter Fiscal Year North South East West
New United States Kingdom National International Global Services Systems Solutions Technologies Industries Holdings
Partners Limited Ministry Council City County Hospital School College Center Centre Program Programme Director
Manager Chief Officer President Executive Vice Head Chair Chairman Secretary Treasurer Approved Prepared Signed
Sincerely Regards Best Thank Thanks Please Note Notes Key Main General Final Draft Internal Public Private Meeting
Minutes Supervisory Management Service Sales Financial Statement Balance Sheet Customer Item Description Amount
In On At For By With If As It We Our All Any No Yes Phone Email Fax Tel Address Yours Kind Attn Attention
Lane Drive Way Place Square Park Court Boulevard Flat Suite Building Floor Hall Station Room Trust Property Properties
Works Civil Logistics Trading Capital Fund Foundation Association Society Agency Authority Consortium Monitoring
Insurance Energy Health Medical Construction Engineering Consulting Software Media Studio Labs Laboratory Market
""".split())
COMPATIBLE = {  # expected kind -> {candidate kind: fit}
    "date": {"date": 1.0, "year": 0.3},
    "year": {"year": 1.0, "date": 0.3},
    "time": {"time": 1.0, "phrase": 0.3},
    "money": {"money": 1.0, "number": 0.8, "quantity": 0.3, "percent": 0.2},
    "percent": {"percent": 1.0, "number": 0.5},
    "number": {"number": 1.0, "quantity": 0.75, "money": 0.6, "percent": 0.55, "year": 0.15},
    "quantity": {"quantity": 1.0, "number": 0.6, "money": 0.5, "percent": 0.4, "phrase": 0.3},
    "person": {"person": 1.0, "proper": 0.55},
    "org": {"proper": 1.0, "person": 0.4, "phrase": 0.45},
    "place": {"proper": 1.0, "phrase": 0.45},
    "code": {"code": 1.0, "number": 0.55, "phrase": 0.35},
    "expansion": {"expansion": 1.0, "phrase": 0.5},
    "phrase": {"phrase": 0.8, "proper": 0.7, "person": 0.65, "code": 0.7, "quantity": 0.7, "date": 0.6, "money": 0.6,
               "number": 0.55, "percent": 0.6, "time": 0.6, "year": 0.45},
}
SPAN_RES = {"date": DATE_RE, "year": YEAR_RE, "time": TIME_RE, "money": MONEY_RE, "percent": PERCENT_RE,
            "number": NUMBER_RE, "quantity": QUANTITY_RE, "code": CODE_RE, "person": NAME_RE, "proper": PROPER_RE}
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'&.\-/]*[A-Za-z0-9]|[A-Za-z0-9]")
_PAIR = re.compile(r"(?<![\w\-])([A-Z][\w()/#.%'&\-]*(?: (?:[a-z(][\w()/#.%'&\-]*|[A-Z]{2,5}\b)){0,4}) ?:(?!\d)\s*")
_VALUE_TOK = re.compile(r"^[(+−-]?[$€£¥]?\d[\d,.]*(?:%|[kKmMbB]n?)?\)?$|^[-–—]$|^n/?a$", re.I)
_CURRENCY = re.compile(r"^(?:EUR|USD|GBP|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN)$")
_KEY_TOK = re.compile(rf"^(?:(?:19|20)\d\d[a-z]?|Q[1-4]|H[12]|FY\s?\d{{2,4}}|{_MONTH})$")
_ORG_SUFFIX = (r"\b(?:Inc|Ltd|LLC|LLP|PLC|GmbH|AG|SE|SA|SAS|BV|NV|Corp|Corporation|Company|Co|Group|Trust|Partners|"
               r"Associates|Consortium|Bank|Services|Solutions|Systems|Works|Industries|Holdings|Foundation|Institute|"
               r"University|Agency|Authority|Council|Society|Association|Labs?|Technologies|Logistics|Trading)\b\.?")
_HONORIFIC = frozenset({"Dr", "Mr", "Mrs", "Ms", "Prof"})


def stem(word: str) -> str:
    """A light, deterministic stem: lowercase, no possessive, no common plural or verb suffix."""
    w = re.sub(r"'s$", "", word.lower().strip(".'-/"))
    if w.isalpha() and len(w) > 4 and not w.endswith("ss"):
        for suffix, keep in (("ies", "y"), ("ing", ""), ("es", "e"), ("ed", ""), ("s", "")):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                return w[: len(w) - len(suffix)] + keep
    elif w.isalpha() and len(w) == 4 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w.replace(",", "")


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def stems_of(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in words(text))


_LABEL_SYN = {stem(k): tuple(stem(v) for v in vs) for k, vs in LABEL_SYNONYMS.items()}


@dataclass(frozen=True)
class Question:
    """What a question asks for: expected kind, content terms, the asked attribute, item count."""

    text: str
    kind: str
    terms: tuple[str, ...]  # content words as written, in order (for queries)
    stems: tuple[str, ...]  # their stems, de-duplicated
    target: tuple[str, ...]  # stems of the attribute asked for ("invoice number", "revenue")
    phrases: tuple[str, ...] = ()  # quoted strings
    count: int = 1  # how many items are expected (0: a list of unknown length)
    alts: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)  # stem -> synonyms (stem tuples)


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

    def key(self) -> str:
        return re.sub(r"[^a-z0-9]+", "", self.value.lower())


def _clean(value: str) -> str:
    return " ".join(value.split()).strip(" \t,;:.([]\"'").strip()


def _kind_spans(text: str, kind: str, limit: int) -> list[tuple[int, str]]:
    """(position, text) of every span of ``kind`` starting before ``limit``."""
    out = []
    for m in SPAN_RES[kind].finditer(text):
        if m.start() >= limit:
            break
        value = m.group()
        if kind in ("person", "proper"):
            parts = [p for p in value.split() if p.rstrip(".") not in _HONORIFIC]
            caps = [p for p in parts if p[:1].isupper()]
            if not caps or all(p.strip(".") in NOT_NAME for p in caps) or (kind == "person" and any(
                    p.strip(".") in NOT_NAME for p in caps)):
                continue
        out.append((m.start(), value))
    return out


def _expansions(line: str, q: Question) -> list[tuple[int, str]]:
    """Word runs whose initials spell an acronym of the question ("MQTT" -> "Message Queuing Telemetry Transport")."""
    out = []
    tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"[A-Za-z][\w']*", line)]
    for acro in (t for t in q.terms if t.isupper() and 2 <= len(t) <= 8 and t.isalpha()):
        for i in range(len(tokens)):
            letters, j = "", i
            while j < len(tokens) and len(letters) < len(acro):
                w = tokens[j][2]
                if not (letters and w.lower() in ("of", "and", "for", "to", "the", "in", "on", "a")):
                    letters += w[0].upper()
                j += 1
            if letters == acro.upper() and j - i >= 2 and tokens[i][2][0].upper() == acro[0]:
                out.append((tokens[i][0], line[tokens[i][0]:tokens[j - 1][1]]))
    return out


class Bag:
    """The stems of a text as a set (single words) and as a spaced string (phrases)."""

    def __init__(self, text: str = "", stems: tuple[str, ...] | None = None) -> None:
        seq = stems if stems is not None else stems_of(text)
        self.set, self.seq = set(seq), " " + " ".join(seq) + " "

    def credit(self, t: str, alts: dict[str, tuple[tuple[str, ...], ...]]) -> float:
        """1 when stem ``t`` is here, 0.8 when one of its synonyms is (a phrase: its words in order), else 0."""
        if t in self.set:
            return 1.0
        return 0.8 if any(" " + " ".join(alt) + " " in self.seq for alt in alts.get(t, ())) else 0.0


def proximity(bags: list[Bag], i: int, extra: Bag, weights: dict[str, float], page: Bag,
              alts: dict[str, tuple[tuple[str, ...], ...]] | None = None) -> tuple[float, float, list[str]]:
    """(local, page, near): the question's terms on line ``i`` or its header (1) or nearby (less), on the page."""
    alts = alts or {}
    local = on_page = 0.0
    near: list[str] = []
    for t, weight in weights.items():
        got = max(bags[i].credit(t, alts), extra.credit(t, alts))
        for d, w in ((1, 0.75), (2, 0.6), (3, 0.45), (5, 0.35), (8, 0.25)):
            if got >= w:
                break
            lo, hi = max(0, i - d), min(len(bags), i + d + 1)
            got = max(got, w * max((bags[j].credit(t, alts) for j in range(lo, hi)), default=0.0))
        local += weight * got
        on_page += weight * page.credit(t, alts)
        if got >= 0.75:
            near.append(t)
    total = sum(weights.values()) or 1.0
    return local / total, on_page / total, near


def label_match(label: str, q: Question) -> float:
    """Share of the asked attribute's words a label names (half when only generic words like 'total' match)."""
    if not q.target or not label:
        return 0.0
    bag = Bag(label)
    credit = {t: max(bag.credit(t, q.alts), 0.9 if any(s in bag.set for s in _LABEL_SYN.get(t, ())) else 0.0)
              for t in q.target}
    share = sum(credit.values()) / len(q.target)
    return share if any(c and t not in GENERIC_ATTRIBUTE for t, c in credit.items()) or all(credit.values()) else share / 2


def _pairs(line: str) -> list[tuple[str, int, str]]:
    """``label: value`` pairs on a line, several per line on forms: (label, value position, value)."""
    marks = list(_PAIR.finditer(line))
    out = []
    for n, m in enumerate(marks):
        end = marks[n + 1].start() if n + 1 < len(marks) else len(line)
        value = line[m.end():end]
        if value.strip():
            out.append((m.group(1).strip(), m.end() + len(value) - len(value.lstrip()), value.strip()))
    return out


def _tokens(line: str) -> list[tuple[int, str]]:
    """Cells of a single-spaced line: a currency code joins the number after it."""
    toks = [(m.start(), m.group()) for m in re.finditer(r"\S+", line)]
    out: list[tuple[int, str]] = []
    for pos, tok in toks:
        if out and _CURRENCY.match(out[-1][1]) and _VALUE_TOK.match(tok):
            out[-1] = (out[-1][0], out[-1][1] + " " + tok)
        else:
            out.append((pos, tok))
    return out


def _keys(line: str) -> list[str]:
    """The trailing column keys of a header line: years, quarters, dates ("Q1 2023", "31 Dec 2024" as one key)."""
    toks = [t for _, t in _tokens(line)]
    keys: list[str] = []
    while toks:
        tok = toks[-1]
        first = keys[0].split(" ")[0] if keys else ""
        if keys and (YEAR_RE.fullmatch(first) and re.fullmatch(rf"{_MONTH}|Q[1-4]|H[12]", tok)
                     or re.fullmatch(_MONTH, first) and re.fullmatch(r"\d{1,2}\.?", tok)):
            keys[0] = f"{tok} {keys[0]}"
        elif _KEY_TOK.match(tok):
            keys.insert(0, tok)
        else:
            break
        toks.pop()
    return keys


def table_row(lines: list[str], i: int) -> tuple[str, list[tuple[int, str, str]]]:
    """(row label, [(position, cell, column header)]) of line ``i`` read as a table row.

    A row is a label and a trailing run of values; its header is the nearest line above that
    ends in column keys (years, quarters, dates), else the nearest line of words, right-aligned.
    """
    line = lines[i]
    toks = _tokens(line)
    j = len(toks)
    while j > 0 and (_VALUE_TOK.match(toks[j - 1][1]) or _CURRENCY.match(toks[j - 1][1].split(" ")[0])
                     and _VALUE_TOK.match(toks[j - 1][1].split(" ")[-1])):
        j -= 1
    values = toks[j:]
    if not values or j == 0 and len(values) < 2:
        return "", []
    label = line[: values[0][0]].strip()
    keys: list[str] = []
    for k in range(i - 1, max(-1, i - 30), -1):
        keys = _keys(lines[k])
        if len(keys) >= 2:
            break
    if len(keys) < 2:  # no column keys: right-align the words of the nearest header-like line
        keys = next((t for t in ([w for _, w in _tokens(lines[k])] for k in range(i - 1, max(-1, i - 15), -1))
                     if len(values) <= len(t) <= 12 and not any(_VALUE_TOK.match(w) for w in t)), [])
    heads = [keys[n - len(values)] if keys and len(values) - n <= len(keys) else "" for n in range(len(values))]
    return label, [(p, c, h) for (p, c), h in zip(values, heads, strict=True)]


def find_candidates(text: str, file: str, page: int, q: Question, weights: dict[str, float],
                    rank: int = 0, exclude: set[str] | None = None, common: set[str] | None = None) -> list[Candidate]:
    """Every typed span on a page with its score; ``weights`` are the question stems' weights.

    ``exclude``: stems that cannot be the answer (the whole question's); ``common``: words the
    corpus also writes in lower case (so not names); the page's own words when None.
    """
    lines = text.splitlines()
    if not any(ln.strip() for ln in lines):
        return []
    common = common if common is not None else lowercase_words(text)
    fits = COMPATIBLE.get(q.kind, COMPATIBLE["phrase"])
    qstems = (exclude or set()) | set(stems_of(q.text))
    qyears = set(YEAR_RE.findall(q.text))
    bags = [Bag(ln) for ln in lines]
    page_bag = Bag(stems=tuple(x for b in bags for x in b.seq.split()))
    specifiers = {stem(w) for w in words(q.text) if any(ch.isdigit() for ch in w)} | set(q.target)
    rank_prior = 1.0 - min(rank, 10) * 0.01
    units = "|".join(UNIT_OF[w] for w in dict.fromkeys([*q.target, *(stem(w) for w in words(q.text.lower()))])
                     if w in UNIT_OF)
    out: list[Candidate] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        joined = line + (" " + nxt if nxt else "")
        row_label, cells = table_row(lines, i)
        if len(words(row_label)) > 8:
            row_label = ""
        pairs = _pairs(line)
        dates = [(m.start(), m.end()) for m in DATE_RE.finditer(joined)] + \
                [(m.start(), m.end()) for m in TIME_RE.finditer(joined)]
        spans: list[tuple[int, str, str]] = []
        for kind in fits:
            if kind in SPAN_RES:
                spans += [(pos, s, kind) for pos, s in _kind_spans(joined, kind, len(line))]
        if "expansion" in fits:
            spans += [(pos, s, "expansion") for pos, s in _expansions(joined, q)]
        spans += [(pos, value[:80], "value") for _, pos, value in pairs]
        if "phrase" in fits:
            spans += [(pos, c, "phrase") for pos, c, _ in cells]
        seen: set[tuple[str, str]] = set()
        for pos, value, kind in spans:
            value = _clean(value)
            vstems = set(stems_of(value))
            if not value or (value, kind) in seen or not vstems or vstems <= qstems:
                continue  # the question's own words are not its answer
            if kind in ("number", "money", "quantity", "percent") and any(a <= pos < b for a, b in dates):
                continue  # the day of a date or the hour of a time is no amount
            if kind == "number" and not line[:pos].strip() and re.match(r"\d{1,2}[.)]\s", line[pos:]):
                continue  # a section number
            seen.add((value, kind))
            cell = next((c for c in cells if c[0] <= pos < c[0] + len(c[1]) + 1), None)
            head = cell[2] if cell else ""
            local, on_page, near = proximity(bags, i, Bag(head), weights, page_bag, q.alts)
            before = line[max(0, pos - 40):pos]
            pair = next((p for p in reversed(pairs) if p[1] <= pos), None)
            lab = 0.8 * label_match(" ".join(words(before)[-4:]), q)
            if pair is not None:
                lab = max(lab, label_match(pair[0], q))
            elif cell is not None:
                lab = max(lab, label_match(row_label, q), label_match(head, q))
                if head and specifiers & set(stems_of(head)):  # a table cell: its column is one the question names
                    lab = max(lab, 0.5 + 0.5 * label_match(row_label, q))
            if kind in ("person", "proper") and re.search(r"\b(?:by|from|signed|author|chaired|led)\b[:\s]*$", before, re.I):
                lab = max(lab, 0.5)
            if q.kind == "place" and re.search(r"\b(?:in|at|near|to)\s+$", before):
                lab = max(lab, 0.5)
            fit = fits.get(kind, 0.0)
            if kind == "value":  # the whole value of a label the question names, whatever its type
                fit = max(fits.get("phrase", 0.3), 0.9 * lab if lab >= 0.5 else 0.0)
            if units and kind in ("quantity", "number"):
                fit *= 1.0 if re.search(rf"(?:{units})$", value) else 0.6
            beside = words(line[pos + len(value):pos + len(value) + 30])[:2] + words(before)[-2:]
            if q.target and set(q.target) & {stem(w) for w in beside} and kind != "value":
                lab = max(lab, 0.6)  # "Celia Marchetti (the Tenant)", "rent of GBP 1,150"
            if kind in ("phrase", "value") and len(words(value)) > 8:
                fit *= 0.5
            if kind in ("number", "money") and YEAR_RE.fullmatch(value):
                fit *= 0.3
            if kind == "person" and any(w.lower() in common for w in words(value) if w[:1].isupper() and "." not in w):
                fit *= 0.5  # a word also written in lower case is rarely part of a name
            if kind == "proper" and q.kind == "org":
                fit *= 1.0 if re.search(_ORG_SUFFIX, value) else 0.7
            if kind == "proper" and (len(value) <= 3 and q.kind != "code" or NAME_RE.fullmatch(value) and q.kind == "place"):
                fit *= 0.5
            context_years = set(YEAR_RE.findall(before[-14:] + " " + head))
            if qyears and context_years and not context_years & qyears:
                fit *= 0.6  # labelled with another year than the one asked about
            score = fit * (0.5 * local + 0.2 * on_page + 0.3 * lab) * rank_prior
            if score <= 0:
                continue
            why = f"{kind}; question terms on or near its line: {', '.join(near) or 'none'}"
            out.append(Candidate(value, kind, file, page, round(score, 4), i, why + ("; label match" if lab else "")))
    return out


def phrase_after_terms(text: str, file: str, page: int, q: Question, weights: dict[str, float]) -> list[Candidate]:
    """Fallback phrases: after the asked attribute ("the venue is the Old Mill"; "Building C" for "which
    building"), and the first cell of a row keyed by a code of the question ("E-22 Memory full ...")."""
    out = []
    lines = text.splitlines()
    bags = [Bag(ln) for ln in lines]
    page_bag = Bag(stems=tuple(x for b in bags for x in b.seq.split()))
    codes = [t for t in q.terms if re.search(r"\d", t) and re.search(r"[A-Za-z]", t) or t.isupper() and len(t) > 1]
    own = set(stems_of(q.text))
    for i, line in enumerate(lines):
        found: list[tuple[str, float, str]] = []
        for t in q.target:
            pattern = rf"\b{re.escape(t)}\w*(?:\s+(?:is|was|are|were|will be|called|named|means?|:|-|–))+\s+([^.;:()]{{2,60}})"
            found += [(m.group(1), 0.5, "the words after the asked attribute") for m in re.finditer(pattern, line, re.I)]
            found += [(m.group(), 0.7, "the asked attribute's name") for m in
                      re.finditer(rf"\b{re.escape(t)}\w*\s+(?:[A-Z0-9][\w.\-]{{0,3}}|[A-Z]?[\w.\-]*\d[\w.\-]*)\b", line, re.I)
                      if m.group()[:1].isupper()]
        for key in codes:
            m = re.match(rf"\s*{re.escape(key)}\s+(\S+(?:\s+[^\sA-Z]\S*){{0,5}})", line)
            if m:
                fit = 0.9 if weights.get(stem(key), 0) >= max(weights.get(stem(c), 0) for c in codes) else 0.6
                found.append((m.group(1), fit, f"the first cell of the row of {key}"))
        for value, fit, why in found:
            value = _clean(" ".join(value.split()[:6]))
            if value and not set(stems_of(value)) <= own:
                local, on_page, _ = proximity(bags, i, Bag(), weights, page_bag, q.alts)
                out.append(Candidate(value, "phrase", file, page, round(fit * (0.7 * local + 0.3 * on_page), 4), i, why))
    return out


def lowercase_words(text: str) -> set[str]:
    """Words of three or more letters that ``text`` writes in lower case."""
    return {w for w in re.findall(r"\b[a-z][a-z'-]{2,}\b", text)}


def term_weights(q: Question, df: dict[str, int], pages: int) -> dict[str, float]:
    """IDF-like weight of each question stem (rarer is heavier), the asked attribute counting 1.5x."""
    out = {}
    for s in q.stems:
        idf = math.log(1 + (pages + 1) / (df.get(s, 0) + 0.5)) if pages else 1.0
        out[s] = idf * (1.5 if s in q.target else 1.0)
    return out
