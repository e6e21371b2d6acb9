"""Retriever ``whoosh``: BM25 over page text with the paper's query language (Whoosh).

AND/OR/NOT, quoted phrases, ``*`` and ``?`` wildcards; AND between bare words. When the query
matches nothing it falls back to stemmed variants, then to any-term (OR) matching, and says so.
"""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from whoosh import analysis, fields, index, qparser, query, scoring

import madqa

_WORD = re.compile(r"\w+", re.UNICODE)
_OPERATOR = re.compile(r"\b(AND|OR|NOT|ANDNOT|ANDMAYBE)\b")


def _schema() -> fields.Schema:
    return fields.Schema(
        file=fields.ID(stored=True),
        page=fields.NUMERIC(stored=True),
        text=fields.TEXT(analyzer=analysis.StandardAnalyzer()),
        stem=fields.TEXT(analyzer=analysis.StemmingAnalyzer(), phrase=False),
    )


def _parser(field: str, schema: fields.Schema, any_term: bool) -> qparser.QueryParser:
    group = qparser.OrGroup.factory(0.9) if any_term else qparser.AndGroup
    parser = qparser.QueryParser(field, schema, group=group)
    parser.remove_plugin_class(qparser.FieldsPlugin)  # "page:3" is text, not a field query
    parser.remove_plugin_class(qparser.BoostPlugin)
    return parser


def _parse(parser: qparser.QueryParser, text: str) -> query.Query:
    """The parsed query; when Whoosh's parser trips on odd operator runs (``NOT NOT x`` raises
    IndexError inside Whoosh), the operators are read as plain words instead."""
    try:
        return parser.parse(text)
    except Exception:
        return parser.parse(_OPERATOR.sub(lambda m: m.group(0).lower(), text))


def _searchable(q: query.Query) -> bool:
    """True when the parsed query names at least one real term (not only '*' or stopwords)."""
    if isinstance(q, query.Every) or q is query.NullQuery:
        return False
    if isinstance(q, (query.Prefix, query.Wildcard)):
        return len(re.sub(r"[*?]", "", q.text)) >= 1
    if isinstance(q, query.Not):
        return False
    if isinstance(q, query.CompoundQuery):
        return any(_searchable(sub) for sub in q.subqueries)
    return bool(list(q.iter_all_terms())) or isinstance(q, query.Phrase)


def snippet(text: str, terms: Iterable[str], width: int = 200) -> str:
    """A short window of ``text`` around the first query term found, whitespace collapsed."""
    flat = " ".join(text.split())
    lowered = flat.lower()
    positions = [lowered.find(t.lower().rstrip("*?")) for t in terms if t.strip("*?")]
    positions = [p for p in positions if p >= 0]
    start = max(0, min(positions) - width // 4) if positions else 0
    piece = flat[start:start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


class WhooshRetriever:
    """BM25F over the ``text`` field (standard analyzer, as the paper's baseline) with fallbacks."""

    def __init__(self, corpus: Any, options: dict[str, Any] | None = None) -> None:
        self.corpus = corpus
        folder = corpus.retriever_dir("whoosh")
        if not index.exists_in(str(folder)):
            raise madqa.CorpusError(f"the Whoosh index of {corpus.root} is missing; run `madqa index` again")
        self.ix = index.open_dir(str(folder))
        self._local = threading.local()

    # --- building ------------------------------------------------------------------------

    @staticmethod
    def update_index(folder: Path, previous: Path | None, added: Iterable[Any], removed: set[str]) -> None:
        """Write this generation's index into ``folder``: a copy of ``previous`` updated in place."""
        if previous is not None and index.exists_in(str(previous)):
            shutil.copytree(previous, folder)
            ix = index.open_dir(str(folder))
        else:
            folder.mkdir(parents=True, exist_ok=True)
            ix = index.create_in(str(folder), _schema())
        writer = ix.writer(limitmb=256)
        try:
            for file in sorted(removed):
                writer.delete_by_term("file", file)
            for page in added:
                writer.add_document(file=page.file, page=page.page, text=page.text, stem=page.text)
        except BaseException:
            writer.cancel()
            raise
        writer.commit()
        ix.close()

    # --- searching -----------------------------------------------------------------------

    def _searcher(self) -> Any:
        searcher = getattr(self._local, "searcher", None)
        if searcher is None:
            searcher = self._local.searcher = self.ix.searcher(weighting=scoring.BM25F())
        return searcher

    def search(self, query_text: str, k: int = 5) -> madqa.SearchResult:
        """Pages best first; an empty or syntax-only query gives no hits and a note, never an error."""
        text = " ".join(str(query_text).split())[:1000]
        if not text:
            return madqa.SearchResult((), text, "empty query: nothing to search for")
        schema = self.ix.schema
        attempts = (
            ("text", False, None),
            ("stem", False, "no page matched exactly; matched stemmed variants (e.g. report/reports), "
                            "phrases loosened to words"),
            ("stem", True, "no page matched every word; showing pages that match any of them"),
        )
        any_terms = False
        for field, any_term, note in attempts:
            # the fallbacks loosen phrases to words (the stemmed field keeps no positions)
            parsed = _parse(_parser(field, schema, any_term), text if field == "text" else text.replace('"', " "))
            if not _searchable(parsed):
                continue
            any_terms = True
            try:
                results = self._searcher().search(parsed, limit=max(1, int(k)))
            except Exception as exc:  # e.g. a wildcard too broad for Whoosh: an observation, not a crash
                raise madqa.SearchError(f"the query {text!r} could not be run: {exc}") from exc
            if len(results):
                terms = [t for t in _WORD.findall(text) if t.upper() not in ("AND", "OR", "NOT")]
                hits = tuple(
                    madqa.Hit(r["file"], int(r["page"]), float(r.score),
                              snippet(self.corpus.page_text(r["file"], int(r["page"])), terms))
                    for r in results
                )
                return madqa.SearchResult(hits, text, note)
        if not any_terms:
            return madqa.SearchResult((), text, "the query has no searchable words (only operators, "
                                                "stopwords or bare wildcards); try content words")
        return madqa.SearchResult((), text, "no page matches; try synonyms, abbreviations or fewer words")


@madqa.hookimpl(trylast=True)
def register_retrievers(register: madqa.Register) -> None:
    register("whoosh", WhooshRetriever, "BM25 (Whoosh) with AND/OR/NOT, phrases, wildcards; stemmed fallback")
