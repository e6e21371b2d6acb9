"""Retriever ``whoosh``: BM25 over page text with the paper's query language (Whoosh).

AND/OR/NOT, quoted phrases, ``*`` and ``?`` wildcards; AND between bare words (parsed by
``madqa_plugins.text.query_language``, as ``tantivy`` does). A *plain* query of several words (no operator,
quote or wildcard: a question typed as-is) is ranked by ``ranking`` instead of a strict AND: by
default pages holding every word first, then the best pages holding some of them, so it never
finds less than OR-grouped BM25 and keeps a keyword query's precision. When a query matches nothing
it falls back to stemmed variants, then to any-term (OR) matching, and says so.

Options (the ``options`` dict of ``WhooshRetriever(corpus, options)``):

- ``analyzer``: ``"standard"`` (default: words as written) or ``"stemming"`` (every word also
  matches its stemmed variants, e.g. report/reports/reporting, from the first attempt; phrases
  stay exact until the fallback).
- ``ranking`` of plain queries: ``"all-first"`` (default), ``"coordination"`` (BM25 times the
  share of words present) or ``"or"`` (plain OR-grouped BM25); see docs/search.md for the figures.
- ``proximity`` (0.5; 0 turns it off): a plain query's top candidates are reordered within their
  band by how many of its adjacent word pairs a page writes side by side (``madqa_plugins.text.proximity``).
- ``documents`` (0.2; 0 turns it off): a plain query's top candidates of a document it names (file
  name, title words: ``madqa_plugins.text.documents``) are raised, so "the zoo quick reference" prefers
  ``zoo-quickref.pdf`` over the zoo FAQ.

A scope (``search(..., files=...)``: one document or a chosen set) is a filter inside the search: the
pages of other files are masked out before the top k are taken, so a file's best pages are found
however many pages of other files outrank them.

Words are analyzed by ``madqa_plugins.text.text_analysis`` at index and query time alike: one-character and
punctuated tokens (``6``, ``-v``, ``image/png``, ``C++``, ``2.0``, ``max_steps``) are searchable.
The index holds one field, ``text`` (positions kept for phrases), and a marker with the analysis
version: an index written with other analysis is rebuilt from the corpus's page texts on first
open (and at the next ingest), never searched with mismatched words. Stemmed matching expands each
word into the indexed words sharing its Porter stem (a map beside the index, ``stems.json``).
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
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from whoosh import analysis, fields, index, query
from whoosh.codec.whoosh3 import W3Codec

import madqa
from madqa_plugins.index_build import OpenedIndexes, build_once
from madqa_plugins.text import documents, proximity, query_language, text_analysis
from madqa_plugins.text.snippets import snippet
from madqa_plugins.whoosh.whoosh_arrays import RANKINGS, ArrayBM25, BM25FCachedLengths
from madqa_plugins.whoosh.whoosh_limits import bound_query, timed_search
from madqa_plugins.whoosh.whoosh_writer import PageWriter

STEMS_FILE = "stems.json"
MARKER = "madqa-whoosh.json"
ANALYZERS = ("standard", "stemming")


OPTIONS = text_analysis.bm25_options(RANKINGS)


def _schema() -> fields.Schema:
    # pages are handed over as token lists (madqa_plugins.text.text_analysis); the field's own analyzer is unused
    return fields.Schema(
        file=fields.ID(stored=True),
        page=fields.NUMERIC(stored=True),
        text=fields.TEXT(analyzer=analysis.StandardAnalyzer()),
    )


def usable(folder: Path | None, language: str | None = None) -> bool:
    """True when ``folder`` holds an index written with this analysis (``madqa_plugins.text.text_analysis``),
    in ``language`` when one is named (an index without a language in its marker is English)."""
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8")) if folder else {}
    except (OSError, ValueError):
        return False
    if language is not None and marker.get("language", madqa.DEFAULT_LANGUAGE) != language:
        return False
    return marker.get("analysis") == text_analysis.ANALYSIS_VERSION and index.exists_in(str(folder))


def stem_groups(words: Iterable[str], language: str = madqa.DEFAULT_LANGUAGE) -> dict[str, list[str]]:
    """Indexed words by stem (Porter in English, Snowball in another language), keeping only stems whose
    words are not just the stem itself."""
    return text_analysis.analysis_for(language).stem_groups(words)


def lexicon_stems(ix: Any, language: str = madqa.DEFAULT_LANGUAGE) -> dict[str, list[str]]:
    """The stem map of an index's ``text`` words."""
    with ix.reader() as reader:
        return stem_groups((b.decode("utf-8") for b in reader.lexicon("text")), language)


def _searchable(q: query.Query | None) -> bool:
    """True when the query names at least one real term (not only '*', stopwords or a NOT)."""
    if q is None or isinstance(q, query.Every) or q is query.NullQuery:
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


def _pages_of(searcher: Any, files: AbstractSet[str]) -> frozenset[int]:
    """The document numbers of the pages of ``files`` (a scope), from the ``file`` field's postings."""
    terms = [query.Term("file", name) for name in sorted(files)]
    return frozenset(searcher.docs_for_query(query.Or(terms))) if terms else frozenset()


def _damaged(root: Path, damage: str) -> madqa.IndexDamagedError:
    return madqa.IndexDamagedError(f"the Whoosh index of {root} is damaged ({damage}); `madqa index {root}` "
                                   "rebuilds it")


class _Builder:
    """The shared query tree (``madqa_plugins.text.query_language``) as a Whoosh query over ``text``."""

    def __init__(self, known: Callable[[str], bool], any_term: bool, loose: bool,
                 analysis: text_analysis.Analysis = text_analysis.ENGLISH) -> None:
        self.known, self.any_term, self.loose, self.analysis = known, any_term, loose, analysis

    def term(self, token: str) -> query.Query | None:
        """A query token; a compound the index never saw (``image/png``) searches its parts instead."""
        if not text_analysis.is_compound(token) or self.known(token):
            return query.Term("text", token)
        parts = self.analysis.compound_parts(token)
        if not parts:
            return query.Term("text", token)
        return query.Term("text", parts[0]) if len(parts) == 1 else query.Phrase("text", parts)

    def build(self, node: Any) -> query.Query | None:
        if node is None:
            return None
        kind, value = node
        if kind == "word":
            return self._word(value)
        if kind == "phrase":
            if self.loose:
                return self._all([self._word(w) for w in value.split()])
            tokens = self.analysis.analyze(query_language.WILDCARD.sub(" ", value))
            if not tokens:
                return None
            return query.Term("text", tokens[0]) if len(tokens) == 1 else query.Phrase("text", tokens)
        if kind == "not":
            return None  # only meaningful inside an AND, handled there
        parts = [self.build(n) for n in value if n is not None and n[0] != "not"]
        parts = [p for p in parts if p is not None]
        excluded = [] if kind == "or" else [q for n in value if n is not None and n[0] == "not"
                                            for q in [self.build(n[1])] if q is not None]
        if not parts:
            return None
        if kind == "or" or self.any_term:
            joined = parts[0] if len(parts) == 1 else query.Or(parts)
        else:
            joined = parts[0] if len(parts) == 1 else query.And(parts)
        if excluded:
            return query.And([joined, *(query.Not(x) for x in excluded)])
        return joined

    def _all(self, parts: list[query.Query | None]) -> query.Query | None:
        parts = [p for p in parts if p is not None]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else (query.Or if self.any_term else query.And)(parts)

    def _word(self, word: str) -> query.Query | None:
        if query_language.WILDCARD.search(word):
            core = re.sub(r"[^\w*?./\-@+#]", "", word.lower())
            if not query_language.WILDCARD.sub("", core):
                return None  # a bare wildcard names no term
            if re.fullmatch(r"[^*?]+\*", core):
                return query.Prefix("text", core[:-1])
            return query.Wildcard("text", core)
        return self._all([self.term(t) for t in self.analysis.query_tokens(word)])

    def query(self, text: str) -> query.Query | None:
        return self._all([self.build(n) for n in query_language.parse(text)])


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
    """BM25F over the ``text`` field (shared analysis, ``madqa_plugins.text.text_analysis``) with fallbacks."""

    filters_files = True  # search(..., files=...) searches only those files (madqa.scope)
    update_index_streams = True  # update_index reads its pages once, as they come (madqa.indexers)
    index_analysis = staticmethod(text_analysis.index_text)  # computed once per page with tantivy's (madqa.indexers)
    index_usable = staticmethod(usable)  # madqa.indexers rebuilds an index this says is stale

    index_by_language = True  # analysed in the corpus language: rebuilt when it changes (madqa.indexers)

    def __init__(self, host: madqa.Host, options: dict[str, Any] | None = None) -> None:
        """``host.settings.search_timeout_s``: one search's time budget."""
        self.timeout_s = host.settings.search_timeout_s
        corpus = host.require_corpus("retriever whoosh")
        opts = madqa.read_options(options, OPTIONS, "retriever whoosh")
        self.analyzer, self.ranking, self.proximity = opts["analyzer"], opts["ranking"], opts["proximity"]
        self.documents = opts["documents"]
        self.corpus = corpus
        self.language = corpus.language  # the corpus's analysis: stop words, stemmer, question words
        self.analysis = text_analysis.analysis_for(self.language)
        self.folder = corpus.retriever_dir("whoosh")
        with _quietly() as damage:  # a truncated segment or table of contents: Whoosh raises what it hit
            fresh = usable(self.folder, self.language)
            exists = fresh or index.exists_in(str(self.folder))
        if damage:
            raise _damaged(corpus.root, damage[0])
        if not fresh:
            if not exists and not hasattr(corpus, "iter_pages"):
                raise madqa.CorpusError(f"the Whoosh index of {corpus.root} is missing; run `madqa index` again")
            # missing, or written with other analysis: rebuilt from the stored page texts, once
            build_once(self.folder, lambda folder: usable(folder, self.language),
                       lambda tmp: self.write_index(tmp, None, corpus.iter_pages(), set(), self.language))
        with _quietly() as damage:
            self._open = _OpenIndex.get(self.folder)
        if damage:
            raise _damaged(corpus.root, damage[0])

    # --- building ------------------------------------------------------------------------

    @staticmethod
    def update_index(folder: Path, previous: Path | None, added: Iterable[Any], removed: set[str],
                     host: madqa.Host) -> None:
        """This generation's index, at ingest: ``write_index`` in the corpus language (``host.language``)."""
        WhooshRetriever.write_index(folder, previous, added, removed, host.language)

    @staticmethod
    def write_index(folder: Path, previous: Path | None, added: Iterable[Any], removed: set[str],
                    language: str = madqa.DEFAULT_LANGUAGE) -> None:
        """Write this generation's index into ``folder``, analysed in ``language``: a copy of ``previous``
        updated in place (madqa.indexers hands no ``previous`` when the language changed)."""
        analysis = text_analysis.analysis_for(language)
        if previous is not None and usable(previous, language):
            shutil.copytree(previous, folder, dirs_exist_ok=True)
            ix = index.open_dir(str(folder))
        else:
            folder.mkdir(parents=True, exist_ok=True)
            ix = index.create_in(str(folder), _schema())
        # uncompressed posting blocks: zlib was a sixth of the writing and is undone on every search
        writer = PageWriter(ix, limitmb=128, codec=W3Codec(compression=0))
        try:
            for file in sorted(removed):
                writer.delete_by_term("file", file)
            for page in added:
                writer.add_page(page.file, page.page, analysis.page_tokens(page))
        except BaseException:
            writer.cancel()
            raise
        writer.commit()
        stems = lexicon_stems(ix, language)
        ix.close()
        (folder / STEMS_FILE).write_text(json.dumps(stems, ensure_ascii=False), encoding="utf-8")
        (folder / MARKER).write_text(json.dumps({"analysis": text_analysis.ANALYSIS_VERSION, "language": language}),
                                     encoding="utf-8")

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

    def _stem_map(self) -> dict[str, list[str]]:
        return self._open.stem_map()

    def _variants(self, word: str) -> list[str]:
        key = self.analysis.stem_key(word)
        forms = self._stem_map().get(key)
        if forms is None:
            return [word] if word == key else [word, key]
        return forms if word in forms else [word, *forms]

    def search(self, query_text: str, k: int = 5, files: AbstractSet[str] | None = None) -> madqa.SearchResult:
        """Pages best first (of ``files`` only, when given); an empty or syntax-only query gives no hits
        and a note, never an error."""
        text = " ".join(str(query_text).split())[:1000]
        if not text:
            return madqa.SearchResult((), text, "empty query: nothing to search for")
        with _quietly() as damage:  # a truncated segment is read when the searcher opens
            state = self._open.thread_state()  # this thread's searcher and array scorer
        if damage:
            raise _damaged(self.corpus.root, damage[0])
        searcher, k = state.searcher, max(1, int(k))
        reader = searcher.reader()
        if reader.doc_count() == 0:  # BM25's statistics of no page are undefined ("math domain error")
            return madqa.SearchResult((), text, madqa.NO_PAGES_NOTE)

        def known(token: str) -> bool:
            return reader.doc_frequency("text", token) > 0

        allowed = None if files is None else _pages_of(searcher, files)
        if allowed is not None and not allowed:
            return madqa.SearchResult((), text, "no page of " + ", ".join(sorted(files or ())) + " is in the index")
        try:
            plain = query_language.plain_terms(text, self.analysis)
            if plain is not None:
                named = self.documents > 0 and len(plain) > 1
                ranked, note = self._plain(state, plain, known, max(k, documents.DEPTH) if named else k, allowed)
                if ranked is not None:
                    if named:
                        ranked = self._named(searcher, ranked, plain)[:k]
                    return self._result(searcher, ranked, text, note, plain)
            return self._structured(state, text, known, k, allowed)
        except madqa.MadqaError:  # a damaged page store, a search error: said as they are
            raise
        except Exception as exc:  # e.g. a wildcard too broad for Whoosh: an observation, not a crash
            raise madqa.SearchError(f"the query {text!r} could not be run: {exc}") from exc

    def _plain(self, state: Any, terms: list[str], known: Callable[[str], bool], k: int,
               allowed: frozenset[int] | None = None) -> tuple[list[tuple[float, int]] | None, str | None]:
        """A question or keyword query: every word as written first (or stemmed, per ``analyzer``);
        when no page holds them all, stemmed variants too, keeping whichever covers more words."""
        builder = _Builder(known, any_term=False, loose=False, analysis=self.analysis)
        groups = [g for g in (builder.term(t) for t in terms) if g is not None]
        # a compound the index lacks searches its parts; here as an AND (the array scorer has no phrases)
        groups = [query.And([query.Term("text", w) for w in g.words]) if isinstance(g, query.Phrase) else g
                  for g in groups]
        tries = [self.analyzer == "stemming"] + ([True] if self.analyzer == "standard" else [])
        near = self.proximity > 0 and len(groups) > 1
        depth = max(k, proximity.DEPTH) if near else k  # candidates for the proximity bonus
        best: tuple[list[tuple[float, int, int, float]], bool] | None = None
        budget = madqa.SearchBudget(self.timeout_s)  # the time budget, checked between the two tries
        for stemmed in tries:
            if budget.expired():
                budget.stop()
                break
            qs = [_expand(g, self._variants) if stemmed else g for g in groups]
            ranked = state.fast.top_plain(state.searcher, qs, depth, self.ranking, allowed)
            if ranked is None:
                return None, None  # a phrase among the groups (a compound's parts): the general path
            if ranked and (best is None or ranked[0][2] > best[0][0][2]):
                best = (ranked, stemmed)
            if best and best[0][0][2] >= len(groups):
                break
        if best is None:
            return [], budget.with_notes("no page matches; try synonyms, abbreviations or fewer words")
        ranked, stemmed = best
        complete = ranked[0][2]
        if near:
            ranked = self._near(state.searcher, ranked, terms, len(groups), k)
        ranked = ranked[:k]
        note = None
        if complete < len(groups):
            note = "no page matched every word; showing pages that match any of them, most words first"
        elif stemmed and self.analyzer == "standard":
            note = madqa.stemmed_note({t.lower(): self._variants(t.lower()) for t in terms})
        return [(score, doc) for score, doc, *_ in ranked], budget.with_notes(note)

    def _named(self, searcher: Any, ranked: list[tuple[float, int]], terms: list[str]) -> list[tuple[float, int]]:
        """``ranked`` with the pages of a document the query names raised (``madqa_plugins.text.documents``)."""
        files = {doc: searcher.stored_fields(doc)["file"] for _, doc in ranked}
        return documents.raise_named(ranked, terms, files.__getitem__, self._described, self.documents)

    def _described(self, file: str) -> frozenset[str]:
        cache = self.__dict__.setdefault("_descriptions", {})
        if file not in cache:
            cache[file] = documents.describe(file, self.corpus.page_text(file, 1))
        return cache[file]

    def _near(self, searcher: Any, ranked: list[tuple[float, int, int, float]], terms: list[str],
              n: int, k: int) -> list[tuple[float, int, int, float]]:
        """``ranked`` reordered by the proximity bonus (``madqa_plugins.text.proximity``) within each band: with
        ``all-first``, pages holding all ``n`` words, then the rest; one band for the other rankings."""
        banded = self.ranking == "all-first"
        rows = {doc: (score, count, bm25) for score, doc, count, bm25 in ranked}
        candidates = [(int(banded and count >= n), bm25 if banded else score, doc)
                      for score, doc, count, bm25 in ranked]

        def text_of(doc: int) -> str:
            fields = searcher.stored_fields(doc)
            return self.corpus.page_text(fields["file"], int(fields["page"]))

        out = []
        for _, raised, doc in proximity.rerank(candidates, terms, text_of, self.proximity, k):
            score, count, bm25 = rows[doc]
            out.append((raised + (score - bm25 if banded else 0.0), doc, count, bm25))
        return out

    def _structured(self, state: Any, text: str, known: Callable[[str], bool], k: int,
                    allowed: frozenset[int] | None = None) -> madqa.SearchResult:
        loosened = "stemmed"  # the note naming the query's variants, worked out only when it is given
        if self.analyzer == "stemming":
            loosened = "no page matched every phrase exactly; phrases loosened to words"
        # (stemmed, any term, phrases loosened, note)
        attempts = (
            (self.analyzer == "stemming", False, False, None),
            (True, False, True, loosened),
            (True, True, True, "no page matched every word; showing pages that match any of them"),
        )
        searcher = state.searcher
        budget = madqa.SearchBudget(self.timeout_s)  # wildcard expansion and time (madqa.search_limits)
        any_terms = False
        for stemmed, any_term, loose, note in attempts:
            if budget.expired():
                budget.stop()
                break
            parsed = _Builder(known, any_term, loose, self.analysis).query(text)
            if not _searchable(parsed):
                continue
            any_terms = True
            if stemmed:
                parsed = _expand(parsed, self._variants)
            parsed = bound_query(parsed, searcher.reader(), budget)
            ranked = state.fast.top(searcher, parsed, k, allowed)
            if ranked is None:
                ranked = timed_search(searcher, parsed, k, budget, allowed)
            if ranked:
                if note == "stemmed":
                    note = madqa.stemmed_note({w.lower(): self._variants(w.lower())
                                               for w in query_language.query_words(text) if w.isalnum()},
                                              phrases_loosened=True)
                return self._result(searcher, ranked, text, budget.with_notes(note))
        if not any_terms:
            return madqa.SearchResult((), text, budget.with_notes("the query has no searchable words (only "
                                      "operators, stopwords or bare wildcards); try content words"))
        return madqa.SearchResult((), text, budget.with_notes("no page matches; try synonyms, abbreviations "
                                                              "or fewer words"))

    def _result(self, searcher: Any, ranked: list[tuple[float, int]], text: str,
                note: str | None, terms: list[str] | None = None) -> madqa.SearchResult:
        if not ranked:
            return madqa.SearchResult((), text, note or "no page matches; try synonyms, abbreviations or fewer words")
        terms = terms or query_language.query_words(text)
        stored = [searcher.stored_fields(docnum) for _, docnum in ranked]
        hits = tuple(
            madqa.Hit(f["file"], int(f["page"]), float(score),
                      snippet(self.corpus.page_text(f["file"], int(f["page"])), terms))
            for (score, _), f in zip(ranked, stored, strict=True)
        )
        return madqa.SearchResult(hits, text, note)


@madqa.hookimpl(trylast=True)
def register_retrievers(register: madqa.Register) -> None:
    register("whoosh", WhooshRetriever, "BM25 (Whoosh) with AND/OR/NOT, phrases, wildcards; stemmed fallback "
             "(options: analyzer=standard|stemming, ranking=all-first|coordination|or)", options=OPTIONS,
             takes_host=True)
