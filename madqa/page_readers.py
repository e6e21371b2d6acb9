"""The page readers of an ingest, from the plugin registry: the text layer, and Tesseract unless OCR is off.

Its own module so that a local ingest (``index``) and a cluster worker's (``ingest_jobs``) build them the
same way, each importing it at module level.
"""

from __future__ import annotations

from madqa.errors import PluginError
from madqa.pdf_reader import PageTexts
from madqa.plugins import Registry
from madqa.settings import Settings


def page_texts(registry: Registry, settings: Settings, ocr: str) -> tuple[PageTexts, str | None]:
    """The page readers of an ingest (text layer, Tesseract unless --ocr never) and why OCR is off, if it is."""
    text, reader, problem = registry.create("page_reader", "text", {}), None, None
    if ocr != "never":
        try:
            reader = registry.create("page_reader", "ocr", {"language": settings.ocr_language, "dpi": settings.ocr_dpi})
        except PluginError as exc:
            problem = str(exc)
    return PageTexts(text, reader, ocr), problem
