"""Generated corpora for the scale curve (10k-100k pages), written as plain PDF without a layout engine.

``bench/corpus.py`` lays pages out with PyMuPDF (``insert_textbox``): ~20-40 pages per CPU-second,
hours for 100k pages on two shared cores. Here the same text (the same vocabulary, Zipf weights,
stopwords, numbers and five layouts, ``TextMaker``) is wrapped greedily and written as PDF text
operators in Helvetica, one content stream per page: several hundred pages per CPU-second. A reader
(MuPDF) extracts it like any text-layer PDF; what differs from ``bench/corpus.py`` is only the look
of the page (no ruled tables, no justified text), which ingest and search never see.
"""

from __future__ import annotations

import itertools
import random
import zlib
from pathlib import Path

from bench.corpus import LAYOUTS, TextMaker, page_counts

GENERATOR_VERSION = 1  # bump when the output changes, so cached corpora are regenerated
Item = tuple[float, float, float, str]  # x, y from the top, font size, text


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[tuple[float, float, list[Item]]]) -> bytes:
    """A PDF of ``pages`` (width, height, text items), Helvetica, each content stream deflated."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"]
    kids = []
    for w, h, items in pages:
        ops = ["BT"]
        for x, y, size, text in items:
            ops.append(f"/F1 {size:g} Tf 1 0 0 1 {x:.1f} {h - y:.1f} Tm ({_escape(text)}) Tj")
        ops.append("ET")
        stream = zlib.compress("\n".join(ops).encode("latin-1", "replace"), 6)
        objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream")
        kids.append(len(objects) + 1)
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Resources << /Font << /F1 3 0 R >> >> "
                       b"/Contents %d 0 R >>" % (w, h, len(objects)))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _wrap(text: str, x: float, y: float, width: float, bottom: float, size: float) -> tuple[list[Item], float]:
    """Greedy lines of ``text`` (Helvetica's mean glyph is ~0.5 em) from ``y`` down to ``bottom``."""
    per_line, items, line = max(10, int(width / (size * 0.5))), [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > per_line:
            items.append((x, y, size, line))
            y += size * 1.25
            line = word
            if y > bottom:
                return items, y
        else:
            line = f"{line} {word}" if line else word
    if line and y <= bottom:
        items.append((x, y, size, line))
        y += size * 1.25
    return items, y


def _table(maker: TextMaker, top: float, rows: int, cols: int, left: float, width: float) -> tuple[list[Item], float]:
    rng, items, col_w = maker.rng, [], width / cols
    for r in range(rows):
        for c in range(cols):
            cell = maker.words(1)[0] if c == 0 or r == 0 else f"{rng.uniform(0, 99999):,.{rng.choice((0, 2))}f}"
            items.append((left + 4 + c * col_w, top + r * 16, 8.5, cell[:16]))
    return items, top + rows * 16 + 10


def page_items(maker: TextMaker, layout: str, number: int, title: str) -> tuple[float, float, list[Item]]:
    """One page in ``layout``: its size and text items, in the shapes of ``bench/corpus.py``'s layouts."""
    rng = maker.rng
    w, h = (595, 842) if rng.random() < 0.5 else (612, 792)
    if layout == "slide":
        w, h = h, w
    items: list[Item] = [(50, 40, 9, f"{title} - page {number}")]
    if layout == "report":
        items.append((50, 72, 15, " ".join(maker.words(5)).title()))
        y = 90.0
        if number % 3 == 1:
            table, y = _table(maker, y + 8, rng.randint(6, 14), rng.randint(3, 6), 55, w - 110)
            items += table
        items += _wrap(maker.sentences(rng.randint(280, 420)), 50, y, w - 100, h - 50, rng.choice((9, 9.5, 10)))[0]
    elif layout == "article":
        mid = w / 2
        for x0, x1 in ((50, mid - 10), (mid + 10, w - 50)):
            items += _wrap(maker.sentences(rng.randint(200, 260)), x0, 60, x1 - x0, h - 50, 8.5)[0]
    elif layout == "form":
        y = 70.0
        for _ in range(rng.randint(18, 30)):
            items.append((50, y, 9, " ".join(maker.words(rng.randint(1, 3))).title() + ":"))
            items.append((230, y, 9, " ".join(maker.words(rng.randint(1, 6)))))
            y += 22
        items += _wrap(maker.sentences(120), 50, y + 10, w - 100, h - 50, 9)[0]
    elif layout == "invoice":
        head, _ = _wrap(maker.sentences(60), 50, 60, w - 100, 140, 9)
        table, y = _table(maker, 160, rng.randint(20, 34), rng.randint(4, 7), 55, w - 110)
        items += head + table + _wrap(maker.sentences(60), 50, y, w - 100, h - 40, 8)[0]
    else:  # slide
        items.append((60, 80, 24, " ".join(maker.words(4)).title()))
        y = 120.0
        for _ in range(rng.randint(4, 7)):
            items.append((80, y, 14, "- " + " ".join(maker.words(rng.randint(5, 10)))))
            y += 30
        items += _table(maker, y + 10, 5, 4, 80, w - 160)[0]
    return w, h, items


_makers: dict[int, TextMaker] = {}


def _make_document(root: Path, seed: int, d: int, count: int) -> int:
    maker = _makers.get(seed) or _makers.setdefault(seed, TextMaker(seed))
    maker.reseed(seed * 1_000_003 + d)
    layout = LAYOUTS[d % len(LAYOUTS)] if d % 7 else "report"
    title = " ".join(maker.words(3)).title()
    pages = [page_items(maker, layout if p % 5 else maker.rng.choice(LAYOUTS), p, title) for p in range(1, count + 1)]
    folder = root / f"{LAYOUTS[d % len(LAYOUTS)]}s"
    folder.mkdir(exist_ok=True)
    (folder / f"doc{d:05}.pdf").write_bytes(pdf_bytes(pages))
    return count


def make_plain_corpus(root: Path, pages: int, docs: int, seed: int = 7, workers: int = 1) -> None:
    """Write ``docs`` plain PDFs holding ``pages`` pages in all into ``root`` (in ``workers`` processes)."""
    counts = page_counts(pages, docs, random.Random(seed))
    root.mkdir(parents=True, exist_ok=True)
    if workers <= 1:
        for d, count in enumerate(counts):
            _make_document(root, seed, d, count)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers) as pool:
        for done in pool.map(_make_document, itertools.repeat(root), itertools.repeat(seed), range(len(counts)),
                             counts, chunksize=8):
            del done


def cached_plain_corpus(cache: Path, pages: int, docs: int, workers: int = 1) -> Path:
    """The plain corpus for this size, generated once."""
    root = cache / f"plain-v{GENERATOR_VERSION}-{docs}x{pages}"
    if not (root / ".done").exists():
        make_plain_corpus(root, pages, docs, workers=workers)
        (root / ".done").write_text("ok")
    return root
