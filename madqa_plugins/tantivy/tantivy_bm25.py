"""Retriever ``tantivy``: BM25 over page text in Tantivy (Rust), for corpora far bigger than the demo.

The same query language as ``whoosh``, parsed here into Tantivy queries (Tantivy's own parser would
read ``page:3`` as a field and drops wildcards): AND between bare words, ``AND``/``OR``/``NOT``
(upper case), parentheses, ``"quoted phrases"``, ``*`` and ``?`` wildcards (a regex over the term
dictionary). The query is parsed by ``madqa_plugins.text.query_language`` and its words analyzed by
``madqa_plugins.text.text_analysis``, exactly as ``whoosh`` does (pages are handed to Tantivy already
tokenized, so one-character and punctuated tokens like ``6``, ``-v``, ``image/png``, ``C++`` are
searchable here too). A plain query of several words is ranked pages-holding-every-word first,
then the best partial matches (``ranking``, as for ``whoosh``). The same fallbacks, with the same
notes: no match -> stemmed variants with phrases loosened to words -> any word (OR).

What differs from ``whoosh``, said plainly:
- scores are Tantivy's BM25 (k1=1.2, b=0.75) over one field: same ranking idea, other numbers;
- a wildcard inside a phrase (``"annual rep*"``) is not supported: the wildcard characters are
  dropped and a note says so;
- a wildcard expands to at most 256 matching terms (the most frequent), each BM25-scored; a pattern
  that starts with a wildcard (``*port``) is instead a regex scan of the term dictionary whose hits
  all score alike (Tantivy's regex query is constant-score);
- the any-term fallback sums BM25 over matched words (Whoosh adds a coordination bonus of 0.9).

A scope (``search(..., files=...)``: one document or a chosen set) is a required, zero-scored clause
on the ``file`` field of every query run, so a file's best pages are found however many pages of
other files outrank them, and the scores are those of the query alone.

The index is written at ingest time into each corpus generation (``update_index``: a copy of the
previous generation's index, with removed/changed files deleted and new pages added). A corpus
ingested before this plugin was installed gets its index built on first open, into a temporary
folder renamed into place, so a half-built index is never used.

Options (``[options.retriever]``): ``analyzer`` = ``"standard"`` (default: exact words first) or
``"stemming"`` (start with stemmed matching), and ``ranking`` = ``"all-first"`` (default) or
``"or"``, as for ``whoosh`` (``coordination`` needs per-page match counts Tantivy does not expose),
and ``proximity`` (0.5; 0 off), the adjacent-words bonus of ``madqa_plugins.text.proximity``, as for ``whoosh``;
``documents`` (0.2; 0 off), the named-document bonus of ``madqa_plugins.text.documents``, as for ``whoosh``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import madqa
from madqa_plugins.index_build import build_once
from madqa_plugins.text import documents, proximity, query_language, text_analysis
from madqa_plugins.text.snippets import snippet

try:
    import tantivy
except ImportError:  # registered with requires=("tantivy",): listed as unavailable, with the reason
    tantivy = None

VERSION = 1 + 10 * text_analysis.ANALYSIS_VERSION  # the index layout and the shared analysis together
MARKER = "madqa-tantivy.json"
RANKINGS = ("all-first", "or")
OPTIONS = text_analysis.bm25_options(RANKINGS)


def _analyzer(stemmer: str | None) -> tantivy.TextAnalyzer:
    # pages and query words arrive as madqa_plugins.text.text_analysis tokens joined by spaces
    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
    return (builder.filter(tantivy.Filter.stemmer(stemmer)) if stemmer else builder).build()


_ANALYZERS: dict[tuple[str, str], Any] = {}


def analyzer(field: str, language: str = madqa.DEFAULT_LANGUAGE) -> tantivy.TextAnalyzer:
    """The analyzer of ``field`` ("text" or "stem") in ``language`` (its Snowball stemmer), built once."""
    if (field, language) not in _ANALYZERS:
        stemmer = text_analysis.analysis_for(language).tantivy_stemmer if field == "stem" else None
        _ANALYZERS[field, language] = _analyzer(stemmer)
    return _ANALYZERS[field, language]


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("file", stored=True, tokenizer_name="raw")
    sb.add_integer_field("page", stored=True, indexed=False)
    sb.add_text_field("text", stored=False, tokenizer_name="madqa_text", index_option="position")
    sb.add_text_field("stem", stored=False, tokenizer_name="madqa_stem", index_option="position")
    return sb.build()


def _open(folder: Path, language: str = madqa.DEFAULT_LANGUAGE) -> tantivy.Index:
    ix = tantivy.Index(_schema(), path=str(folder), reuse=True)
    ix.register_tokenizer("madqa_text", analyzer("text", language))
    ix.register_tokenizer("madqa_stem", analyzer("stem", language))
    return ix


def _marked_language(folder: Path) -> str:
    """The language the index in ``folder`` was written in (English when its marker names none)."""
    try:
        return str(json.loads((folder / MARKER).read_text(encoding="utf-8")).get("language", madqa.DEFAULT_LANGUAGE))
    except (OSError, ValueError):
        return madqa.DEFAULT_LANGUAGE


def _usable(folder: Path | None, language: str | None = None) -> bool:
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8")) if folder else {}
    except (OSError, ValueError):
        return False
    if language is not None and marker.get("language", madqa.DEFAULT_LANGUAGE) != language:
        return False
    return marker.get("version") == VERSION


def _write(folder: Path, previous: Path | None, added: Iterable[Any], removed: set[str],
           language: str = madqa.DEFAULT_LANGUAGE) -> None:
    """Fill ``folder`` (absent or empty) with ``previous``'s documents minus ``removed``, plus ``added``."""
    if previous is not None:
        shutil.copytree(previous, folder, dirs_exist_ok=True)
        (folder / MARKER).unlink()
    folder.mkdir(parents=True, exist_ok=True)
    ix = _open(folder, language)
    analysis = text_analysis.analysis_for(language)
    writer = ix.writer(heap_size=128_000_000, num_threads=1)
    try:
        for file in sorted(removed):
            writer.delete_documents_by_term("file", file)
        for page in added:
            tokens = analysis.page_index_text(page)
            writer.add_document(tantivy.Document(file=page.file, page=int(page.page), text=tokens, stem=tokens))
        writer.commit()
        writer.wait_merging_threads()
    except BaseException:
        writer.rollback()
        raise
    (folder / MARKER).write_text(json.dumps({"version": VERSION, "language": language}), encoding="utf-8")


# --- the query language (parsed by madqa_plugins.text.query_language) -----------------------------------


class _Builder:
    """Turns the parse tree into a Tantivy query for one field; None when nothing searchable is left."""

    def __init__(self, schema: tantivy.Schema, field: str, any_term: bool, searcher: Any = None,
                 budget: madqa.SearchBudget | None = None, plain: bool = False,
                 analysis: text_analysis.Analysis = text_analysis.ENGLISH) -> None:
        self.schema, self.field, self.any_term, self.searcher, self.plain = schema, field, any_term, searcher, plain
        self.budget = budget or madqa.SearchBudget()  # wildcard limits shared with whoosh (madqa.search_limits)
        self.analysis = analysis
        self.analyzer = analyzer(field, analysis.language.code)
        self.notes: set[str] = set()

    def build(self, node: Any) -> tantivy.Query | None:
        if node is None:
            return None
        kind, value = node
        if kind == "word":
            return self._word(value)
        if kind == "phrase":
            if "*" in value or "?" in value:
                self.notes.add("wildcards inside a phrase are not supported here; they were ignored")
            return self._terms(self._analyzed(self.analysis.analyze(query_language.WILDCARD.sub(" ", value))),
                               phrase=True)
        if kind == "not":
            return None  # only meaningful inside an AND, handled there
        parts = [self.build(n) for n in value if n is not None and n[0] != "not"]
        parts = [p for p in parts if p is not None]
        if kind == "or" or self.any_term:
            excluded = [] if kind == "or" else self._excluded(value)
            if not parts:
                return None
            if len(parts) == 1 and not excluded:
                return parts[0]
            should = [(tantivy.Occur.Should, p) for p in parts]
            if excluded:
                return tantivy.Query.boolean_query(
                    [(tantivy.Occur.Must, tantivy.Query.boolean_query(should)), *excluded])
            return tantivy.Query.boolean_query(should)
        if not parts:
            return None
        excluded = self._excluded(value)
        if len(parts) == 1 and not excluded:
            return parts[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, p) for p in parts] + excluded)

    def _excluded(self, nodes: list[Any]) -> list[tuple[Any, tantivy.Query]]:
        out = []
        for n in nodes:
            if n is not None and n[0] == "not":
                q = self.build(n[1])
                if q is not None:
                    out.append((tantivy.Occur.MustNot, q))
        return out

    def _word(self, word: str) -> tantivy.Query | None:
        if query_language.WILDCARD.search(word):
            core = re.sub(r"[^\w*?./\-@+#]", "", word.lower())
            if not re.sub(r"[*?]", "", core) or not self.budget.allow(core):
                return None  # a bare wildcard names no term; a too-broad one is dropped with a note
            pattern = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in core)
            prefix = re.split(r"[*?]", core, maxsplit=1)[0]
            if not prefix or self.searcher is None:  # a leading wildcard: a regex scan, constant score
                return tantivy.Query.regex_query(self.schema, self.field, pattern)
            # expand to the most frequent matching terms (madqa.search_limits) so hits keep BM25 scores,
            # as Whoosh's wildcards do; Tantivy's regex query would score every page 1.0
            regex = re.compile(pattern)
            terms = self.budget.top_terms(core, self.searcher.terms_with_prefix(self.field, prefix), regex.fullmatch)
            if not terms:
                return tantivy.Query.empty_query()
            return tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, self.field, t)) for t in terms])
        parts = [self.term(t) for t in self.analysis.query_tokens(word)]  # "foo,bar": foo AND bar
        parts = [p for p in parts if p is not None]
        if len(parts) <= 1:
            return parts[0] if parts else None
        occur = tantivy.Occur.Should if self.any_term else tantivy.Occur.Must
        return tantivy.Query.boolean_query([(occur, p) for p in parts])

    def _analyzed(self, tokens: list[str]) -> list[str]:
        return self.analyzer.analyze(" ".join(tokens)) if self.field == "stem" else tokens

    def term(self, token: str) -> tantivy.Query | None:
        """A query token; a compound the index never saw (``image/png``) searches its parts instead."""
        if text_analysis.is_compound(token) and self.searcher is not None and \
                self.searcher.doc_freq("text", token) == 0 and self.analysis.compound_parts(token):
            return self._terms(self._analyzed(self.analysis.compound_parts(token)), phrase=not self.plain)
        return self._terms(self._analyzed([token]), phrase=False)

    def _terms(self, terms: list[str], phrase: bool) -> tantivy.Query | None:
        if not terms:
            return None
        if len(terms) == 1:
            return tantivy.Query.term_query(self.schema, self.field, terms[0])
        if phrase and self.field == "text":
            return tantivy.Query.phrase_query(self.schema, self.field, terms)
        occur = tantivy.Occur.Should if self.any_term and not phrase else tantivy.Occur.Must
        return tantivy.Query.boolean_query(
            [(occur, tantivy.Query.term_query(self.schema, self.field, t)) for t in terms])


def _query(schema: tantivy.Schema, text: str, field: str, any_term: bool, searcher: Any = None,
           budget: madqa.SearchBudget | None = None, analysis: text_analysis.Analysis = text_analysis.ENGLISH
           ) -> tuple[tantivy.Query | None, set[str]]:
    builder = _Builder(schema, field, any_term, searcher, budget, analysis=analysis)
    parts = [builder.build(node) for node in query_language.parse(text)]
    parts = [p for p in parts if p is not None]
    if not parts:
        return None, builder.notes
    if len(parts) == 1:
        return parts[0], builder.notes
    occur = tantivy.Occur.Should if any_term else tantivy.Occur.Must
    return tantivy.Query.boolean_query([(occur, p) for p in parts]), builder.notes


class TantivyRetriever:
    """BM25 (Tantivy) over the ``text`` field, with stemmed and any-term fallbacks like ``whoosh``."""

    index_analysis = staticmethod(text_analysis.index_text)  # computed once per page with whoosh's (madqa.indexers)
    filters_files = True  # search(..., files=...) searches only those files (madqa.scope)

    index_by_language = True  # analysed in the corpus language: rebuilt when it changes (madqa.indexers)

    def __init__(self, host: madqa.Host, options: dict[str, Any] | None = None) -> None:
        """``host.settings.search_timeout_s``: one search's time budget."""
        self.timeout_s = host.settings.search_timeout_s
        corpus = host.require_corpus("retriever tantivy")
        opts = madqa.read_options(options, OPTIONS, "retriever tantivy")
        self.stem_first, self.ranking = opts["analyzer"] == "stemming", opts["ranking"]
        self.proximity, self.documents = opts["proximity"], opts["documents"]
        self.corpus = corpus
        self.language = corpus.language  # the corpus's analysis: stop words, stemmer, question words
        self.analysis = text_analysis.analysis_for(self.language)
        folder = corpus.retriever_dir("tantivy")
        if not _usable(folder, self.language):
            _build_in_place(folder, corpus, self.language)
        try:
            self.ix = _open(folder, self.language)
        except ValueError as exc:  # truncated or corrupt files
            raise madqa.IndexDamagedError(f"the Tantivy index of {corpus.root} is damaged ({exc}); "
                                          f"`madqa index {corpus.root}` rebuilds it") from None
        self.schema = _schema()

    @staticmethod
    def update_index(folder: Path, previous: Path | None, added: Iterable[Any], removed: set[str],
                     host: madqa.Host) -> None:
        """Write this generation's index into ``folder``, analysed in the corpus language (``host.language``);
        skipped (built on first open) when the previous generation has no usable index, since ``added`` then
        lacks the unchanged pages."""
        language = host.language
        if previous is not None and not _usable(previous, language):
            return
        _write(folder, previous, added, removed, language)

    @staticmethod
    def check_index(folder: Path, pages: int) -> str | None:
        """Why the index in ``folder`` cannot be reused, or None (also when it is built on first use)."""
        if not _usable(folder):
            return None
        docs = _open(folder, _marked_language(folder)).searcher().num_docs
        return None if docs == pages else f"{docs} pages indexed, the manifest says {pages}"

    def search(self, query_text: str, k: int = 5, files: AbstractSet[str] | None = None) -> madqa.SearchResult:
        """Pages best first (of ``files`` only, when given); an empty or syntax-only query gives no hits
        and a note, never an error."""
        text = " ".join(str(query_text).split())[:1000]
        if not text:
            return madqa.SearchResult((), text, "empty query: nothing to search for")
        searcher = self.ix.searcher()
        if searcher.num_docs == 0:
            return madqa.SearchResult((), text, madqa.NO_PAGES_NOTE)
        scope = self._scope(files)
        plain = query_language.plain_terms(text, self.analysis)
        if plain is not None:
            if self.documents <= 0 or len(plain) < 2:
                return self._plain(searcher, text, plain, max(1, int(k)), scope)
            found = self._plain(searcher, text, plain, max(int(k), documents.DEPTH), scope)
            raised = documents.prefer_named(found.hits, plain, lambda h: h.file, lambda h: h.score, self._described,
                                            self.documents)
            hits = tuple(dataclasses.replace(h, score=score) for score, h in raised[:max(1, int(k))])
            return dataclasses.replace(found, hits=hits)
        # "stemmed": the note naming the query's own variants, worked out only when it is given
        attempts = [("text", False, None), ("stem", False, "stemmed"),
                    ("stem", True, "no page matched every word; showing pages that match any of them")]
        if self.stem_first:
            attempts = [("stem", False, None), attempts[2]]
        any_terms = False
        carried: set[str] = set()  # what an earlier attempt could not do, still worth saying
        budget = madqa.SearchBudget(self.timeout_s)  # a Tantivy query cannot be interrupted: checked between attempts
        for field, any_term, note in attempts:
            if budget.expired():
                budget.stop()
                break
            q, notes = _query(self.schema, text if field == "text" else text.replace('"', " "), field, any_term,
                              searcher, budget, self.analysis)
            carried |= notes
            if q is None:
                continue
            any_terms = True
            try:
                result = searcher.search(_within(q, scope), max(1, int(k)))
            except (ValueError, RuntimeError) as exc:  # e.g. a regex Tantivy refuses: an observation
                raise madqa.SearchError(f"the query {text!r} could not be run: {exc}") from exc
            if result.hits:
                if note == "stemmed":
                    note = madqa.stemmed_note({w.lower(): self._variants(searcher, w.lower())
                                               for w in query_language.query_words(text) if w.isalnum()},
                                              phrases_loosened=True)
                return madqa.SearchResult(self._hits(searcher, result.hits, query_language.query_words(text)), text,
                                          budget.with_notes("; ".join([n for n in (note, *sorted(carried)) if n])
                                                            or None))
        if not any_terms:
            return madqa.SearchResult((), text, budget.with_notes("the query has no searchable words (only "
                                      "operators, stopwords or bare wildcards); try content words"))
        return madqa.SearchResult((), text, budget.with_notes("no page matches; try synonyms, abbreviations "
                                                              "or fewer words"))

    def _described(self, file: str) -> frozenset[str]:
        cache = self.__dict__.setdefault("_descriptions", {})
        if file not in cache:
            cache[file] = documents.describe(file, self.corpus.page_text(file, 1))
        return cache[file]

    def _hits(self, searcher: Any, found: list[tuple[float, Any]], terms: list[str]) -> tuple[madqa.Hit, ...]:
        hits = []
        for score, address in found:
            doc = searcher.doc(address)
            file, page = doc["file"][0], int(doc["page"][0])
            hits.append(madqa.Hit(file, page, float(score), snippet(self.corpus.page_text(file, page), terms)))
        return tuple(hits)

    def _scope(self, files: AbstractSet[str] | None) -> tantivy.Query | None:
        """A clause matching the pages of ``files`` (None: the whole collection), scoring nothing."""
        if files is None:
            return None
        names = sorted(files)
        return tantivy.Query.const_score_query(tantivy.Query.term_set_query(self.schema, "file", names), 0.0)

    def _variants(self, searcher: Any, word: str) -> list[str]:
        """Indexed words sharing ``word``'s stem (what a stemmed search matched), the word first; a few."""
        stem = analyzer("stem", self.language).analyze(word)
        if len(stem) != 1 or len(stem[0]) < 3:  # a short stem would walk much of the dictionary
            return [word, *stem]
        # a Porter stem may end otherwise than its words (happi: happy): the words of its prefix, checked
        found = [t for t, _ in searcher.terms_with_prefix("text", stem[0][:-1], limit=500)
                 if t != word and analyzer("stem", self.language).analyze(t) == stem]
        return [word, *sorted(found)[:6]]

    def _plain(self, searcher: Any, text: str, terms: list[str], k: int,
               scope: tantivy.Query | None = None) -> madqa.SearchResult:
        """A question or keyword query, ranked as ``whoosh`` ranks it: pages holding every word first
        (a constant bonus above any page's BM25 sum), then by BM25 over the words they hold."""
        best: tuple[list[Any], bool, str, float | None, bool] | None = None
        budget = madqa.SearchBudget(self.timeout_s)  # the time budget, checked between the two tries
        for field in (["stem"] if self.stem_first else ["text", "stem"]):
            if budget.expired():
                budget.stop()
                break
            builder = _Builder(self.schema, field, False, searcher, plain=True, analysis=self.analysis)
            groups = [g for g in (builder.term(t) for t in terms) if g is not None]
            if not groups:
                continue
            should = [(tantivy.Occur.Should, g) for g in groups]
            bound = 1.0 + sum(2.2 * math.log(1 + (searcher.num_docs + 0.5) / (searcher.doc_freq("text", t) + 0.5))
                              for t in terms)
            if self.ranking == "all-first" and len(groups) > 1:
                every = tantivy.Query.boolean_query([(tantivy.Occur.Must, g) for g in groups])
                should.append((tantivy.Occur.Should, tantivy.Query.const_score_query(every, bound)))
            near = self.proximity > 0 and len(groups) > 1
            ranked = _within(tantivy.Query.boolean_query(should), scope)
            hits = searcher.search(ranked, max(k, proximity.DEPTH) if near else k).hits
            complete = bool(hits) and (len(groups) == 1 or (self.ranking == "all-first" and hits[0][0] >= bound))
            if hits and (best is None or (complete and not best[1])):
                best = (hits, complete, field, bound if near and self.ranking == "all-first" else None, near)
            if best and best[1]:
                break
        if best is None:
            return madqa.SearchResult((), text, budget.with_notes("no page matches; try synonyms, abbreviations "
                                                                  "or fewer words"))
        hits, complete, field, kept_bound, near = best
        hits = (self._near(searcher, hits, terms, kept_bound, k) if near else hits)[:k]
        note = None
        if not complete:
            note = "no page matched every word; showing pages that match any of them, most words first"
        elif field == "stem" and not self.stem_first:
            note = madqa.stemmed_note({t.lower(): self._variants(searcher, t.lower()) for t in terms})
        return madqa.SearchResult(self._hits(searcher, hits, terms), text, budget.with_notes(note))


    def _near(self, searcher: Any, hits: list[tuple[float, Any]], terms: list[str],
              bound: float | None, k: int) -> list[tuple[float, Any]]:
        """``hits`` reordered by the proximity bonus (``madqa_plugins.text.proximity``) within each band: the
        pages holding every word (their score carries the constant ``bound``), then the others."""
        def text_of(address: Any) -> str:
            doc = searcher.doc(address)
            return self.corpus.page_text(doc["file"][0], int(doc["page"][0]))

        top = bound if bound is not None else math.inf
        banded = [(1, score - top, address) if score >= top else (0, score, address) for score, address in hits]
        return [(raised + top if band else raised, address)
                for band, raised, address in proximity.rerank(banded, terms, text_of, self.proximity, k)]


def _within(q: tantivy.Query, scope: tantivy.Query | None) -> tantivy.Query:
    """``q`` limited to a scope's pages (``scope``: a zero-scored clause on ``file``; None: all pages)."""
    if scope is None:
        return q
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, q), (tantivy.Occur.Must, scope)])


def _build_in_place(folder: Path, corpus: madqa.Corpus, language: str = madqa.DEFAULT_LANGUAGE) -> None:
    """Build the whole index from the corpus's page texts, in ``language`` (once; see madqa_plugins.index_build)."""
    build_once(folder, lambda f: _usable(f, language), lambda tmp: _write(tmp, None, corpus.iter_pages(), set(), language))


@madqa.hookimpl(trylast=True)
def register_retrievers(register: madqa.Register) -> None:
    register("tantivy", TantivyRetriever, "BM25 (Tantivy, Rust): the whoosh query language, faster at scale",
             requires=("tantivy",), options=OPTIONS, takes_host=True)
