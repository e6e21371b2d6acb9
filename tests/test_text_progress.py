"""Reading text layers is never silent: ``madqa index`` reports pages read, at most one line per interval."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from madqa.cli import common, main
from tests.conftest import make_pdf


def test_text_pages_are_reported_throttled_and_ocr_pages_always() -> None:
    now = [0.0]
    out = io.StringIO()
    report = common.page_progress(out, every_s=2.0, clock=lambda: now[0])
    for page in range(1, 11):  # ten text pages, half a second each
        now[0] += 0.5
        report("big.pdf", page, 10, "text")
    report("scan.pdf", 1, 1, "ocr")
    lines = out.getvalue().splitlines()
    assert lines == ["reading text: page 4/10 · big.pdf · 4 pages read",
                     "reading text: page 8/10 · big.pdf · 8 pages read",
                     "OCR page 1/1 · scan.pdf"]


def test_the_index_command_reports_text_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    make_pdf(tmp_path / "docs" / "a.pdf", [f"page {n} about pumps" for n in range(1, 6)])
    real = common.page_progress
    monkeypatch.setattr(common, "page_progress", lambda: real(every_s=0.0))  # every page, for the test
    assert main(["index", str(tmp_path / "docs"), "--ocr", "never"]) == 0
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("reading text")][-1] == \
        "reading text: page 5/5 · a.pdf · 5 pages read"
