"""Reading a document's outline from its PDF, in a drawer process (``madqa.page_drawer``: untrusted files
are opened where CPU and memory limits apply): its bookmarks, else the lines set in a font larger than the
body text's (headings). ``madqa.outline`` asks for it, caches it, and falls back to each page's first line."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

MAX_ENTRIES = 200  # entries kept of one outline
HEADING_RATIO = 1.15  # a line this much larger than the body text is a heading
LETTERS = re.compile(r"[^\W\d_]{2,}")


def read_outline(doc: Any, max_pages: int) -> tuple[str, list[tuple[int, str, int]]]:
    """(source, [(level, title, page)]) of an open PDF (pymupdf): bookmarks, else headings by font size."""
    toc = [(int(level), " ".join(str(title).split())[:200], int(page)) for level, title, page, *_ in doc.get_toc()
           if str(title).strip() and 1 <= int(page) <= doc.page_count]
    if toc:
        return "bookmarks", toc[:MAX_ENTRIES]
    lines: list[tuple[float, str, int]] = []
    for number in range(min(doc.page_count, max_pages)):
        page = doc.load_page(number)
        for block in page.get_text("dict", flags=0).get("blocks", []):
            for line in block.get("lines", []):
                spans = [s for s in line.get("spans", []) if str(s.get("text", "")).strip()]
                if spans:
                    text = " ".join(" ".join(str(s["text"]) for s in spans).split())
                    size = max(float(s.get("size", 0)) for s in spans)
                    lines.append((round(size, 1), text, number + 1))
    return "headings", headings(lines)


def headings(lines: list[tuple[float, str, int]]) -> list[tuple[int, str, int]]:
    """The lines (size, text, page) that read as headings: larger than the body text, short, with words,
    not repeated on many pages (a running header); levels by size, at most three."""
    if not lines:
        return []
    body: Counter[float] = Counter()
    for size, text, _ in lines:
        body[size] += len(text)
    body_size = body.most_common(1)[0][0]
    pages = len({p for _, _, p in lines})
    repeats = Counter(text.lower() for _, text, _ in lines)
    found = [(n, size, text, page) for n, (size, text, page) in enumerate(lines)
             if size >= body_size * HEADING_RATIO and 3 <= len(text) <= 120 and LETTERS.search(text)
             and (pages < 4 or repeats[text.lower()] <= max(2, pages // 4))]
    sizes = sorted({s for _, s, _, _ in found}, reverse=True)[:3]
    level = {s: n + 1 for n, s in enumerate(sizes)}
    out: list[tuple[int, str, int]] = []
    last = -2
    for n, size, text, page in found:
        lv = level.get(size, 3)
        if n == last + 1 and out and out[-1][2] == page and out[-1][0] == lv and len(out[-1][1]) + len(text) < 120:
            out[-1] = (lv, f"{out[-1][1]} {text}", page)  # one heading wrapped over two lines in a row
        else:
            out.append((lv, text, page))
        last = n
    return out[:MAX_ENTRIES]
