"""A synthetic corpus at MADQA scale (800 PDFs / 18,000+ pages by default) and queries from its vocabulary.

The text is built to stress an index the way real documents do: stopwords between content words,
a Zipf-distributed vocabulary of ~20,000 word forms with inflections (so stemming matters), numbers,
and five layouts (report, two-column article, form, invoice table, landscape slide) on Letter and A4
pages. Generation is deterministic for a seed and cached: a folder is reused once ``.done`` exists.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pymupdf

GENERATOR_VERSION = 3  # bump when the output changes, so cached corpora are regenerated
DOMAIN = ("revenue income margin capital equity asset liability dividend audit board director committee "
          "engine turbine rotor blade pressure valve sensor voltage current battery charger module firmware "
          "patient dosage clinical trial protocol adverse safety efficacy placebo cohort enrollment "
          "contract clause tenant landlord lease premises indemnity warranty termination notice arbitration "
          "school student teacher curriculum grade assessment budget district policy schedule "
          "invoice payment shipping delivery customer supplier order quantity price discount tax total").split()
STOPWORDS = ("the of and to in a is that for on with as by at from this be are or an it was which "
             "were has have not its their will may all under per each").split()
_ONSETS = ("b c d f g h k l m n p r s t v w br cr dr fl gr pl pr st tr ch sh th").split()
_VOWELS = ("a e i o u ai ea ou io").split()
_CODAS = ("", "n", "r", "l", "s", "t", "nd", "rt", "st", "ck", "m", "x")
_SUFFIXES = ("", "", "", "s", "ing", "ed", "ion", "ment", "al", "er")
LAYOUTS = ("report", "article", "form", "invoice", "slide")


def vocabulary(seed: int, size: int = 20_000) -> list[str]:
    """Domain words first (most frequent), then pseudo-words with inflected forms."""
    rng = random.Random(seed)
    words = list(DOMAIN)
    seen = set(words)
    while len(words) < size:
        stem = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                       for _ in range(rng.choice((1, 2, 2))))
        for suffix in rng.sample(_SUFFIXES, 2):
            if stem + suffix not in seen:
                seen.add(stem + suffix)
                words.append(stem + suffix)
    return words[:size]


class TextMaker:
    """Sentences of stopwords and Zipf-chosen content words, with the odd number."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.vocab = vocabulary(seed)
        self.cum = list(itertools.accumulate(1 / (i + 8) for i in range(len(self.vocab))))

    def reseed(self, seed: int) -> TextMaker:
        """The same vocabulary with a random stream of its own (one per document, so documents are
        independent of each other and can be made in parallel)."""
        self.rng = random.Random(seed)
        return self

    def words(self, n: int) -> list[str]:
        rng = self.rng
        content = rng.choices(self.vocab, cum_weights=self.cum, k=n)
        out = []
        for w in content:
            r = rng.random()
            out.append(rng.choice(STOPWORDS) if r < 0.38 else str(rng.randint(1, 99999)) if r < 0.42 else w)
        return out

    def sentences(self, n_words: int) -> str:
        words, out, i = self.words(n_words), [], 0
        while i < len(words):
            j = i + self.rng.randint(8, 22)
            out.append(" ".join(words[i:j]).capitalize() + ".")
            i = j
        return " ".join(out)


def _table(page: pymupdf.Shape, maker: TextMaker, top: float, rows: int, cols: int, left: float = 55,
           width: float = 485) -> float:
    rng = maker.rng
    col_w = width / cols
    for r in range(rows):
        y = top + r * 16
        for c in range(cols):
            cell = maker.words(1)[0] if c == 0 or r == 0 else f"{rng.uniform(0, 99999):,.{rng.choice((0, 2))}f}"
            page.insert_text((left + 4 + c * col_w, y), cell[:16], fontsize=8.5)
        page.draw_line((left, y + 4), (left + width, y + 4))
    page.finish(width=0.3)
    return top + rows * 16 + 10


def _page(doc: pymupdf.Document, maker: TextMaker, layout: str, number: int, title: str) -> None:
    rng = maker.rng
    a4 = rng.random() < 0.5
    w, h = (595, 842) if a4 else (612, 792)
    if layout == "slide":
        w, h = h, w
    # everything on a page is drawn through one Shape, committed once: pymupdf's Page.insert_text
    # makes and commits a Shape per call, which was ~70% of generation time
    page = doc.new_page(width=w, height=h).new_shape()
    page.insert_text((50, 40), f"{title} - page {number}", fontsize=9)
    if layout == "report":
        page.insert_text((50, 72), " ".join(maker.words(5)).title(), fontsize=15)
        y = 90
        if number % 3 == 1:
            y = _table(page, maker, y + 8, rng.randint(6, 14), rng.randint(3, 6), width=w - 110)
        page.insert_textbox(pymupdf.Rect(50, y, w - 50, h - 50), maker.sentences(rng.randint(280, 420)),
                            fontsize=rng.choice((9, 9.5, 10)))
    elif layout == "article":
        mid = w / 2
        for x0, x1 in ((50, mid - 10), (mid + 10, w - 50)):
            page.insert_textbox(pymupdf.Rect(x0, 60, x1, h - 50), maker.sentences(rng.randint(200, 260)),
                                fontsize=8.5)
    elif layout == "form":
        y = 70
        for _ in range(rng.randint(18, 30)):
            label = " ".join(maker.words(rng.randint(1, 3))).title()
            value = " ".join(maker.words(rng.randint(1, 6)))
            page.insert_text((50, y), label + ":", fontsize=9)
            page.insert_text((230, y), value, fontsize=9)
            y += 22
        page.insert_textbox(pymupdf.Rect(50, y + 10, w - 50, h - 50), maker.sentences(120), fontsize=9)
    elif layout == "invoice":
        page.insert_textbox(pymupdf.Rect(50, 60, w - 50, 140), maker.sentences(60), fontsize=9)
        y = _table(page, maker, 160, rng.randint(20, 34), rng.randint(4, 7), width=w - 110)
        page.insert_textbox(pymupdf.Rect(50, y, w - 50, h - 40), maker.sentences(60), fontsize=8)
    else:  # slide: a heading, bullets and a small table, little text
        page.insert_text((60, 80), " ".join(maker.words(4)).title(), fontsize=24)
        y = 120
        for _ in range(rng.randint(4, 7)):
            page.insert_text((80, y), "• " + " ".join(maker.words(rng.randint(5, 10))), fontsize=14)
            y += 30
        _table(page, maker, y + 10, 5, 4, left=80, width=w - 160)
    page.commit()


def page_counts(pages: int, docs: int, rng: random.Random) -> list[int]:
    """``docs`` page counts between 1 and 60 (skewed, like real collections) summing to ``pages``."""
    counts = [max(1, min(60, int(rng.lognormvariate(2.9, 0.7)))) for _ in range(docs)]
    while sum(counts) != pages:
        i = rng.randrange(docs)
        if sum(counts) < pages and counts[i] < 60:
            counts[i] += 1
        elif sum(counts) > pages and counts[i] > 1:
            counts[i] -= 1
    return counts


def _make_document(root: Path, seed: int, d: int, count: int) -> None:
    """Write document ``d`` (``count`` pages) from its own random stream, so it is the same whichever
    process makes it and in whatever order."""
    maker = _makers.get(seed) or _makers.setdefault(seed, TextMaker(seed))
    maker.reseed(seed * 1_000_003 + d)
    layout = LAYOUTS[d % len(LAYOUTS)] if d % 7 else "report"
    title = " ".join(maker.words(3)).title()
    doc = pymupdf.open()
    for p in range(1, count + 1):
        _page(doc, maker, layout if p % 5 else maker.rng.choice(LAYOUTS), p, title)
    folder = root / f"{LAYOUTS[d % len(LAYOUTS)]}s"
    folder.mkdir(exist_ok=True)
    doc.save(folder / f"doc{d:04}.pdf", garbage=0, deflate=True)
    doc.close()


_makers: dict[int, TextMaker] = {}  # one vocabulary per seed and process (building it takes ~0.1 s)


def make_corpus(root: Path, pages: int, docs: int, seed: int = 7, workers: int = 1) -> None:
    """Write ``docs`` PDFs holding ``pages`` pages in all, in varied layouts, into ``root``; with
    ``workers`` > 1 in that many processes (the same files either way)."""
    counts = page_counts(pages, docs, random.Random(seed))
    root.mkdir(parents=True, exist_ok=True)
    if workers <= 1:
        for d, count in enumerate(counts):
            _make_document(root, seed, d, count)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers) as pool:
        for done in pool.map(_make_document, itertools.repeat(root), itertools.repeat(seed),
                             range(len(counts)), counts, chunksize=4):
            del done


def cached_corpus(cache: Path, pages: int, docs: int, workers: int = 1) -> Path:
    """The generated corpus for this size, generating it once (in ``workers`` processes)."""
    root = cache / f"corpus-v{GENERATOR_VERSION}-{docs}x{pages}"
    if not (root / ".done").exists():
        make_corpus(root, pages, docs, workers=workers)
        (root / ".done").write_text("ok")
    return root


def make_queries(texts: list[str], n: int, seed: int = 11) -> list[str]:
    """Queries in the shapes agents write: words (ANDed), OR lists, phrases, wildcards, NOT."""
    rng = random.Random(seed)
    split = [t.split() for t in texts if len(t.split()) > 8]
    queries = []
    while len(queries) < n:
        words = [w.strip(".,:;•").lower() for w in rng.choice(split)]
        start = rng.randrange(len(words) - 4)
        run = [w for w in words[start:start + rng.choice((1, 2, 2, 3, 3, 4))] if w]
        content = [w for w in run if w not in STOPWORDS and not w.isdigit()] or run
        shape = rng.random()
        if shape < 0.15:
            queries.append(" OR ".join(content))
        elif shape < 0.30 and len(run) > 1:
            queries.append(f'"{" ".join(run)}"')
        elif shape < 0.38 and len(content[0]) > 4:
            queries.append(content[0][:4] + "*")
        elif shape < 0.45 and len(content) > 1:
            queries.append(f"{content[0]} NOT {content[1]}")
        else:
            queries.append(" ".join(content))
    return queries
