"""Progress per page, not per file: a scan is OCR'd page by page (seconds each), and the index command
and the web app's upload say which page ("OCR page 2/3 · scan.pdf"), from a generated three-page scan."""

from __future__ import annotations

import shutil
from pathlib import Path

import pymupdf
import pytest

from madqa.cli import main
from madqa.index import ingest
from madqa.settings import Settings
from madqa.ui.sessions import SessionStore, new_session, page_words
from tests.conftest import make_pdf, make_scanned_pdf

pytestmark = pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")
LINES = ["Certificate of Registration number 4471", "Inspection report of the north pump station",
         "Invoice 2291 for filter cartridges"]


def three_page_scan(path: Path) -> Path:
    """A PDF of three page images (no text layer), like a scanned report."""
    out = pymupdf.open()
    for n, line in enumerate(LINES):
        one = make_scanned_pdf(path.parent / f".page-{n}.pdf", line)
        with pymupdf.open(one) as page:
            out.insert_pdf(page)
        one.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    out.save(path)
    return path


def test_ingest_reports_each_page_as_it_is_read(tmp_path: Path, settings: Settings, registry) -> None:
    root = tmp_path / "docs"
    three_page_scan(root / "scans" / "scan.pdf")
    make_pdf(root / "typed.pdf", ["typed page one", "typed page two"])
    heard: list[tuple[str, int, int, str]] = []
    report = ingest(root, settings, registry, ocr="auto", page_progress=lambda *a: heard.append(a))
    assert report.ocr_pages == 3
    assert [h for h in heard if h[0] == "scans/scan.pdf"] == [("scans/scan.pdf", n, 3, "ocr") for n in (1, 2, 3)]
    assert [h for h in heard if h[0] == "typed.pdf"] == [("typed.pdf", 1, 2, "text"), ("typed.pdf", 2, 2, "text")]


def test_the_index_command_says_which_page_it_ocrs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    three_page_scan(tmp_path / "docs" / "scan.pdf")
    make_pdf(tmp_path / "docs" / "typed.pdf", ["a typed page"])
    assert main(["index", str(tmp_path / "docs")]) == 0
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("OCR page")] == [
        "OCR page 1/3 · scan.pdf", "OCR page 2/3 · scan.pdf", "OCR page 3/3 · scan.pdf"]  # typed pages: quiet


def test_an_upload_of_a_scan_shows_its_pages_in_the_web_app(tmp_path: Path, settings: Settings, registry) -> None:
    scan = three_page_scan(tmp_path / "incoming" / "scan.pdf")
    store = SessionStore(settings, registry, tmp_path / "demo")
    token = new_session()["token"]
    shown: list[tuple[int, int, str]] = []
    outcome = store.add_files(token, [("Scan of 3 pages.pdf", scan)], lambda *a: shown.append(a))
    assert [f.status for f in outcome.files] == ["indexed"] and outcome.files[0].pages == 3
    pages = [s for s in shown if s[2].startswith("OCR page")]
    assert pages == [(n, 3, f"OCR page {n}/3 · Scan of 3 pages.pdf") for n in (1, 2, 3)]
    assert shown.index(pages[0]) > shown.index(next(s for s in shown if s[2].startswith("indexing")))


def test_page_words() -> None:
    assert page_words("scans/report.pdf", 3, 12, "ocr") == "OCR page 3/12 · report.pdf"
    assert page_words("a.pdf", 1, 2, "text") == "reading page 1/2 · a.pdf"
