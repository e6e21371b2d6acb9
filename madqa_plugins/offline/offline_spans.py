"""What every answer type of the offline reader shares: questions, candidates, stems, term proximity.

A ``Question`` says what kind of answer is expected and which attribute is asked for (the
backend reads questions into it); a ``Candidate`` is one proposed span on one page with its
score. ``proximity`` measures how close a line sits to the question's terms (weighted by their
corpus rarity, ``term_weights``); ``label_match`` how well a label names the asked attribute.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field

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

_PLAIN = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2010": "-", "\u2011": "-",
                        "\u2013": "-", "\u2212": "-", "\u00ad": None})
_WORD = re.compile(r"[^\W_][\w'&.\-/]*[^\W_]|[^\W_]")


def stem(word: str) -> str:
    """A light, deterministic stem: lowercase, no possessive, no common plural or verb suffix; a plural's
    verb form too, so "settings" stems as "setting" does."""
    once = _stem(word)
    return _stem(once) if once.endswith(("ing", "ed")) and once != word.lower() else once


def _stem(word: str) -> str:
    w = re.sub(r"'s$", "", word.lower().strip(".'-/"))
    if w.isalpha() and len(w) > 4 and not w.endswith("ss"):
        for suffix, keep in (("ies", "y"), ("ied", "y"), ("ing", ""), ("es", "e"), ("ed", ""), ("s", "")):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                return w[: len(w) - len(suffix)] + keep
    elif w.isalpha() and len(w) == 4 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w.replace(",", "")


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def readable(text: str) -> str:
    """Page text as the reader reads it: ligatures unfolded ("ﬁles" -> "files"), curly quotes and
    dashes straightened, soft hyphens dropped (NFKC plus a few), so words match the question's."""
    return unicodedata.normalize("NFKC", text).translate(_PLAIN)


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
    local: float = 0.0  # weighted share of the question's terms on or near its line (0..1)
    on_page: float = 0.0  # weighted share of the question's terms anywhere on its page (0..1)
    label: float = 0.0  # how well a label, row or column header names the asked attribute (0..1)
    fit: float = 0.0  # how well the span's kind fits the expected kind (0..1)
    support: int = 1  # how many shown pages propose the same value
    pos: int = 0  # where on its line the span starts (ties go to the earlier one)
    cell: bool = False  # read as a table's cell (under a column header), not from running text

    def key(self) -> str:
        return re.sub(r"[^a-z0-9]+", "", self.value.lower())



def clean(value: str) -> str:
    """A span without surrounding punctuation, a list bullet, or a bracket it does not close."""
    value = re.sub(r"^\s*(?:[-*\u2022\u2013>]\s+)+", "", " ".join(value.split()))
    value = value.strip(" \t,;:.[]\"'").strip()
    while value[:1] == "(" and value.count("(") > value.count(")"):
        value = value[1:].strip(" \t,;:.[]\"'")
    while value[-1:] == ")" and value.count(")") > value.count("("):
        value = value[:-1].strip(" \t,;:.[]\"'")
    return value



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
    short = {w for w in bag.set if w.isalpha() and len(w) >= 3}  # "Pos", "Desc", "Max": a header's abbreviations
    credit = {t: max(bag.credit(t, q.alts), 0.9 if any(s in bag.set for s in _LABEL_SYN.get(t, ())) else 0.0,
                     0.8 if any(len(w) < len(t) and t.startswith(w) for w in short) else 0.0)
              for t in q.target}
    share = sum(credit.values()) / len(q.target)
    return share if any(c and t not in GENERIC_ATTRIBUTE for t, c in credit.items()) or all(credit.values()) else share / 2




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

