"""An answer checked on its pages: is each answer item written on the page it cites, on another page the
agent saw, in another scale there, or on no page seen? Pure: answer items and page texts in, a verdict per item out.

The comparison forgives what differs between a typed answer and a PDF's text layer or OCR: case, spacing
and line breaks, hyphenation at a line end, ligatures, thousands separators and decimal marks (``148,612``
= ``148.612`` = ``148 612``), currency and units written out or abbreviated (``EUR`` = ``€`` = ``euros``,
``%`` = ``percent``), and dates in their common forms (``2024-03-31`` = ``31 March 2024`` = ``March 31,
2024`` = ``31.03.2024``). What it does not forgive is a value moved to another scale or unit: ``EUR 148.6
million`` where the page prints ``148,612`` in a table in EUR thousand is *not* as written (verdict
``scale``): MADQA asks for the answer as the document writes it. An item longer than ``MAX_ITEM_CHARS`` is
no short extractive answer (verdict ``long``), wherever it is found.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from madqa.text import quote_on_page
from madqa.types import ItemCheck, PageRef

MAX_ITEM_CHARS = 200  # MADQA's answers are short values; longer is a passage, not an extractive answer

_SEPARATORS = ",.\u00a0\u202f' "
# a number as printed: one thousands separator used throughout (148,612,000 / 148.612 / 148 612), an
# optional decimal part with the other mark; a bare run of digits with a decimal part; never inside a word
_NUMBER = re.compile(
    r"(?<![\w.,])(?:\d{1,3}(?P<sep>[,.\u00a0\u202f' ])\d{3}(?:(?P=sep)\d{3})*(?:[.,]\d+)?|\d+(?:[.,]\d+)?)(?![\w])")
_WORD = re.compile(r"[^\W\d_]+|[€$£¥%]")
_SOFT = re.compile(r"[\u00ad\u200b]")
_LINE_HYPHEN = re.compile(r"(\w)-[ \t]*\n[ \t]*(\w)")

CURRENCIES = {"€": "eur", "eur": "eur", "euro": "eur", "euros": "eur", "$": "usd", "usd": "usd", "dollar": "usd",
              "dollars": "usd", "us": "usd", "£": "gbp", "gbp": "gbp", "pound": "gbp", "pounds": "gbp",
              "¥": "jpy", "jpy": "jpy", "yen": "jpy", "chf": "chf", "francs": "chf"}
UNITS = {"%": "percent", "percent": "percent", "pct": "percent", "per": "per", "cent": "cent"}
SCALES = {"thousand": 1e3, "thousands": 1e3, "k": 1e3, "tsd": 1e3, "tausend": 1e3, "teur": 1e3, "keur": 1e3,
          "million": 1e6, "millions": 1e6, "mn": 1e6, "mio": 1e6, "meur": 1e6, "mln": 1e6,
          "billion": 1e9, "billions": 1e9, "bn": 1e9, "mrd": 1e9, "milliarden": 1e9}
_MONTHS = {name: n for n, names in enumerate((
    ("january", "jan", "januar", "janvier"), ("february", "feb", "februar", "février", "fevrier"),
    ("march", "mar", "märz", "maerz", "mars"), ("april", "apr", "avril"), ("may", "mai"),
    ("june", "jun", "juni", "juin"), ("july", "jul", "juli", "juillet"), ("august", "aug", "août", "aout"),
    ("september", "sep", "sept", "septembre"), ("october", "oct", "oktober", "okt", "octobre"),
    ("november", "nov", "novembre"), ("december", "dec", "dezember", "dez", "décembre", "decembre")), 1)
    for name in names}
_MONTH = "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True))
_DATES = (  # (pattern, order of its groups: y m d), most specific first
    (re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)"), "ymd"),
    (re.compile(r"(?<!\d)(\d{1,2})[./](\d{1,2})[./](\d{4})(?!\d)"), "dmy"),
    (re.compile(rf"(?<!\w)(\d{{1,2}})(?:st|nd|rd|th)?\.?\s+({_MONTH})\.?,?\s+(\d{{4}})(?!\d)", re.I), "dMy"),
    (re.compile(rf"(?<!\w)({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})(?!\d)", re.I), "Mdy"),
)


@dataclass(frozen=True)
class Token:
    """A word or a number of a text, reduced for comparison; ``values`` are a number's possible readings."""

    key: str
    values: frozenset[float] = frozenset()
    decimals: int = 0  # digits after the decimal mark, in the reading with a decimal part (0: none)
    scale: float | None = None  # a number's scale word after it ("7.5 million": 1e6); None: none written

    @property
    def number(self) -> bool:
        return bool(self.values)

    def same(self, other: Token) -> bool:
        if self.number or other.number:  # "7,500 thousand" is not "7.5 million" as written; "148,612" is "148,612 thousand"
            scales_agree = self.scale is None or other.scale is None or self.scale == other.scale
            return bool(self.values & other.values) and scales_agree
        return self.key == other.key


def _readings(text: str) -> tuple[frozenset[float], int]:
    """A printed number's possible values (``148,612``: 148612 or 148.612) and its decimals as a decimal."""
    digits = re.sub(r"[\u00a0\u202f' ]", "", text)
    values: set[float] = set()
    decimals = 0
    marks = [c for c in digits if c in ",."]
    if not marks:
        return frozenset({float(digits)}), 0
    last = max(digits.rfind(","), digits.rfind("."))
    head, tail = digits[:last], digits[last + 1:]
    if len(set(marks)) == 1 and len(marks) > 1:  # 148,612,000: thousands only
        return frozenset({float(digits.replace(marks[0], ""))}), 0
    if len(set(marks)) == 2:  # 19,218.5 / 19.218,5: the last mark is the decimal one
        return frozenset({float(re.sub(r"[,.]", "", head) + "." + tail)}), len(tail)
    values.add(float(head + "." + tail))  # one mark: a decimal mark ...
    decimals = len(tail)
    if len(tail) == 3:  # ... or a thousands separator (148,612 / 148.612)
        values.add(float(head + tail))
    return frozenset(values), decimals


def prepare(text: str) -> str:
    """``text`` as compared: NFKC (ligatures spelt out), case folded, line-end hyphenation joined."""
    text = unicodedata.normalize("NFKC", _SOFT.sub("", text)).casefold()
    return _LINE_HYPHEN.sub(r"\1\2", text)


def tokens(text: str) -> list[Token]:
    """The words and numbers of (prepared) ``text`` in order; currency and unit words by one key each."""
    found: list[tuple[int, Token]] = []
    taken: list[tuple[int, int]] = []
    for m in _NUMBER.finditer(text):
        values, decimals = _readings(m.group())
        found.append((m.start(), Token(m.group(), values, decimals)))
        taken.append(m.span())
    for m in _WORD.finditer(text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        word = m.group()
        found.append((m.start(), Token(CURRENCIES.get(word) or UNITS.get(word) or word)))
    ordered = [t for _, t in sorted(found, key=lambda pair: pair[0])]
    return [replace(t, scale=SCALES[ordered[n + 1].key]) if t.number and n + 1 < len(ordered)
            and ordered[n + 1].key in SCALES else t for n, t in enumerate(ordered)]


def _essential(toks: Iterable[Token]) -> list[Token]:
    """What must match: words and numbers, without currency, unit and scale words (a table's header
    carries those: ``148,612`` under "in EUR thousand" is the item ``EUR 148,612 thousand`` as written)."""
    return [t for t in toks if t.number or t.key not in _NOISE]


_NOISE = frozenset({*CURRENCIES.values(), *UNITS.values(), *SCALES})


def dates(text: str) -> set[tuple[int, int, int]]:
    """Every date written in (prepared) ``text``, as (year, month, day); an ambiguous 03/04/2024 both ways."""
    found: set[tuple[int, int, int]] = set()
    for pattern, order in _DATES:
        for m in pattern.finditer(text):
            parts = dict(zip(order, m.groups(), strict=True))
            month = _MONTHS.get(parts["M"].casefold(), 0) if "M" in parts else int(parts["m"])
            year, day = int(parts["y"]), int(parts["d"])
            for d, mo in {(day, month), (month, day)} if order == "dmy" else {(day, month)}:
                if 1 <= mo <= 12 and 1 <= d <= 31:
                    found.add((year, mo, d))
    return found


def written_on(item: str, page_text: str) -> bool:
    """True when ``item`` is written on the page, up to the forgiven differences (the module's docstring)."""
    item_p, page_p = prepare(item), prepare(page_text)
    # words only (no digits: "612" is not written in "148,612"), spelt or split differently ("e-mail", "email")
    if not any(c.isdigit() for c in item_p) and len(tokens(item_p)) > 1 and quote_on_page(item, page_text):
        return True
    item_dates = dates(item_p)
    if item_dates and re.sub(r"\W+", "", _strip_dates(item_p)) == "":  # the item is a date
        return bool(item_dates & dates(page_p))
    want = _essential(tokens(item_p))
    if not want:
        return False
    have = _essential(tokens(page_p))
    return any(_in_order(want, have[start:start + _window(len(want))]) for start in range(len(have))
               if want[0].same(have[start]))


def _window(n: int) -> int:
    """Tokens of a page an item of ``n`` tokens may span: a table row's label and value are words apart
    (``EBIT 15,005`` in "Operating income (EBIT) 19,218 15,005"); one token matches only itself."""
    return 1 if n == 1 else 2 * n + 2


def _in_order(want: Sequence[Token], have: Sequence[Token]) -> bool:
    """Whether ``want`` is a subsequence of ``have``."""
    at = 0
    for token in have:
        if at < len(want) and want[at].same(token):
            at += 1
    return at == len(want)


def _strip_dates(text: str) -> str:
    for pattern, _ in _DATES:
        text = pattern.sub(" ", text)
    return text


def scaled_on(item: str, page_text: str) -> str | None:
    """The page's number that is ``item``'s value in another scale (``EUR 19 million`` ~ ``19,218`` in a table in
    EUR thousand; ``7,500,000`` ~ ``7.5 million``), when the item is one number not written as such; else None.
    A page number without a scale word is tried at every scale only for an item that has one."""
    toks = tokens(prepare(item))
    numbers = [t for t in toks if t.number]
    if len(numbers) != 1:
        return None
    number = numbers[0]
    scale = number.scale or 1.0
    for candidate in (t for t in tokens(prepare(page_text)) if t.number):
        options = [candidate.scale] if candidate.scale else ([1.0, 1e3, 1e6, 1e9] if number.scale else [])
        for page_scale in options:
            if page_scale == scale:
                continue
            for page_value in candidate.values:
                in_item_scale = page_value * page_scale / scale
                if any(abs(round(in_item_scale, number.decimals) - v) < 1e-9 for v in number.values):
                    return candidate.key
    return None


def item_flag(check: ItemCheck) -> str | None:
    """What the row's flags say of an answer item (None for one written on its cited page)."""
    shown = check.item if len(check.item) <= 60 else check.item[:57] + "..."
    where = f"{check.page.file} p.{check.page.page}" if check.page else ""
    return {
        "cited": None,
        "moved": f"answer {shown!r} is not on its cited page but on {where}: the citation moved there",
        "scale": f"answer {shown!r} is not written as such: {where} prints {check.written!r} (another scale or unit)",
        "unseen": f"answer {shown!r} is on no page the agent saw",
        "long": f"answer {shown!r} is {len(check.item):,} characters, not a short extractive answer "
                f"(at most {MAX_ITEM_CHARS})",
    }[check.verdict]


REPAIRED = frozenset({"unseen", "scale", "long"})  # verdicts of an answer not as MADQA asks: one repair turn


def needs_repair(checks: Sequence[ItemCheck]) -> bool:
    """Whether an answer is not as MADQA asks (an item on no page seen, in another scale, or too long)."""
    return any(c.verdict in REPAIRED for c in checks)


def check_answer(items: Sequence[str], cited: Sequence[PageRef], seen: Sequence[PageRef],
                 page_text: Callable[[PageRef], str]) -> tuple[ItemCheck, ...]:
    """Each answer item on the pages (``check_item``); a page's text is read once however many items ask."""
    texts: dict[PageRef, str] = {}

    def text(ref: PageRef) -> str:
        if ref not in texts:
            texts[ref] = page_text(ref)
        return texts[ref]

    return tuple(check_item(item, cited, seen, text) for item in items)


def check_item(item: str, cited: Sequence[PageRef], seen: Sequence[PageRef],
               page_text: Callable[[PageRef], str]) -> ItemCheck:
    """``item`` looked for on its cited pages first, then on every other page seen (in the order seen)."""
    if len(item) > MAX_ITEM_CHARS:
        return ItemCheck(item, "long", next((r for r in [*cited, *seen] if written_on(item, page_text(r))), None))
    for ref in cited:
        if written_on(item, page_text(ref)):
            return ItemCheck(item, "cited", ref)
    others = [r for r in seen if r not in cited]
    for ref in others:
        if written_on(item, page_text(ref)):
            return ItemCheck(item, "moved", ref)
    for ref in [*cited, *others]:
        if (written := scaled_on(item, page_text(ref))) is not None:
            return ItemCheck(item, "scale", ref, written)
    return ItemCheck(item, "unseen")
