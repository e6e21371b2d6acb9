"""Entries of a reference manual for the offline reader: a line that opens with the name it documents
(``HTML_COLORSTYLE_HUE The HTML_COLORSTYLE_HUE tag controls ...``, ``\\speaksindent is ...``,
``--output FILE ...``) heads the lines below it up to the next such line, so "Minimum value: 0, maximum
value: 359, default value: 220." five lines down is read as said of HTML_COLORSTYLE_HUE, not of the
entry after it."""

from __future__ import annotations

import re

MAX_ENTRY_LINES = 12  # an entry's description runs at most this many lines below its head
# a name in code opening a line: an option or tag in capitals with _ or ., a macro, a command-line flag
# (a word in capitals alone is a title, "INVOICE", "NOTES": it heads an entry only with its description beside it)
# and a head's description starts a sentence or stands after a gap: "DOT_FONTPATH to the directory" continues one
_HEAD = re.compile(r"^(?:[A-Z][A-Z0-9]*(?:[_.][A-Z0-9]+)+|[A-Z]{4,}[0-9]*(?=\s)|\\[A-Za-z@]+\*?|--?[A-Za-z][\w-]+)"
                   r"(?=$|\s*$|\s{2,}\S|\s[A-Z(\\-])")


def entry_heads(lines: list[str]) -> list[int | None]:
    """For each line, the line that heads its entry (itself for a head; None outside any entry)."""
    out: list[int | None] = []
    head: int | None = None
    for i, line in enumerate(lines):
        if _HEAD.match(line.strip()) and line[:1] not in (" ", "\t"):
            head = i
        elif head is not None and (i - head > MAX_ENTRY_LINES or not line.strip()):
            head = None
        out.append(head)
    return out
