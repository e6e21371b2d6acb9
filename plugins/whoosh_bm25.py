"""Retriever ``whoosh``: BM25 over page text with the paper's query language (Whoosh).

AND/OR/NOT, quoted phrases, ``*`` and ``?`` wildcards; AND between bare words. When the query
matches nothing it falls back to stemmed variants, then to any-term (OR) matching, and says so.

Options (the ``options`` dict of ``WhooshRetriever(corpus, options)``):

- ``analyzer``: ``"standard"`` (default; the paper's baseline: words as written, lower-cased,
  stop words dropped) or ``"stemming"`` (every word also matches its stemmed variants, e.g.
  report/reports/reporting, from the first attempt; phrases stay exact until the fallback).

There is no field-boost option: a page is one field of text (PDFs carry no reliable title or
heading fields to boost), and an unknown option is an error rather than silently ignored.

The index holds one analyzed field, ``text`` (positions kept for phrases). Stemmed matching
expands each word into the indexed words sharing its Porter stem (a map written beside the
index at ingest, ``stems.json``), so the index is written once instead of twice. Pages are
tokenized in one pass with exactly the standard analyzer's rules and handed to Whoosh as tokens.
Indexes written before this (with a second ``stem`` field) still open and search; their stem map
is built on first use.
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
import shutil
import threading
import traceback
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from whoosh import analysis, fields, index, qparser, query
from whoosh.analysis.tokenizers import default_pattern
from whoosh.codec.whoosh3 import W3Codec
from whoosh.lang.porter import stem as porter_stem

import madqa
from plugins.index_build import OpenedIndexes
from plugins.snippets import snippet
from plugins.whoosh_arrays import ArrayBM25, BM25FCachedLengths
from plugins.whoosh_limits import bound_query, timed_search

_WORD = re.compile(r"\w+", re.UNICODE)
_OPERATOR = re.compile(r"\b(AND|OR|NOT|ANDNOT|ANDMAYBE)\b")
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


def lexicon_stems(ix: Any) -> dict[str, list[str]]:
    """The stem map of an index's ``text`` words."""
    with ix.reader() as reader:
        return stem_groups(b.decode("utf-8") for b in reader.lexicon("text"))


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


def _expand(q: query.Query, variants: Callable[[str], list[str]]) -> query.Query:
    """``q`` with each word of the text field replaced by the OR of its indexed stemmed variants."""
    def visit(node: query.Query) -> query.Query:
        if isinstance(node, query.Term) and node.fieldname == "text":
            forms = variants(node.text)
            if forms != [node.text]:
                return query.Or([query.Term("text", f) for f in forms], boost=node.boost)
        return node

    return q.accept(visit)


@contextlib.contextmanager
def _quietly() -> Iterator[list[str]]:
    """Catch what Whoosh raises on a truncated file (yields a list given its description), closing the file
    it then leaves open without a ResourceWarning; a madqa error passes through."""
    damage: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            yield damage
        except madqa.MadqaError:
            raise
        except Exception as exc:
            damage.append(f"{type(exc).__name__}: {exc}")
            traceback.clear_frames(exc.__traceback__)  # drops Whoosh's frames, and the file they held, now
            gc.collect()


def _damaged(root: Path, damage: str) -> madqa.IndexDamagedError:
    return madqa.IndexDamagedError(f"the Whoosh index of {root} is damaged ({damage}); `madqa index {root}` "
                                   "rebuilds it")


class _OpenIndex:
    """An opened index shared by every retriever on it: one searcher per thread (with its caches of
    page lengths and postings) and one stem map, instead of opening the index for every question."""

    _opened: OpenedIndexes[_OpenIndex] = OpenedIndexes(max_open=8)

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ix = index.open_dir(str(folder))
        self._local = threading.local()
        self._stems: dict[str, list[str]] | None = None
        self._stems_lock = threading.Lock()

    @classmethod
    def get(cls, folder: Path) -> _OpenIndex:
        """The shared opened index of ``folder``."""
        return cls._opened.get(folder, cls)

    def thread_state(self) -> Any:
        local = self._local
        if getattr(local, "searcher", None) is None:
            weighting = BM25FCachedLengths()
            local.fast = ArrayBM25(weighting)
            local.parsers = {any_term: _parser("text", self.ix.schema, any_term) for any_term in (False, True)}
            local.searcher = self.ix.searcher(weighting=weighting)
        return local

    def stem_map(self) -> dict[str, list[str]]:
        """Indexed words by stem: from the file beside the index, or (older indexes) from its lexicon."""
        with self._stems_lock:
            if self._stems is None:
                try:
                    self._stems = json.loads((self.folder / STEMS_FILE).read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    self._stems = lexicon_stems(self.ix)
            return self._stems


class WhooshRetriever:
    """BM25F over the ``text`` field (standard analyzer, as the paper's baseline) with fallbacks."""

    update_index_streams = True  # update_index reads its pages once, as they come (madqa.indexers)

    def __init__(self, corpus: Any, options: dict[str, Any] | None = None) -> None:
        self.analyzer = madqa.read_options(options, {"analyzer": "standard"}, "retriever whoosh")["analyzer"]
        if self.analyzer not in ANALYZERS:
            raise madqa.PluginError(f"whoosh: analyzer must be one of {', '.join(ANALYZERS)}, not {self.analyzer!r}")
        self.corpus = corpus
        self.folder = corpus.retriever_dir("whoosh")
        with _quietly() as damage:  # a truncated segment or table of contents: Whoosh raises what it hit
            if not index.exists_in(str(self.folder)):
                raise madqa.CorpusError(f"the Whoosh index of {corpus.root} is missing; run `madqa index` again")
            self._open = _OpenIndex.get(self.folder)
        if damage:
            raise _damaged(corpus.root, damage[0])

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
        writer = ix.writer(limitmb=128, codec=W3Codec(compression=0))
        try:
            for file in sorted(removed):
                writer.delete_by_term("file", file)
            for page in added:
                writer.add_document(file=page.file, page=page.page, text=analyze(page.text))
        except BaseException:
            writer.cancel()
            raise
        writer.commit()
        stems = lexicon_stems(ix)
        ix.close()
        (folder / STEMS_FILE).write_text(json.dumps(stems, ensure_ascii=False), encoding="utf-8")

    @staticmethod
    def check_index(folder: Path, pages: int) -> str | None:
        """Why the index in ``folder`` cannot be reused, or None when it opens and reads back whole."""
        docs = pages
        with _quietly() as damage:
            ix = index.open_dir(str(folder))
            try:
                with ix.reader() as reader:
                    docs = reader.doc_count()
                    sum(1 for _ in reader.all_stored_fields())
                    sum(1 for _ in reader.lexicon("text"))
            finally:
                ix.close()
        if damage:
            return damage[0]
        return None if docs == pages else f"{docs} pages indexed, the manifest says {pages}"

    # --- searching -----------------------------------------------------------------------

    @property
    def ix(self) -> Any:
        return self._open.ix

    def _searcher(self) -> Any:
        return self._open.thread_state().searcher

    def _stem_map(self) -> dict[str, list[str]]:
        return self._open.stem_map()

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
        with _quietly() as damage:  # a truncated segment is read when the searcher opens
            state = self._open.thread_state()  # this thread's searcher, parsers and array scorer
        if damage:
            raise _damaged(self.corpus.root, damage[0])
        searcher = state.searcher
        budget = madqa.SearchBudget()  # wildcard expansion and time (madqa.search_limits)
        any_terms = False
        for stemmed, any_term, loose, note in attempts:
            if budget.expired():
                budget.stop()
                break
            # the fallbacks loosen phrases to words
            parsed = _parse(state.parsers[any_term], text.replace('"', " ") if loose else text)
            if not _searchable(parsed):
                continue
            any_terms = True
            if stemmed:
                parsed = _expand(parsed, self._variants)
            parsed = bound_query(parsed, searcher.reader(), budget)
            try:
                ranked = state.fast.top(searcher, parsed, max(1, int(k)))
                if ranked is None:
                    ranked = timed_search(searcher, parsed, max(1, int(k)), budget)
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
                return madqa.SearchResult(hits, text, budget.with_notes(note))
        if not any_terms:
            return madqa.SearchResult((), text, budget.with_notes("the query has no searchable words (only "
                                      "operators, stopwords or bare wildcards); try content words"))
        return madqa.SearchResult((), text, budget.with_notes("no page matches; try synonyms, abbreviations "
                                                              "or fewer words"))


@madqa.hookimpl(trylast=True)
def register_retrievers(register: madqa.Register) -> None:
    register("whoosh", WhooshRetriever, "BM25 (Whoosh) with AND/OR/NOT, phrases, wildcards; stemmed fallback "
             "(options: analyzer=standard|stemming)")
