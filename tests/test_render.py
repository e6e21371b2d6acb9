"""Page images: pixel budget, formats, the diskcache, and clear errors."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from madqa.corpus import Corpus
from madqa.errors import RenderError
from madqa.index import ingest
from madqa.render import render_page
from tests.conftest import make_pdf


@pytest.fixture
def corpus(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["page one text", "page two text"])
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


@pytest.mark.parametrize("fmt,pil", [("png", "PNG"), ("jpeg", "JPEG"), ("webp", "WEBP")])
def test_budget_and_format(corpus, settings, fmt, pil):
    image = render_page(corpus, "a.pdf", 2, settings, budget_px=300_000, fmt=fmt)
    decoded = Image.open(io.BytesIO(image.data))
    assert decoded.format == pil and decoded.size == (image.width, image.height)
    assert image.width * image.height <= 300_000
    assert image.width * image.height > 0.95 * 300_000  # uses the budget, not far below it
    assert abs(image.width / image.height - 595 / 842) < 0.01  # A4, as make_pdf draws it


def test_default_budget_is_about_1_2_megapixels(corpus, settings):
    image = render_page(corpus, "a.pdf", 1, settings)
    assert 1_100_000 < image.width * image.height <= 1_200_000


def test_cache_serves_a_repeat_without_the_pdf(corpus, settings):
    first = render_page(corpus, "a.pdf", 1, settings)
    corpus.pdf_path("a.pdf").unlink()  # a second render can only come from the cache
    again = render_page(corpus, "a.pdf", 1, settings)
    assert again == first
    with pytest.raises(RenderError):  # other parameters are a different key: needs the PDF
        render_page(corpus, "a.pdf", 1, settings, budget_px=200_000)


@pytest.mark.parametrize("file,page,message", [("a.pdf", 3, "has 2 pages"), ("a.pdf", 0, "has 2 pages"),
                                               ("../etc/passwd", 1, "no file"), ("b.pdf", 1, "no file")])
def test_bad_requests(corpus, settings, file, page, message):
    with pytest.raises(RenderError, match=message):
        render_page(corpus, file, page, settings)
