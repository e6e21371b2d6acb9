"""The naive baseline of issue 42: each page one Whoosh document, Whoosh's default analyzer
(``StandardAnalyzer``), the question parsed with ``qparser.OrGroup``, BM25F with its defaults.

Used by bench/typed.py (``--retrievers naive,...``) beside the registered retrievers, so the comparison
is one command. Not a plugin: a reference point, built in a temporary folder from the corpus's page texts.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from whoosh import fields, index, qparser, scoring
from whoosh.analysis import StandardAnalyzer

import madqa


class NaiveRetriever:
    """``search(question, k)`` like a retriever's, over a Whoosh index of ``corpus.iter_pages()``."""

    def __init__(self, corpus: Any, folder: Path | None = None) -> None:
        self._tmp = None if folder else tempfile.TemporaryDirectory(prefix="madqa-naive-")
        root = folder or Path(self._tmp.name)  # type: ignore[union-attr]
        root.mkdir(parents=True, exist_ok=True)
        schema = fields.Schema(file=fields.ID(stored=True), page=fields.NUMERIC(stored=True),
                               text=fields.TEXT(analyzer=StandardAnalyzer()))
        self.ix = index.create_in(str(root), schema)
        writer = self.ix.writer()
        for p in corpus.iter_pages():
            writer.add_document(file=p.file, page=p.page, text=p.text)
        writer.commit()
        self.parser = qparser.QueryParser("text", self.ix.schema, group=qparser.OrGroup)
        self.searcher = self.ix.searcher(weighting=scoring.BM25F())

    def search(self, text: str, k: int = 5) -> madqa.SearchResult:
        results = self.searcher.search(self.parser.parse(text), limit=k)
        hits = tuple(madqa.Hit(r["file"], int(r["page"]), float(r.score), "") for r in results)
        return madqa.SearchResult(hits, text, None)
