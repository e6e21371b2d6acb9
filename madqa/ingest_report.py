"""What an ingest did (``madqa.index.ingest``): counts, per-file failures and warnings, the language chosen.

Its own module so that the ingest's parts (``ingest_limits``, ``ingest_files``) report into it without
importing the ingest itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from madqa.languages import DEFAULT as DEFAULT_LANGUAGE


@dataclass
class IngestReport:
    """What an ingest did; ``failures`` are (file, plain reason) and did not stop the rest."""

    root: str
    generation: str = ""
    files: int = 0
    pages: int = 0
    ocr_pages: int = 0
    imported_pages: int = 0
    empty_pages: int = 0
    blank_pages: int = 0  # no text, image or drawing: nothing to OCR, so not among pages_without_text
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    pending: int = 0  # files left for a later ingest (``read_at_most``): not read into this generation
    failures: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    pages_without_text: list[tuple[str, int]] = field(default_factory=list)  # the first ``madqa.index.EMPTY_LISTED``
    language: str = DEFAULT_LANGUAGE
    language_note: str = ""  # how the language was chosen (set, kept, detected from how much text)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["failures"] = [{"file": f, "reason": r} for f, r in self.failures]
        d["warnings"] = [{"file": f, "message": m} for f, m in self.warnings]
        d["pages_without_text"] = [{"file": f, "page": p} for f, p in self.pages_without_text]
        return d
