"""Page reader ``text``: the PDF's own text layer, one visual line per line.

Words are grouped into lines by their baseline and ordered left to right, so a table row's
cells land on one line (as PyMuPDF's ``sort=True`` does, at a tenth of its cost), with two
spaces where a wide gap separates them (a column break).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import madqa

_BY_BASELINE = itemgetter(3, 0)
_BY_X = itemgetter(0)


def visual_lines(words: list[tuple]) -> str:
    """Join PyMuPDF ``words`` tuples (x0, y0, x1, y1, text, ...) into top-to-bottom lines."""
    lines: list[list[tuple]] = []
    baseline = tolerance = None
    for word in sorted(words, key=_BY_BASELINE):
        if baseline is None or word[3] - baseline > tolerance:
            line = [word]
            lines.append(line)
            baseline = word[3]
            tolerance = max(1.0, 0.4 * (word[3] - word[1]))
        else:
            line.append(word)
    return "\n".join(_join(sorted(line, key=_BY_X) if len(line) > 1 else line) for line in lines)


def _join(line: list[tuple]) -> str:
    """Words with one space, or two where the horizontal gap is wide (a table's column break)."""
    prev = line[0]
    parts = [prev[4]]
    for word in line[1:]:
        parts.append(("  " if word[0] - prev[2] > 0.9 * (word[3] - word[1]) else " ") + word[4])
        prev = word
    return "".join(parts)


class TextLayerReader:
    """Reads the embedded text of a page (fast; empty for scanned pages)."""

    def read(self, page: Any, file: str, number: int) -> str | None:
        return visual_lines(page.get_text("words"))


@madqa.hookimpl(trylast=True)
def register_page_readers(register: madqa.Register) -> None:
    register("text", lambda host, options: TextLayerReader(), "the PDF's embedded text layer", takes_host=True)
