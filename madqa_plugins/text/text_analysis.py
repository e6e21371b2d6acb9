"""Text analysis shared by the BM25 retrievers (whoosh, tantivy): one tokenizer for pages and queries.

Not a plugin: ``madqa_plugins.whoosh.whoosh_bm25`` and ``madqa_plugins.tantivy.tantivy_bm25`` both call it, at index time and at
query time, so the two sides can never disagree. Why not Whoosh's StandardAnalyzer: it drops every
one-character token (a clause ``6``, a language ``C``) and splits punctuated tokens into pieces that
can no longer be asked for (``image/png`` -> ``image png``, ``--no-color`` -> ``no color``,
``C++`` -> nothing).

Rules (lower-cased; Whoosh's English stop words removed, nothing else):

- a token is a run of letters/digits/underscores, joined across ``.``, ``/``, ``-``, ``@``
  (``2.0``, ``os.path``, ``image/png``, ``x86-64``, ``user@host``), with leading option dashes
  (``-v``, ``--no-color``) and a trailing ``++`` / ``+`` / ``#`` (``C++``, ``C#``) kept;
- one-character tokens count (``6``, ``c``, ``x``) unless they are stop words (``a``);
- a punctuated token (a *compound*) is indexed as itself and then its parts
  (``image/png`` -> ``image/png image png``; ``max_steps`` -> ``max_steps max steps``), so both the
  exact form and its words are searchable, and a phrase analyzed the same way lines up;
- a word broken across a line by a hyphen (``docu-`` newline ``ment``) is indexed as ``document``;
- an English clitic after an apostrophe is dropped (``gnuplot's`` -> ``gnuplot``, ``don't`` ->
  ``don``), so one-letter tokens do not come from possessives;
- a typographic ligature is spelt out (``ﬁle`` -> ``file``, ``ﬂoat`` -> ``float``): TeX-made PDFs write
  them in their text layers (a third of data/realdocs' pages, two in five of the held-out set's), and
  a word holding one could not be found by any typed query.

A query word that is a compound searches the compound; when the index has never seen it (the
documents write ``image png`` or ``imagepng``), the retriever falls back to its parts
(``compound_parts``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

import whoosh.lang as whoosh_lang
from whoosh.analysis import STOP_WORDS
from whoosh.lang.porter import stem as porter_stem

import madqa
from madqa import unfold_ligatures

ANALYSIS_VERSION = 4  # stored beside each index: a different version means the index must be rebuilt
STOP = frozenset(STOP_WORDS)
MAX_TOKEN = 80  # longer runs are noise (base64, hashes): dropped, as Tantivy's remove_long filter does
# question words: dropped from plain (operator-free) queries of several words, never from the index
QUESTION_WORDS = frozenset("""
what which who whom whose why how where when does do did is are was were am be been being has have had
can could should would shall will may might must it its this that these those there their they them
""".split())

_TOKEN = re.compile(
    r"(?:(?<![\w\-+#])-{1,2}(?=[^\W_]))?"  # leading option dashes: -v, --no-color
    r"\w+(?:[./\-@]\w+)*"                    # a word, joined across . / - @
    r"(?:(?:\+\+|\+|#)(?![\w+#]))?",       # C++, C#
)
_PART = re.compile(r"[^\W_]+")
# each starts with its literal ("-", the apostrophe) and looks behind from there: found by a fast scan
_HYPHENATED = re.compile(r"-(?<=[^\W\d_]-)\s*\n\s*(?=[^\W\d_])")
# an English clitic after an apostrophe (gnuplot's, don't, we'll): dropped, not a one-letter word
_CLITIC = re.compile(r"['\u2019](?<=[^\W\d_]['\u2019])(?:s|t|d|ll|re|ve|m)\b", re.IGNORECASE)
_PLAIN = re.compile(r"\w+")


QUESTION_WORDS_BY_LANGUAGE: dict[str, frozenset[str]] = {
    "en": QUESTION_WORDS,
    "de": frozenset("""
was wer wen wem wessen wie wo wann warum weshalb wieso welche welcher welches welchen welchem woher wohin
womit wofür wozu wieviel wie viele gibt ist sind war waren hat haben kann können muss soll man es
""".split()),
    "fr": frozenset("""
quel quelle quels quelles qui que quoi où quand comment pourquoi combien lequel laquelle lesquels lesquelles
est sont était faut peut doit il elle on ce cela
""".split()),
}
# a French or Italian elided article or pronoun before an apostrophe (l'option, d'un, qu'il, dell'uso)
_ELISION = re.compile(r"\b(?:[cdjlmnst]|qu|jusqu|lorsqu|puisqu|dell|dall|nell|sull|un)['\u2019](?=[^\W\d_])",
                      re.IGNORECASE)
_ELIDING = frozenset({"fr", "it"})


class Analysis:
    """The text analysis of one language (``madqa.LANGUAGES``): its stop words, stemmer and question words.

    English keeps what madqa always did (Whoosh's English stop words, Porter, English clitics); another
    language takes Whoosh's Snowball stemmer and stop list for it (``whoosh.lang``), and drops elided
    articles in French and Italian (``l'option`` -> ``option``). ``missing`` names what this machine
    has no data for (then that part is left out: no stop words, or no stemming), for the corpus status."""

    def __init__(self, language: str = madqa.DEFAULT_LANGUAGE) -> None:
        self.language = madqa.language_named(language)
        code = self.language.code
        self.missing: tuple[str, ...] = ()
        if code == "en":
            self.stop, self.stemmer = STOP, porter_stem
        else:
            has_stop, has_stem = whoosh_lang.has_stopwords(code), whoosh_lang.has_stemmer(code)
            self.stop = frozenset(whoosh_lang.stopwords_for_language(code)) if has_stop else frozenset()
            self.stemmer = whoosh_lang.stemmer_for_language(code) if has_stem else None
            self.missing = tuple(what for what, has in (("stop words", has_stop), ("stemmer", has_stem)) if not has)
        self.question_words = QUESTION_WORDS_BY_LANGUAGE.get(code, frozenset())
        self.tantivy_stemmer = self.language.stemmer if self.stemmer is not None else None
        self._elides = code in _ELIDING

    def _norm(self, text: str) -> str:
        text = unfold_ligatures(text)
        if "-" in text:
            text = _HYPHENATED.sub("", text)
        if "'" not in text and "\u2019" not in text:
            return text
        return _ELISION.sub("", text) if self._elides else _CLITIC.sub("", text)

    def compound_parts(self, token: str) -> list[str]:
        """The searchable words inside a compound token (``image/png`` -> ``[image, png]``)."""
        return [p for p in _PART.findall(token) if p not in self.stop]

    def analyze(self, text: str) -> list[str]:
        """The index tokens of ``text``, in order (compounds followed by their parts)."""
        out: list[str] = []
        append = out.append
        stop = self.stop
        for tok in _TOKEN.findall(self._norm(text).lower()):
            if tok.isalnum():  # a plain word: \w+ without "_" (str.isalnum is \w minus the underscore)
                if tok not in stop and len(tok) <= MAX_TOKEN:
                    append(tok)
            elif len(tok) <= MAX_TOKEN:
                append(tok)
                out.extend(p for p in _PART.findall(tok) if p not in stop)
        return out

    def index_text(self, text: str) -> str:
        """``analyze(text)`` joined by spaces (see the module function ``index_text``)."""
        return " ".join(self.analyze(text))

    def page_tokens(self, page: Any) -> list[str]:
        """A page's index tokens: from its ``analysis`` when the ingest computed it, else analyzed here."""
        joined = getattr(page, "analysis", None)
        return self.analyze(page.text) if joined is None else joined.split()

    def page_index_text(self, page: Any) -> str:
        """A page's index tokens joined by spaces, computed here when the ingest did not."""
        joined = getattr(page, "analysis", None)
        return self.index_text(page.text) if joined is None else joined

    def query_tokens(self, word: str) -> list[str]:
        """The terms a query word stands for, compounds whole (``--no-color`` -> ``[--no-color]``,
        ``foo,bar`` -> ``[foo, bar]``); stop words dropped."""
        out = []
        for tok in _TOKEN.findall(self._norm(word).lower()):
            if len(tok) <= MAX_TOKEN and (is_compound(tok) or tok not in self.stop):
                out.append(tok)
        return out

    def question_shaped(self, words: list[str]) -> list[str]:
        """``words`` without question words, when anything else is left (a plain query of 2+ words)."""
        kept = [w for w in words if w not in self.question_words]
        return kept if kept and len(words) > 1 else words

    def stem_key(self, word: str) -> str:
        """The stem of a plain word (the word itself without a stemmer); numbers and compounds are their own key."""
        return self.stemmer(word) if word.isalpha() and self.stemmer is not None else word

    def stem_groups(self, words: Iterable[str]) -> dict[str, list[str]]:
        """Indexed words by stem, keeping only stems whose words are not just the stem itself."""
        groups: dict[str, list[str]] = {}
        for word in words:
            groups.setdefault(self.stem_key(word), []).append(word)
        return {s: sorted(ws) for s, ws in groups.items() if ws != [s]}


@functools.cache
def analysis_for(language: str = madqa.DEFAULT_LANGUAGE) -> Analysis:
    """The analysis of ``language`` (a code of ``madqa.LANGUAGES``), built once; CorpusError for another."""
    return Analysis(language)


def is_compound(token: str) -> bool:
    """True for a token holding punctuation or an underscore (its parts are indexed too)."""
    return _PLAIN.fullmatch(token) is None or "_" in token


ENGLISH = analysis_for("en")
# the English analysis as functions, for callers with no corpus language (milvus, the strategies, the offline reader)
compound_parts = ENGLISH.compound_parts
analyze = ENGLISH.analyze
page_tokens = ENGLISH.page_tokens
page_index_text = ENGLISH.page_index_text
query_tokens = ENGLISH.query_tokens
question_shaped = ENGLISH.question_shaped
stem_key = ENGLISH.stem_key
stem_groups = ENGLISH.stem_groups


def index_text(text: str, language: str = madqa.DEFAULT_LANGUAGE) -> str:
    """``analyze(text)`` in ``language`` joined by spaces (a token never holds whitespace): what the ingest
    computes once per page for whoosh and tantivy (both name it as their ``index_analysis``, see
    ``madqa.indexers``, which passes the corpus language); one string, a tenth of the memory of a list of
    token strings while tantivy's pages wait."""
    return analysis_for(language).index_text(text)


PROXIMITY_WEIGHT = 0.5  # the proximity option's default (madqa_plugins.text.proximity.WEIGHT)
DOCUMENTS_WEIGHT = 0.2  # the documents option's default (madqa_plugins.text.documents; docs/search.md)


def bm25_options(rankings: tuple[str, ...]) -> tuple[madqa.Option, ...]:
    """The options whoosh and tantivy share (declared once, registered by each)."""
    return (
        madqa.Option("analyzer", str, "standard", "standard: words as written; stemming: also their stemmed variants",
                     choices=("standard", "stemming"), visitor_safe=True),
        madqa.Option("ranking", str, "all-first", "how a plain query of several words is ranked", choices=rankings),
        madqa.Option("proximity", float, PROXIMITY_WEIGHT,
                     "bonus for pages writing the query's adjacent words side by side (0: off)", low=0),
        madqa.Option("documents", float, DOCUMENTS_WEIGHT,
                     "bonus for pages of a document the query names by its file name or title (0: off)", low=0),
    )
