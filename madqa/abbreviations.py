"""Abbreviations defined in the documents themselves: "Field Service Report (FSR)" and "FSR (Field Service Report)".

Mined from each page at ingest time and stored per corpus generation (table ``abbreviations`` in
``pages.sqlite``), so a query strategy can expand "FSR" to the words a page spells out, or
contract them, using the corpus's own vocabulary rather than a general dictionary.

The long form is the last words before the parenthesis whose initials spell the short form
(minor words such as "of" skipped), else the Schwartz & Hearst (2003) rule: the short form's
characters matched right to left, the first one at the start of a word. Either way an
initial-letters check follows: the long form starts with the short form's first capital and its
word initials hold at least half of its capitals, in order. That keeps "revenue in 2024 (EUR)"
or "based in Texas (USA)" out, and lets "Capital Expenditure (CapEx)", "Electrostatic Discharge
(ESD)" and "Earnings Before Interest and Taxes (EBIT)" in.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable

# A short form: 2-10 letters/digits/&/-, starting with a capital; at least two capitals, a third of its letters.
_SHORT = r"[A-Z][A-Za-z0-9&\-]{1,9}"
_LONG_THEN_SHORT = re.compile(rf"\(\s*({_SHORT})\s*\)")
_SHORT_THEN_LONG = re.compile(rf"(?<![\w\-])({_SHORT})\s*\(\s*([^()]{{3,120}}?)\s*\)")
_WORD = re.compile(r"\S+")
TABLE = "abbreviations"
_MINOR = frozenset("of and the for to in on at by with a an de".split())


def _is_short(text: str) -> bool:
    capitals = sum(ch.isupper() for ch in text)
    return 2 <= len(text) <= 10 and capitals >= 2 and capitals * 3 >= sum(ch.isalpha() for ch in text)


def _schwartz_hearst(short: str, long: str) -> str | None:
    """The shortest tail of ``long`` that spells ``short`` (Schwartz & Hearst), or None."""
    s, i = len(short) - 1, len(long) - 1
    while s >= 0:
        c = short[s].lower()
        if not c.isalnum():
            s -= 1
            continue
        while i >= 0 and (long[i].lower() != c or (s == 0 and i > 0 and long[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i -= 1
        s -= 1
    start = long.rfind(" ", 0, i + 1) + 1
    return long[start:].strip()


def _initials_match(short: str, long: str) -> bool:
    """The long form starts with the short form's first capital and its word initials hold, in
    order, at least half of the short form's capitals ("Electrostatic Discharge" for ESD)."""
    initials = [w[0].upper() for w in re.split(r"[\s\-/]+", long) if w]
    capitals = [ch for ch in short if ch.isupper()]
    if not initials or not capitals or initials[0] != capitals[0]:
        return False
    at, matched = 0, 0
    for cap in capitals:
        if cap in initials[at:]:
            at = initials.index(cap, at) + 1
            matched += 1
    return matched * 2 >= len(capitals)


def _by_initials(short: str, words: list[str]) -> str | None:
    """The last few words whose initials spell the short form, minor words skipped (PPE)."""
    letters = [ch.upper() for ch in short if ch.isalpha()]
    for n in range(len(letters), len(letters) + 4):
        tail = words[-n:]
        if len(tail) < n or tail[0].lower() in _MINOR:
            continue
        initials = [w[0].upper() for w in tail if w.lower() not in _MINOR]
        if initials == letters:
            return " ".join(tail)
    return None


def _long_form(short: str, before: str) -> str | None:
    words = _WORD.findall(before)
    window = words[-min(len(short) + 5, 2 * len(short)):]
    candidate = _by_initials(short, window) or _schwartz_hearst(short, " ".join(window))
    if candidate is None:
        return None
    candidate = candidate.strip(" ,;:\"'“”")
    if (len(candidate.split()) < 2 and "-" not in candidate) or len(candidate) <= len(short):
        return None
    if not candidate[0].isalpha() or not _initials_match(short, candidate):
        return None
    return candidate


def mine(text: str) -> list[tuple[str, str]]:
    """Every (short, long) pair the text defines, in order, without repeats."""
    flat = " ".join(text.split())
    found: dict[tuple[str, str], None] = {}
    for match in _LONG_THEN_SHORT.finditer(flat):
        short = match.group(1).rstrip("-")
        if _is_short(short):
            long = _long_form(short, flat[max(0, match.start() - 300):match.start()])
            if long:
                found[(short, long)] = None
    for match in _SHORT_THEN_LONG.finditer(flat):
        short, inside = match.group(1).rstrip("-"), match.group(2).strip(" ,;:")
        if not _is_short(short) or _LONG_THEN_SHORT.fullmatch(f"({inside})"):
            continue
        if len(inside.split()) >= 2 and _schwartz_hearst(short, inside) == inside and _initials_match(short, inside):
            found[(short, inside)] = None
    return list(found)


# --- storage in a generation's pages.sqlite ---------------------------------------------------

def create_table(db: sqlite3.Connection) -> None:
    db.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (short TEXT, long TEXT, file TEXT, page INTEGER)")


def store(db: sqlite3.Connection, pages: Iterable[tuple[str, int, str]]) -> None:
    """Mine and insert the pairs of (file, page, text) pages."""
    db.executemany(f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?)",
                   [(short, long, file, page) for file, page, text in pages for short, long in mine(text or "")])


def copy_file(db: sqlite3.Connection, file: str, schema: str = "prev") -> None:
    """Carry an unchanged file's pairs over from the attached previous generation.

    A previous generation made before this table existed has none: mine the copied page texts.
    """
    has_table = db.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE type='table' AND name=?",
                           (TABLE,)).fetchone()
    if has_table:
        db.execute(f"INSERT INTO {TABLE} SELECT short, long, file, page FROM {schema}.{TABLE} WHERE file=?", (file,))
    else:
        store(db, db.execute("SELECT file, page, text FROM pages WHERE file=?", (file,)).fetchall())
