"""Answer type table cells and form fields for the offline reader: ``label: value`` pairs, and table
rows read by their row label and column header (years, quarters, dates, or the header line's words),
or, for a table of words, by its columns: the page's stored text keeps a gap of two or more spaces
between cells (the text-layer reader lays words out by position), so a row's cells line up with the
cells of the header line above it."""

from __future__ import annotations

import re
from typing import NamedTuple

from madqa_plugins.offline.offline_dates import MONTH, YEAR_RE

_PAIR = re.compile(r"(?<![\w\-])([A-Z][\w()/#.%'&\-]*(?: (?:[a-z(][\w()/#.%'&\-]*|[A-Z]{2,5}\b)){0,4}) ?:(?!\d)\s*")
_VALUE_TOK = re.compile(r"^[(+−-]?[$€£¥]?\d[\d,.]*(?:%|[kKmMbB]n?)?\)?$|^[-–—]$|^n/?a$", re.I)
_CURRENCY = re.compile(r"^(?:EUR|USD|GBP|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN)$")
_KEY_TOK = re.compile(rf"^(?:(?:19|20)\d\d[a-z]?|Q[1-4]|H[12]|FY\s?\d{{2,4}}|{MONTH})$")


def label_pairs(line: str) -> list[tuple[str, int, str]]:
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
        if keys and (YEAR_RE.fullmatch(first) and re.fullmatch(rf"{MONTH}|Q[1-4]|H[12]", tok)
                     or re.fullmatch(MONTH, first) and re.fullmatch(r"\d{1,2}\.?", tok)):
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




_GAP = re.compile(r"\S+(?: \S+)*")  # a cell: words one space apart (a one-letter cell too: "!  33")
MAX_HEADER_DISTANCE = 40  # lines between a row and its header
MAX_THIN = 2  # lines of one cell in a row inside a table: a wrapped cell ("verschieb-" / "lich"), a header's 2nd line
MAX_CAPTION_WORDS = 12  # a one-cell line right above a table's header is its caption: it names every row
MAX_HEAD_WORDS = 6  # a column header names a column in a few words; a longer "cell" is prose beside a term


_BAR = re.compile(r"[^\s|](?:[^|]*?[^\s|])?(?=\s*(?:\||$))")


def gap_cells(line: str) -> list[tuple[int, str]]:
    """(position, text) of the cells of a line whose cells are set apart by two or more spaces, or by bars
    ("depth_value  | double |  [-1000,10[ | -14.0 | depth of mist"); a bar is never part of a cell."""
    if line.count("|") >= 2:
        return [(m.start(), m.group()) for m in _BAR.finditer(line)]
    return [(m.start(), m.group()) for m in _GAP.finditer(line)]


def _heading_like(cells: list[tuple[int, str]]) -> bool:
    """Cells that can name columns: no number, no list ("0s, 1S, 0x7fs"), no code ("prompt>"), each a few words."""
    return not any(_VALUE_TOK.match(c) or re.search(r"[,<>=]|\d.*\d", c) for _, c in cells) and \
        all(len(c.split()) <= MAX_HEAD_WORDS for _, c in cells)


class TableRow(NamedTuple):
    """A line read as a table row: its label, its cells (position, text, column header), the lines of its
    table's header (never an answer), the row labels' header ("Gauge stations", with a caption), and each
    cell's own row label when several rows stand side by side (empty otherwise)."""

    label: str = ""
    cells: list[tuple[int, str, str]] = []
    header_lines: list[int] = []
    rows_head: str = ""
    own_labels: list[str] = []


NO_ROW = TableRow()
MAX_LABEL_WORDS = 8  # a cell read as the label of the next one names it in a few words


def read_row(lines: list[str], i: int) -> TableRow:
    """Line ``i`` as a table row: a row of words under its header line when that reads more of it than a row of
    numbers under year / quarter / date keys (``table_row``); else those numbers; else, with no header (a
    reference card's "prompt in debug mode  dbug>", a list of terms and settings), each cell read with the
    row's first cell and the cell before it as its label."""
    if not lines[i].strip():
        return NO_ROW
    label, cells = table_row(lines, i)
    by_column = column_table(lines, i)
    if len(by_column.cells) >= len(cells) and by_column.cells:  # a row of words with numbers at its end
        return by_column
    if cells:
        return TableRow(label, cells)
    loose = gap_cells(lines[i])
    if len(loose) < 2 or len(loose[0][1].split()) > MAX_LABEL_WORDS:
        return NO_ROW
    first = loose[0][1]  # the row's key ("Nitrogen  sky blue  [143,143,255]") and the cell just before
    return TableRow(first, [(p, c, "") for p, c in loose[1:]],
                    own_labels=[first if k == 0 else f"{first} {c}" for k, (_, c) in enumerate(loose[:-1])])


def column_table(lines: list[str], i: int) -> TableRow:
    """Line ``i`` read as a row of a table of words (``NO_ROW`` when it is none).

    The header is the topmost line of the table (the lines above it with two cells or more; up to
    ``MAX_THIN`` one-cell lines in a row are a wrapped cell or a header's second line and do not end it)
    that has as many gap-separated cells, none of them a number and each a few words. A header of two
    lines above a one-cell line ("Type 1 fonts with  Encodings  Shapes" / "tailored protrusion
    settings") is read column by column. The row label is the first cell. A row of two cells (a term and
    its setting) needs its first cell to be a few words too. Nothing when the line has fewer than two
    cells or no header; ``header lines`` are the lines that name the columns (never an answer); the
    row labels' header says what the rows are ("Gauge stations"). A header that repeats ("Extension
    Language  Extension  Language") holds several rows side by side: each cell's row label is the first
    cell of its own group (``.ice`` for ``Slice``).
    """
    cells = gap_cells(lines[i])
    if len(cells) < 2 or len(cells) == 2 and len(cells[0][1].split()) > MAX_HEAD_WORDS:
        return NO_ROW
    top = -1
    thin = 0
    for k in range(i - 1, max(-1, i - MAX_HEADER_DISTANCE), -1):
        above = gap_cells(lines[k])
        if len(above) < 2:
            thin += 1
            if thin > MAX_THIN or not above:
                break  # the table starts below this line
            continue
        thin = 0
        if len(above) == len(cells) and _heading_like(above):
            top = k
    if top < 0:
        return NO_ROW
    heads = [c for _, c in gap_cells(lines[top])]
    used = [top]
    below = gap_cells(lines[top + 1]) if top + 1 < i else []
    after = gap_cells(lines[top + 2]) if top + 2 < i else []
    if len(below) == len(cells) and _heading_like(below) and len(after) == 1:  # a header of two lines
        heads = [f"{a} {b}" for a, (_, b) in zip(heads, below, strict=True)]
        used.append(top + 1)
    thin_after = used[-1] + 1
    if thin_after < i and len(gap_cells(lines[thin_after])) == 1:  # "Name" under "PostScript": the header's last line
        used.append(thin_after)
    period = _period(heads)  # before the caption joins the first header, which would break the repeat
    caption = lines[top - 1].strip() if top > 0 and len(gap_cells(lines[top - 1])) == 1 else ""
    if caption and len(caption.split()) <= MAX_CAPTION_WORDS:  # "canvas.acroform.choice parameters" names every row
        heads[0] = f"{heads[0]} {caption}"
        used.append(top - 1)
    if period:  # "Extension  Language  Extension  Language": each group of cells is a row of its own
        groups = [(p, c, h, cells[k - k % period][1]) for k, ((p, c), h) in enumerate(zip(cells, heads, strict=True))
                  if k % period]
        return TableRow(cells[0][1], [(p, c, h) for p, c, h, _ in groups], used, heads[0], [g[3] for g in groups])
    return TableRow(cells[0][1], [(p, c, h) for (p, c), h in zip(cells[1:], heads[1:], strict=True)], used, heads[0])


def _period(heads: list[str]) -> int:
    """The width of a header that repeats ("Extension  Language" three times: 2), 0 when it does not."""
    low = [h.lower() for h in heads]
    for p in range(2, len(low) // 2 + 1):
        if len(low) % p == 0 and all(low[k] == low[k % p] for k in range(len(low))):
            return p
    return 0

