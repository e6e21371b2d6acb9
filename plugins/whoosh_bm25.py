"""Retriever ``whoosh``: BM25 over page text with the paper's query language (Whoosh).

AND/OR/NOT, quoted phrases, ``*`` and ``?`` wildcards; AND between bare words. When the query
matches nothing it falls back to stemmed variants, then to any-term (OR) matching, and says so.

Options (the ``options`` dict of ``WhooshRetriever(corpus, options)``):

- ``analyzer``: ``"standard"`` (default; the paper's baseline: words as written, lower-cased,
  stop words dropped) or ``"stemming"`` (every word also matches its stemmed variants, e.g.
  report/reports/reporting, from the first attempt; phrases stay exact until the fallback).

The index holds one analyzed field, ``text`` (positions kept for phrases). Stemmed matching
expands each word into the indexed words sharing its Porter stem (a map written beside the
index at ingest, ``stems.json``), so the index is written once instead of twice. Pages are
tokenized in one pass with exactly the standard analyzer's rules and handed to Whoosh as tokens.
Indexes written before this (with a second ``stem`` field) still open and search; their stem map
is built on first use.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
from whoosh import analysis, fields, index, qparser, query, scoring
from whoosh.analysis.tokenizers import default_pattern
from whoosh.codec.whoosh3 import W3Codec, W3LeafMatcher
from whoosh.lang.porter import stem as porter_stem

import madqa

_WORD = re.compile(r"\w+", re.UNICODE)
# the standard analyzer's tokenizer pattern, its group made non-capturing so findall gives whole tokens
_TOKEN = re.compile(default_pattern.pattern.replace("(", "(?:"), re.UNICODE)
_STOP = analysis.STOP_WORDS
_MIN_SIZE = 2  # StandardAnalyzer's minsize
STEMS_FILE = "stems.json"
ANALYZERS = ("standard", "stemming")


def _schema() -> fields.Schema:
    return fields.Schema(
        file=fields.ID(stored=True),
        page=fields.NUMERIC(stored=True),
        text=fields.TEXT(analyzer=analysis.StandardAnalyzer()),
    )


def analyze(text: str) -> list[str]:
    """The tokens StandardAnalyzer() makes of ``text``, in one pass (several times cheaper)."""
    return [w for w in map(str.lower, _TOKEN.findall(text)) if len(w) >= _MIN_SIZE and w not in _STOP]


def stem_groups(words: Iterable[str]) -> dict[str, list[str]]:
    """Indexed words by Porter stem, keeping only stems whose words are not just the stem itself."""
    groups: dict[str, list[str]] = defaultdict(list)
    for word in words:
        groups[word if word.isdigit() else porter_stem(word)].append(word)
    return {s: sorted(ws) for s, ws in groups.items() if ws != [s]}


def _parser(field: str, schema: fields.Schema, any_term: bool) -> qparser.QueryParser:
    group = qparser.OrGroup.factory(0.9) if any_term else qparser.AndGroup
    parser = qparser.QueryParser(field, schema, group=group)
    parser.remove_plugin_class(qparser.FieldsPlugin)  # "page:3" is text, not a field query
    parser.remove_plugin_class(qparser.BoostPlugin)
    return parser


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


def _expand(q: query.Query, variants: Callable[[str], list[str]]) -> query.Query:
    """``q`` with each word of the text field replaced by the OR of its indexed stemmed variants."""
    def visit(node: query.Query) -> query.Query:
        if isinstance(node, query.Term) and node.fieldname == "text":
            forms = variants(node.text)
            if forms != [node.text]:
                return query.Or([query.Term("text", f) for f in forms], boost=node.boost)
        return node

    return q.accept(visit)


class _BM25F(scoring.BM25F):
    """BM25F whose scorers read page lengths from a list loaded once per segment, not from disk per hit."""

    def scorer(self, searcher: Any, fieldname: str, text: str, qf: int = 1) -> Any:
        scorer = super().scorer(searcher, fieldname, text, qf)
        if hasattr(scorer, "dfl"):
            cache = searcher.__dict__.setdefault("_madqa_lengths", {})
            lengths = cache.get(fieldname)
            if lengths is None:
                reader = searcher.reader()
                lengths = cache[fieldname] = [reader.doc_field_length(d, fieldname, 1)
                                              for d in range(reader.doc_count_all())]
            scorer.dfl = lengths.__getitem__
        return scorer


class _FastBM25:
    """Top-k for queries made only of words, AND and OR (most agent queries), scored with numpy.

    Whoosh walks such queries posting by posting in Python; here each word's postings are read once
    per segment (block by block, kept in a small cache) and scored as arrays with BM25F's formula,
    statistics and the index's own quantized page lengths, so scores and order equal Whoosh's
    (ties: lower document number first). Anything else (phrases, wildcards, NOT, weighted OR,
    boosts, segments with deletions) returns None and goes to Whoosh.
    """

    MAX_CACHED_POSTINGS = 4_000_000  # ~48 MB of arrays per searcher; cleared when exceeded

    def __init__(self, weighting: _BM25F) -> None:
        self.weighting = weighting

    @staticmethod
    def supports(q: query.Query) -> bool:
        if isinstance(q, query.Term):
            return q.fieldname == "text" and q.boost == 1.0
        if type(q) is query.And:  # NOT x inside an AND only excludes (as Whoosh's AndNot does)
            positive = [sub for sub in q.subqueries if not isinstance(sub, query.Not)]
            negative = [sub.query for sub in q.subqueries if isinstance(sub, query.Not)]
            return (q.boost == 1.0 and bool(positive) and all(_FastBM25.supports(sub) for sub in positive)
                    and all(_FastBM25.supports(sub) and sub.boost == 1.0 for sub in negative))
        if type(q) is query.Or:
            scaled = getattr(q, "scale", None) or getattr(q, "minmatch", 0)
            return not scaled and q.boost == 1.0 and all(_FastBM25.supports(sub) for sub in q.subqueries)
        return False

    def top(self, searcher: Any, q: query.Query, k: int) -> list[tuple[float, int]] | None:
        """[(score, global docnum)] best first, or None when this query or index is not for us."""
        if not self.supports(q):
            return None
        leaves = searcher.leaf_searchers()
        if any(sub.reader().has_deletions() for sub, _ in leaves):
            return None
        found: list[tuple[float, int]] = []
        for sub, offset in leaves:
            lengths = sub.__dict__.get("_madqa_lengths_np")
            if lengths is None:
                reader = sub.reader()
                lengths = sub.__dict__["_madqa_lengths_np"] = np.array(
                    [reader.doc_field_length(d, "text", 1) for d in range(reader.doc_count_all())], dtype=np.float64)
            scores, matched = self._eval(searcher, sub, q, lengths)
            docs = np.flatnonzero(matched)
            if len(docs) > k:
                docs = docs[np.argpartition(-scores[docs], k - 1)[:k]]  # a superset of the top k...
                cut = scores[docs].min()
                docs = np.flatnonzero(matched & (scores >= cut))  # ...with every tie at the cut kept
            found += [(float(scores[d]), int(d) + offset) for d in docs]
        found.sort(key=lambda item: (-item[0], item[1]))
        return found[:k]

    def _eval(self, top: Any, sub: Any, q: query.Query, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(q, query.Term):
            scores = np.zeros(len(lengths))
            ids, weights = self._postings(sub, q.text)
            if len(ids):
                idf = top.idf("text", q.text)
                avgfl = top.avg_field_length("text") or 1
                b, k1 = self.weighting.B, self.weighting.K1
                scores[ids] = idf * (weights * (k1 + 1)) / (weights + k1 * ((1 - b) + b * lengths[ids] / avgfl))
            matched = np.zeros(len(lengths), dtype=bool)
            matched[ids] = True
            return scores, matched
        parts = [self._eval(top, sub, child, lengths) for child in q.subqueries if not isinstance(child, query.Not)]
        scores = np.sum([p[0] for p in parts], axis=0)
        flags = [p[1] for p in parts]
        matched = np.logical_and.reduce(flags) if isinstance(q, query.And) else np.logical_or.reduce(flags)
        for child in q.subqueries:
            if isinstance(child, query.Not):  # Whoosh's matcher for it scores a constant 1.0 where it matches
                matched &= ~self._eval(top, sub, child.query, lengths)[1]
                scores = scores + 1.0
        return np.where(matched, scores, 0.0), matched

    def _postings(self, sub: Any, word: str) -> tuple[np.ndarray, np.ndarray]:
        cache = sub.__dict__.setdefault("_madqa_postings", {})
        hit = cache.get(word)
        if hit is not None:
            return hit
        reader = sub.reader()
        ids: list[np.ndarray] = []
        weights: list[np.ndarray] = []
        if ("text", word) in reader:
            m = reader.postings("text", word)
            if isinstance(m, W3LeafMatcher):
                while m.is_active():  # a block at a time: (delta-coded ids, weights or one weight or None, ...)
                    m._read_data()
                    block_ids = np.cumsum(np.asarray(m._data[0], dtype=np.int64))
                    w = m._data[1]
                    ids.append(block_ids)
                    weights.append(np.full(len(block_ids), 1.0 if w is None else w) if w is None or
                                   isinstance(w, float) else np.asarray(w, dtype=np.float64))
                    m._next_block()
            else:
                pairs = []
                while m.is_active():
                    pairs.append((m.id(), m.weight()))
                    m.next()
                ids.append(np.array([i for i, _ in pairs], dtype=np.int64))
                weights.append(np.array([w for _, w in pairs], dtype=np.float64))
        result = (np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64),
                  np.concatenate(weights) if weights else np.zeros(0))
        size = sub.__dict__.get("_madqa_postings_size", 0) + len(result[0])
        if size > self.MAX_CACHED_POSTINGS:
            cache.clear()
            size = len(result[0])
        sub.__dict__["_madqa_postings_size"] = size
        cache[word] = result
        return result


class WhooshRetriever:
    """BM25F over the ``text`` field (standard analyzer, as the paper's baseline) with fallbacks."""

    update_index_streams = True  # update_index reads its pages once, as they come (madqa.indexers)

    def __init__(self, corpus: Any, options: dict[str, Any] | None = None) -> None:
        options = options or {}
        self.analyzer = str(options.get("analyzer") or "standard")
        if self.analyzer not in ANALYZERS:
            raise madqa.PluginError(f"whoosh: analyzer must be one of {', '.join(ANALYZERS)}, not {self.analyzer!r}")
        self.corpus = corpus
        self.folder = corpus.retriever_dir("whoosh")
        if not index.exists_in(str(self.folder)):
            raise madqa.CorpusError(f"the Whoosh index of {corpus.root} is missing; run `madqa index` again")
        self.ix = index.open_dir(str(self.folder))
        self._local = threading.local()
        self._stems: dict[str, list[str]] | None = None
        self._stems_lock = threading.Lock()

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
        # uncompressed posting blocks: zlib was a sixth of the writing and is undone on every search
        writer = ix.writer(limitmb=96, codec=W3Codec(compression=0))
        try:
            for file in sorted(removed):
                writer.delete_by_term("file", file)
            for page in added:
                writer.add_document(file=page.file, page=page.page, text=analyze(page.text))
        except BaseException:
            writer.cancel()
            raise
        writer.commit()
        with ix.reader() as reader:
            words = [b.decode("utf-8") for b in reader.lexicon("text")]
        ix.close()
        (folder / STEMS_FILE).write_text(json.dumps(stem_groups(words), ensure_ascii=False), encoding="utf-8")

    # --- searching -----------------------------------------------------------------------

    def _searcher(self) -> Any:
        searcher = getattr(self._local, "searcher", None)
        if searcher is None:
            weighting = _BM25F()
            searcher = self._local.searcher = self.ix.searcher(weighting=weighting)
            self._local.fast = _FastBM25(weighting)
            self._local.parsers = {any_term: _parser("text", self.ix.schema, any_term) for any_term in (False, True)}
        return searcher

    def _stem_map(self) -> dict[str, list[str]]:
        """Indexed words by stem: from the file beside the index, or (older indexes) from its lexicon."""
        with self._stems_lock:
            if self._stems is None:
                try:
                    self._stems = json.loads((self.folder / STEMS_FILE).read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    with self.ix.reader() as reader:
                        self._stems = stem_groups(b.decode("utf-8") for b in reader.lexicon("text"))
            return self._stems

    def _variants(self, word: str) -> list[str]:
        key = word if word.isdigit() else porter_stem(word)
        forms = self._stem_map().get(key)
        if forms is None:
            return [word] if word == key else [word, key]
        return forms if word in forms else [word, *forms]

    def search(self, query_text: str, k: int = 5) -> madqa.SearchResult:
        """Pages best first; an empty or syntax-only query gives no hits and a note, never an error."""
        text = " ".join(str(query_text).split())[:1000]
        if not text:
            return madqa.SearchResult((), text, "empty query: nothing to search for")
        loosened = ("no page matched exactly; matched stemmed variants (e.g. report/reports), "
                    "phrases loosened to words")
        if self.analyzer == "stemming":
            loosened = "no page matched every phrase exactly; phrases loosened to words"
        # (stemmed, any term, phrases loosened, note)
        attempts = (
            (self.analyzer == "stemming", False, False, None),
            (True, False, True, loosened),
            (True, True, True, "no page matched every word; showing pages that match any of them"),
        )
        searcher = self._searcher()
        any_terms = False
        for stemmed, any_term, loose, note in attempts:
            # the fallbacks loosen phrases to words
            parsed = self._local.parsers[any_term].parse(text.replace('"', " ") if loose else text)
            if not _searchable(parsed):
                continue
            any_terms = True
            if stemmed:
                parsed = _expand(parsed, self._variants)
            try:
                ranked = self._local.fast.top(searcher, parsed, max(1, int(k)))
                if ranked is None:
                    results = searcher.search(parsed, limit=max(1, int(k)))
                    ranked = [(r.score, r.docnum) for r in results]
            except Exception as exc:  # e.g. a wildcard too broad for Whoosh: an observation, not a crash
                raise madqa.SearchError(f"the query {text!r} could not be run: {exc}") from exc
            if ranked:
                terms = [t for t in _WORD.findall(text) if t.upper() not in ("AND", "OR", "NOT")]
                stored = [searcher.stored_fields(docnum) for _, docnum in ranked]
                hits = tuple(
                    madqa.Hit(f["file"], int(f["page"]), float(score),
                              snippet(self.corpus.page_text(f["file"], int(f["page"])), terms))
                    for (score, _), f in zip(ranked, stored, strict=True)
                )
                return madqa.SearchResult(hits, text, note)
        if not any_terms:
            return madqa.SearchResult((), text, "the query has no searchable words (only operators, "
                                                "stopwords or bare wildcards); try content words")
        return madqa.SearchResult((), text, "no page matches; try synonyms, abbreviations or fewer words")


@madqa.hookimpl(trylast=True)
def register_retrievers(register: madqa.Register) -> None:
    register("whoosh", WhooshRetriever, "BM25 (Whoosh) with AND/OR/NOT, phrases, wildcards; stemmed fallback "
             "(options: analyzer=standard|stemming)")
