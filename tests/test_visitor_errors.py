"""Every error a visitor sees goes through one path (issue 25, break 4 and "also seen"): ``shown_error`` hides server
paths, shows the text as text, and logs one line, where Gradio printed a traceback for every refusal."""

from __future__ import annotations

import logging
import re

import pytest

from madqa.ui.context import shown_error
from tests.conftest import REPO


def test_a_refusal_hides_paths_and_logs_one_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="madqa.ui"):
        error = shown_error("q.parquet: cannot read Parquet file /tmp/gradio/0123abcd/q.parquet: <b>bad</b>")
    assert "/tmp/gradio" not in error.message and "…/q.parquet" in error.message and "&lt;b&gt;" in error.message
    assert error.print_exception is False  # Gradio prints no traceback for it
    assert [r.getMessage() for r in caplog.records] == [
        "refused: q.parquet: cannot read Parquet file …/q.parquet: <b>bad</b>"]
    assert not any(r.exc_info for r in caplog.records)


def test_no_ui_module_raises_a_gradio_error_of_its_own() -> None:
    """The trajectory diff raised gr.Error with a library's message, and a temporary path reached the page."""
    offenders = [f"{path.name}:{n}" for path in sorted((REPO / "madqa" / "ui").glob("*.py")) if path.name != "context.py"
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if re.search(r"\bgr\.Error\(", line)]
    assert offenders == []
