"""The paper's released baseline (OxRML/MADQA, baselines/bm25-mllm-agent), re-enacted for comparison.

Its way, described rather than copied: every page shown is rendered on request by ``pdf2image``
(Poppler's ``pdftoppm``) at 200 DPI and encoded as PNG with Pillow, with no cache; its index is one
Whoosh ``TEXT`` field with the default analyzer (plus stored file and page numbers), written by one
writer with ``limitmb=512, procs=1, multisegment=False``, searched with a default ``QueryParser``
(BM25F, AND between words) and a new searcher per query.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterable
from pathlib import Path

REFERENCE_DPI = 200


def render_reference(pdf: Path, page: int) -> tuple[bytes, int, int]:
    """One page the baseline's way: pdf2image at 200 DPI, then PNG bytes; returns (png, width, height)."""
    from pdf2image import convert_from_path

    images = convert_from_path(str(pdf), dpi=REFERENCE_DPI, first_page=page, last_page=page)
    out = io.BytesIO()
    images[0].save(out, format="PNG")
    return out.getvalue(), images[0].width, images[0].height


def build_reference_index(folder: Path, pages: Iterable[tuple[str, int, int, str]]) -> float:
    """Index (file, page, total_pages, text) rows the baseline's way; returns the seconds it took."""
    from whoosh.fields import ID, NUMERIC, TEXT, Schema
    from whoosh.index import create_in

    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    schema = Schema(file=ID(stored=True), page_number=NUMERIC(stored=True), total_pages=NUMERIC(stored=True),
                    text=TEXT(stored=False))
    writer = create_in(str(folder), schema).writer(limitmb=512, procs=1, multisegment=False)
    for file, page, total, text in pages:
        writer.add_document(file=file, page_number=page, total_pages=total, text=text)
    writer.commit()
    return time.perf_counter() - started


class ReferenceSearch:
    """Searches a reference index as the baseline does: parser and searcher made per query."""

    def __init__(self, folder: Path) -> None:
        from whoosh.index import open_dir

        self.ix = open_dir(str(folder))

    def search(self, query: str, k: int = 5) -> list[tuple[str, int]]:
        from whoosh.qparser import QueryParser

        with self.ix.searcher() as searcher:
            parsed = QueryParser("text", self.ix.schema).parse(query)
            return [(hit["file"], hit["page_number"]) for hit in searcher.search(parsed, limit=k)]
