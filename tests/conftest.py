"""Shared fixtures: isolated settings, a fresh plugin registry, and real PDFs made with PyMuPDF."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pymupdf
import pytest

from madqa.plugins import Registry, collect, get_plugin_manager
from madqa.settings import Settings
from tests.browser_support import app_url, browser, visitors  # noqa: F401 - the shared browser fixtures

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

REPO = Path(__file__).resolve().parent.parent
DEMO_DOCS = REPO / "data" / "demo" / "docs"
DEMO_QUESTIONS = REPO / "data" / "demo" / "questions.jsonl"


def make_pdf(path: Path, pages: Iterable[str], fontsize: float = 11) -> Path:
    """Write a real PDF whose pages hold the given texts (one string per page)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(54, 54, 558, 788), text, fontsize=fontsize)
    doc.save(path)
    doc.close()
    return path


def make_scanned_pdf(path: Path, text: str) -> Path:
    """A one-page PDF holding only an image of ``text``: no text layer, like a scan."""
    src = pymupdf.open()
    page = src.new_page()
    page.insert_textbox(pymupdf.Rect(54, 54, 558, 788), text, fontsize=14)
    pix = page.get_pixmap(dpi=200)
    out = pymupdf.open()
    scan = out.new_page(width=page.rect.width, height=page.rect.height)
    scan.insert_image(scan.rect, stream=pix.tobytes("png"))
    path.parent.mkdir(parents=True, exist_ok=True)
    out.save(path)
    return path


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.from_env(env={}, home=tmp_path / "home")


@pytest.fixture
def registry() -> Registry:
    return collect(get_plugin_manager(entry_points=False))


def two_file_corpus(root: Path, settings: Settings, registry: Registry, report: str = "report.pdf"):  # noqa: ANN201
    """A report of two pages (revenue, headcount) and a one-page memo (the board's budget), ingested."""
    from madqa.corpus import Corpus
    from madqa.index import ingest

    make_pdf(root / report, ["Revenue in 2024 was 7.5 million.", "Headcount was 120 employees."])
    make_pdf(root / "memo.pdf", ["Memo: the board approved the budget on 3 May 2024."])
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


@pytest.fixture
def corpus(tmp_path: Path, settings: Settings, registry: Registry):  # noqa: ANN201 - a Corpus
    """``two_file_corpus`` in a temp folder: the agent, context and budget tests' small collection."""
    return two_file_corpus(tmp_path / "docs", settings, registry)


@pytest.fixture(scope="session")
def demo_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings.from_env(env={}, home=tmp_path_factory.mktemp("demo-home"))


@pytest.fixture(scope="session")
def demo_corpus(demo_settings: Settings):  # noqa: ANN201 - a Corpus
    """The bundled demo corpus, ingested once per test session (OCR included)."""
    from madqa.index import open_or_build

    registry = collect(get_plugin_manager(entry_points=False))
    corpus, _ = open_or_build(DEMO_DOCS, demo_settings, registry)
    return corpus
