"""Page reader ``text``: the PDF's own text layer, in reading order."""

from __future__ import annotations

from typing import Any

import madqa


class TextLayerReader:
    """Reads the embedded text of a page (fast; empty for scanned pages)."""

    def read(self, page: Any, file: str, number: int) -> str | None:
        return page.get_text("text", sort=True)


@madqa.hookimpl(trylast=True)
def register_page_readers(register: madqa.Register) -> None:
    register("text", lambda options: TextLayerReader(), "the PDF's embedded text layer")
