"""Highlight boxes land where the words are: on generated PDFs whose word positions are known, from
the text layer and (for a scanned page) from Tesseract's word boxes; drawn on the rendered image;
and ``madqa render --highlight`` writes them."""

from __future__ import annotations

import io

import pymupdf
import pytest
from PIL import Image

from madqa.cli import main
from madqa.corpus import Corpus
from madqa.highlight import Word, locate, text_layer_words
from madqa.index import ingest
from madqa.render import page_highlight, render_highlighted, render_page

SIZE = 12
X, Y1, Y2 = 72, 120, 300  # where the lines start (baselines)
LINE1 = "Net revenue was 7.5 million euros in 2024."
LINE2 = "Staff at year end: 120 employees."


def width(text: str, size: float = SIZE) -> float:
    return pymupdf.get_text_length(text, fontname="helv", fontsize=size)


def text_pdf(path, rotate: int = 0):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((X, Y1), LINE1, fontsize=SIZE)
    page.insert_text((X, Y2), LINE2, fontsize=SIZE)
    page.insert_text((X, 400), "The final settle-", fontsize=SIZE)
    page.insert_text((X, 416), "ment was paid.", fontsize=SIZE)
    # a table row whose cells were written column by column: the PDF's order is not the reading order
    for col, cells in enumerate((("Revenue", "Costs"), ("7.5", "6.1"), ("6.9", "5.8"))):
        for row, cell in enumerate(cells):
            page.insert_text((X + 150 * col, 500 + 20 * row), cell, fontsize=SIZE)
    if rotate:
        page.set_rotation(rotate)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)
    return path


@pytest.fixture
def corpus(tmp_path, settings, registry):
    root = tmp_path / "docs"
    text_pdf(root / "report.pdf")
    text_pdf(root / "turned.pdf", rotate=90)
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


def test_a_quote_box_covers_exactly_its_words(corpus, settings):
    hl = page_highlight(corpus, "report.pdf", 1, settings, ["revenue was 7.5 million"], ["7.5 million"])
    assert hl.source == "text" and not hl.missing
    quote = [b for b in hl.boxes if b.kind == "quote"]
    answer = [b for b in hl.boxes if b.kind == "answer"]
    assert len(quote) == 1 and len(answer) == 1
    q, a = quote[0], answer[0]
    assert q.x0 == pytest.approx(X + width("Net "), abs=0.5)
    assert q.x1 == pytest.approx(X + width("Net revenue was 7.5 million"), abs=0.5)
    assert q.y0 < Y1 - SIZE * 0.6 and Y1 < q.y1 < Y1 + SIZE * 0.5  # the line's height around its baseline
    assert a.x0 == pytest.approx(X + width("Net revenue was "), abs=0.5) and a.x1 == pytest.approx(q.x1, abs=0.5)


def test_a_quote_over_a_hyphenated_line_break_gets_a_box_per_line(corpus, settings):
    hl = page_highlight(corpus, "report.pdf", 1, settings, ["The final settlement was paid"])
    boxes = sorted(hl.boxes, key=lambda b: b.y0)
    assert len(boxes) == 2 and not hl.missing
    assert boxes[0].x0 == pytest.approx(X, abs=0.5) and boxes[0].x1 == pytest.approx(X + width("The final settle-"), abs=0.5)
    assert boxes[1].x1 == pytest.approx(X + width("ment was paid."), abs=0.5)  # the whole last word
    assert boxes[0].y1 < boxes[1].y1 and 400 - 1.2 * SIZE < boxes[0].y0 < 400 < boxes[1].y0 + 2


def test_a_table_row_is_found_in_reading_order(corpus, settings):
    hl = page_highlight(corpus, "report.pdf", 1, settings, ["Revenue 7.5 6.9"])
    (box,) = hl.boxes
    assert box.x0 == pytest.approx(X, abs=0.5) and box.x1 == pytest.approx(X + 300 + width("6.9"), abs=0.5)
    assert box.y0 < 500 < box.y1


def test_text_not_on_the_page_is_reported_missing(corpus, settings):
    hl = page_highlight(corpus, "report.pdf", 1, settings, ["revenue was 9 million"], ["9 million"])
    assert hl.boxes == () and hl.missing == ("revenue was 9 million", "9 million")


def test_a_short_answer_is_only_boxed_inside_its_quote():
    words = [Word(0, 0, 10, 10, "2"), Word(0, 20, 30, 30, "Rooms:"), Word(40, 20, 50, 30, "2")]
    boxes, missing = locate(words, ["Rooms: 2"], ["2"])
    assert [b.kind for b in boxes] == ["quote", "answer"] and boxes[1].x0 == 40 and not missing
    assert locate(words, [], ["2"]) == ([], ["2"])  # two characters alone: too ambiguous to box


def test_boxes_follow_a_rotated_page(corpus, settings):
    hl = page_highlight(corpus, "turned.pdf", 1, settings, ["Net revenue"])
    (box,) = hl.boxes
    with pymupdf.open(corpus.pdf_path("turned.pdf")) as doc:
        page = doc.load_page(0)
        assert page.rect.width > page.rect.height  # displayed landscape
        (word,) = [w for w in text_layer_words(page) if w.text == "Net"]
    # rotated 90 degrees clockwise: a point (x, y) of the unrotated page shows at (842 - y, x)
    assert box.x0 == pytest.approx(842 - word.y1, abs=0.01) and box.x1 == pytest.approx(842 - word.y0, abs=0.01)
    assert box.y0 == pytest.approx(X, abs=0.5) and box.y1 == pytest.approx(X + width("Net revenue"), abs=0.5)


def test_the_boxes_are_drawn_on_the_image_and_nowhere_else(corpus, settings):
    plain = render_page(corpus, "report.pdf", 1, settings, budget_px=600_000, fmt="png")
    image, hl = render_highlighted(corpus, "report.pdf", 1, settings, ["revenue was 7.5 million"],
                                   budget_px=600_000, fmt="png")
    assert (image.width, image.height) == (plain.width, plain.height)
    zoom = image.width / 595
    before = Image.open(io.BytesIO(plain.data)).convert("RGB")
    after = Image.open(io.BytesIO(image.data)).convert("RGB")
    (box,) = hl.boxes
    # a white gap between two words inside the box turns yellow; the same gap on another line stays white
    gap = (int((X + width("Net revenue ") - 1.5) * zoom), int((box.y0 + 2) * zoom))
    assert before.getpixel(gap) == (255, 255, 255)
    r, g, b = after.getpixel(gap)
    assert r > 240 and g > 220 and b < 200
    far = (gap[0], int((Y2 - SIZE - 10) * zoom))
    assert after.getpixel(far) == before.getpixel(far) == (255, 255, 255)


def scanned_pdf(path):
    """A page holding only an image of known text at known positions (no text layer)."""
    src = pymupdf.open()
    page = src.new_page()
    page.insert_text((X, 200), "Total amount due: 1,250.00 EUR", fontsize=16)
    page.insert_text((X, 400), "Payable within thirty days.", fontsize=16)
    pix = page.get_pixmap(dpi=200)
    out = pymupdf.open()
    scan = out.new_page(width=page.rect.width, height=page.rect.height)
    scan.insert_image(scan.rect, stream=pix.tobytes("png"))
    path.parent.mkdir(parents=True, exist_ok=True)
    out.save(path)
    return path


def test_a_scanned_page_is_boxed_from_ocr_word_positions(tmp_path, settings, registry):
    root = tmp_path / "scans"
    scanned_pdf(root / "scan.pdf")
    ingest(root, settings, registry, ocr="auto")
    corpus = Corpus.open(root, settings.corpora_dir)
    assert corpus.page_source("scan.pdf", 1) == "ocr"
    hl = page_highlight(corpus, "scan.pdf", 1, settings, ["Total amount due: 1,250.00 EUR"], ["1,250.00 EUR"])
    assert hl.source == "ocr" and not hl.missing, corpus.page_text("scan.pdf", 1)
    quote = next(b for b in hl.boxes if b.kind == "quote")
    answer = next(b for b in hl.boxes if b.kind == "answer")
    assert quote.x0 == pytest.approx(X, abs=3)
    assert quote.x1 == pytest.approx(X + width("Total amount due: 1,250.00 EUR", 16), abs=4)
    assert 200 - 16 < quote.y0 < 200 < quote.y1 < 200 + 8
    assert answer.x0 == pytest.approx(X + width("Total amount due: ", 16), abs=4)
    again = page_highlight(corpus, "scan.pdf", 1, settings, ["Payable within thirty days"])  # words cached
    assert again.source == "ocr" and 400 - 16 < again.boxes[0].y0 < 400


def test_cli_render_highlight(corpus, settings, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MADQA_HOME", str(settings.home))
    out = tmp_path / "page.png"
    root = str(corpus.root)
    assert main(["render", "--corpus", root, "report.pdf", "1", "-o", str(out),
                 "--highlight", "Staff at year end: 120 employees", "--answer", "120"]) == 0
    assert "2 boxes from the text layer" in capsys.readouterr().out
    plain = render_page(corpus, "report.pdf", 1, settings)
    with Image.open(out) as image:
        assert image.size == (plain.width, plain.height) and out.read_bytes() != plain.data
    assert main(["render", "--corpus", root, "report.pdf", "1", "-o", str(out), "--highlight", "no such words"]) == 1
    assert "not found on report.pdf p.1: 'no such words'" in capsys.readouterr().err


class _WidePage:
    """A page 200 inches wide and 1.4 tall, with OCR faked: records the resolution asked for, returns two words
    in PyMuPDF's order (not Tesseract's: block, line, word)."""

    rect = pymupdf.Rect(0, 0, 14_400, 100)

    def __init__(self) -> None:
        self.dpis: list[int] = []

    def get_textpage_ocr(self, language: str, dpi: int, full: bool, tessdata: str) -> str:
        self.dpis.append(dpi)
        return "textpage"

    def get_text(self, kind: str, textpage: str = "", sort: bool = False) -> list[tuple]:
        return [(50.0, 10.0, 90.0, 20.0, "world", 0, 0, 1), (10.0, 10.0, 40.0, 20.0, "hello", 0, 0, 0)]


def test_highlights_read_ocr_words_as_the_ocr_reader_does_capped_for_huge_pages(monkeypatch):
    """One OCR word reader: the highlights get Tesseract's order and the resolution cap of the ``ocr`` page
    reader (its side within MAX_OCR_SIDE, which Tesseract needs), so the boxes are of the words it read."""
    from madqa import highlight
    from madqa.errors import PluginError
    from madqa.ocr import MAX_OCR_SIDE
    from madqa_plugins.readers.tesseract_ocr import TesseractReader

    page = _WidePage()
    monkeypatch.setattr(highlight, "find_tessdata", lambda: "/tessdata")
    words = highlight.ocr_page_words(page, "eng", 300)
    assert [w.text for w in words] == ["hello", "world"]
    assert 1 <= page.dpis[0] < 300 and page.dpis[0] * 200 <= MAX_OCR_SIDE
    try:
        reader = TesseractReader("eng", 300)
    except PluginError:
        pytest.skip("Tesseract is not installed (scripts/install installs it)")
    read = reader.read_words(page)
    assert [(w.x0, w.y0, w.x1, w.y1, w.text) for w in read] == [(w.x0, w.y0, w.x1, w.y1, w.text) for w in words]
    assert page.dpis[1] == page.dpis[0]
