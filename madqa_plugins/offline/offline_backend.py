"""Backend ``offline``: the offline extractive baseline, an honest agent with no language model.

It drives the same loop as every model. It searches with the question's content words, reads
the text of the pages it was shown (it cannot see the images: it reads their labels and asks
the corpus for their text), proposes typed answer spans near the question's terms and answers
with the best one and its page. When nothing convincing turns up it searches again with other
terms (the attribute asked for, OR-groups, synonyms, the rarest terms, a quoted name), never
repeating a query. Deterministic: the same messages give the same decision.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import madqa
from madqa_plugins.offline.offline_confidence import THRESHOLD as ABSTAIN
from madqa_plugins.offline.offline_confidence import (
    Confidence,
    absent_share,
    confidence,
    document_words,
    named_documents,
)
from madqa_plugins.offline.offline_messages import fruitless_searches, issued_queries, shown_pages, tool_name
from madqa_plugins.offline.offline_navigation import navigate
from madqa_plugins.offline.offline_passages import ClosestPassage, closest_passages
from madqa_plugins.offline.offline_phrases import phrase_after_terms
from madqa_plugins.offline.offline_queries import candidate_queries, normalized, query_owners
from madqa_plugins.offline.offline_question import analyze, split_parts
from madqa_plugins.offline.offline_reader import find_candidates
from madqa_plugins.offline.offline_spans import (
    Bag,
    Candidate,
    Question,
    lowercase_words,
    proximity,
    readable,
    stem,
    term_weights,
    words,
)

CONVINCING = 0.5  # a best candidate scoring at least this ends the search
MAX_DF_PAGES = 20_000  # corpora larger than this use uniform term weights (reading them all is slow)
SEARCH_BUDGET = 8  # searches for the whole question, shared by its parts
NOT_NAMED = 0.8  # a candidate's score outside the documents the question names by their file name
NOTE = "offline extractive baseline (no language model)"
# the baseline's one label, shown by every face (the Ask bar, each answer's badge): what it is and how
# often it is right when it answers, on its development sets and on first runs on unseen sets (docs/offline-reader.md)
LABEL = ("the offline search-and-extract baseline, no language model: it answers only when its evidence looks "
         "strong and otherwise shows the closest passages; measured, 73-100% of its answers were right on its "
         "development sets, 56% on documents it had never seen")


@dataclass(frozen=True)
class CorpusStats:
    """Document frequencies of word stems, the page count, and words the corpus writes in lower case."""

    df: dict[str, int]
    pages: int
    lower: frozenset[str]
    names: dict[str, frozenset[str]] = field(default_factory=dict)  # each document's name words (document_words)


_stats: weakref.WeakKeyDictionary[Any, CorpusStats] = weakref.WeakKeyDictionary()
_stats_lock = threading.Lock()


def corpus_stats(corpus: madqa.Corpus) -> CorpusStats:
    """The corpus's term statistics, read once per corpus object (a backend is made per question)."""
    with _stats_lock:
        cached = _stats.get(corpus)
    if cached is not None:
        return cached
    stats = CorpusStats({}, 0, frozenset())
    # no corpus, or one too large to read whole here: uniform weights. A damaged page store raises
    # IndexDamagedError, and the question ends with it as its error, never an answer weighed without its corpus
    if corpus is not None and getattr(corpus, "page_count", MAX_DF_PAGES + 1) <= MAX_DF_PAGES:
        df: Counter[str] = Counter()
        lower: set[str] = set()
        files: set[str] = set()
        pages = 0
        for p in corpus.iter_pages():
            text = readable(p.text)
            df.update({stem(w) for w in words(text)})
            lower |= lowercase_words(text)
            files.add(p.file)
            pages += 1
        stats = CorpusStats(dict(df), pages, frozenset(lower), document_words(files))
    with _stats_lock:
        _stats[corpus] = stats
    return stats


class OfflineBackend:
    """Extractive question answering over the pages the loop shows it; no model, no network."""

    supports_tools = True

    def __init__(self, corpus: madqa.Corpus, threshold: float = CONVINCING, budget: int = SEARCH_BUDGET,
                 abstain_threshold: float = ABSTAIN) -> None:
        self.corpus = corpus
        self.threshold = threshold
        self.budget = budget
        self.abstain_threshold = abstain_threshold
        self._stats: CorpusStats | None = None
        self._texts: dict[tuple[str, int], str] = {}
        self.last: Confidence | None = None  # the confidence of the latest answer (for calibration)

    # --- the decision ----------------------------------------------------------------------

    def decide(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               force_answer: bool) -> madqa.ModelDecision:
        """Search again for the first part of the question without a convincing answer, or answer."""
        question = next((m["content"] for m in messages
                         if m.get("role") == "user" and isinstance(m.get("content"), str)), "")
        parts = [analyze(p) for p in split_parts(question)]
        exclude = {stem(w) for w in words(question)}
        issued, shown = issued_queries(messages), shown_pages(messages)
        n = sum(1 for m in messages if m.get("role") == "assistant") + 1
        offered = {tool_name(t) for t in tools}
        can_search = not force_answer and "search_documents" in offered
        plans = [candidate_queries(q, self._weights(q)) for q in parts]
        owner = query_owners(plans, issued)
        stale = fruitless_searches(messages)
        budget = max(2, self.budget // len(parts))
        bests: list[list[Candidate]] = []
        for k, q in enumerate(parts):
            weights = self._weights(q)
            ranked = self._yes_no(q, shown, weights) if q.kind == "yesno" else self.rank(q, shown, weights, exclude)
            bests.append(ranked)
            best = ranked[0] if ranked else None
            if not can_search or (best is not None and best.score >= self.threshold):
                continue
            browse = navigate(messages, offered, q, weights, shown, best.file if best else None, n)
            if browse is not None:  # the navigation tools, when offered: outline, section, next pages
                text = f"{NOTE}: {'best candidate so far ' + repr(best.value) if best else 'nothing found yet'}; " \
                       f"navigating: {browse.name} {json.dumps(browse.arguments)}"
                return madqa.ModelDecision(text=text, tool_calls=(browse,), usage=madqa.Usage(0, 0), cost_usd=0.0)
            done = {normalized(s) for s in issued}
            nxt = next(((qq, why) for qq, why in plans[k] if normalized(qq) not in done), None)
            if nxt is None or owner.count(k) >= budget or best is not None and stale >= 3:
                continue  # out of queries or budget, or the last searches showed nothing new
            lead = (f"best candidate so far {best.value!r} ({best.kind}) on {best.file} p.{best.page}, score "
                    f"{best.score:.2f} < {self.threshold}; " if best else "nothing found yet; " if issued else "")
            part = f"part {k + 1} of {len(parts)} ({q.text!r}): " if len(parts) > 1 else ""
            text = f"{NOTE}: {part}{lead}searching for {nxt[0]!r} ({nxt[1]})"
            call = madqa.ToolCall("search_documents", {"query": nxt[0]}, f"offline_{n}")
            return madqa.ModelDecision(text=text, tool_calls=(call,), usage=madqa.Usage(0, 0), cost_usd=0.0)
        return self._answer(parts, bests, n, issued, shown)

    def _answer(self, parts: list[Question], bests: list[list[Candidate]], n: int,
                issued: list[str], shown: list[tuple[str, int, int]]) -> madqa.ModelDecision:
        chosen: list[Candidate] = []
        sure: list[Confidence] = []
        for q, ranked in zip(parts, bests, strict=True):
            fresh = [c for c in ranked if all(c.key() != o.key() for o in chosen)]
            chosen += fresh[:1] if q.kind == "yesno" else pick_items(q, fresh)
            weights = self._weights(q)
            absent = absent_share(weights, self.stats.df, self.stats.pages, q.alts)
            sure.append(confidence(fresh[0] if fresh else None, fresh[1] if len(fresh) > 1 else None, absent,
                                   untyped=q.kind == "phrase", named=named_documents(q, self.stats.names)))
        least = min(sure, key=lambda c: c.value) if sure else Confidence({}, 0.0)
        self.last = least
        searched = "; ".join(repr(s) for s in issued) or "nothing"
        if not chosen or least.value < self.abstain_threshold:
            return self._refuse(parts, chosen, least, searched, shown, n)
        refs = list(dict.fromkeys((c.file, c.page) for c in chosen))
        quotes = {ref: self.quote(next(c for c in chosen if (c.file, c.page) == ref)) for ref in refs}
        args = {"answer": [c.value for c in chosen],
                "citations": [{"file": f, "page": p, "quote": quotes[(f, p)]} for f, p in refs]}
        why = "; ".join(f"{c.value!r} ({c.kind}) on {c.file} p.{c.page}, score {c.score:.2f} ({c.why})"
                        for c in chosen)
        text = f"{NOTE}: answering {args['answer']!r} (confidence {least.value:.2f}); best candidate {why}"
        call = madqa.ToolCall("submit_answer", args, f"offline_{n}")
        return madqa.ModelDecision(text=text, tool_calls=(call,), usage=madqa.Usage(0, 0), cost_usd=0.0)

    def _refuse(self, parts: list[Question], chosen: list[Candidate], least: Confidence, searched: str,
                shown: list[tuple[str, int, int]], n: int) -> madqa.ModelDecision:
        """No answer, and the closest passages instead: the best-matching lines of the pages read."""
        best = chosen[0] if chosen else None
        passages: list[ClosestPassage] = []
        for q in parts:
            near = closest_passages(q, self._weights(q), shown, self.page_text,
                                    (best.file, best.page, best.line) if best else None)
            passages += [p for p in near if all((p.file, p.page) != (o.file, o.page) for o in passages)]
        args: dict[str, Any] = {"answer": [], "citations": []}
        if passages:
            args["closest_passages"] = [p.to_dict() for p in passages]
        where = "; closest passages on " + ", ".join(f"{p.file} p.{p.page}" for p in passages) if passages else ""
        if best is None:
            text = f"{NOTE}: found no candidate answer on the pages shown (searched {searched}); giving no answer{where}"
        else:
            text = (f"{NOTE}: not answering: confidence {least.value:.2f} is below the threshold "
                    f"{self.abstain_threshold:.2f}; searched {searched}; the best candidate was {best.value!r} "
                    f"({best.kind}) on {best.file} p.{best.page}{where}")
        call = madqa.ToolCall("submit_answer", args, f"offline_{n}")
        return madqa.ModelDecision(text=text, tool_calls=(call,), usage=madqa.Usage(0, 0), cost_usd=0.0)

    # --- reading the pages -------------------------------------------------------------------

    def page_text(self, file: str, page: int) -> str:
        """The stored text of a shown page ('' when it has none), cached. A page store that cannot be read
        raises (IndexDamagedError): the question ends with it as its error, never as a refusal."""
        key = (file, page)
        if key not in self._texts:
            self._texts[key] = readable(self.corpus.page_text(file, page) or "")
            if len(self._texts) > 2000:
                self._texts.pop(next(iter(self._texts)))
        return self._texts[key]

    def quote(self, c: Candidate) -> str:
        """The line the candidate was read from (with the next one when the span runs on), as a quote."""
        lines = self.page_text(c.file, c.page).splitlines()
        if not 0 <= c.line < len(lines):
            return c.value
        text = " ".join(lines[c.line].split())
        if c.line + 1 < len(lines) and madqa.match_key(c.value) not in madqa.match_key(text):
            text += " " + " ".join(lines[c.line + 1].split())
        return text if len(text) <= 300 else _window(text, c.value)

    def rank(self, q: Question, shown: list[tuple[str, int, int]], weights: dict[str, float],
             exclude: set[str] | None = None) -> list[Candidate]:
        """Distinct candidates over every page shown, best first (ties: order shown, line, value)."""
        best: dict[str, Candidate] = {}
        pages: dict[str, set[tuple[str, int]]] = {}
        for file, page, rank in shown:
            text = self.page_text(file, page)
            found = find_candidates(text, file, page, q, weights, rank, exclude, self.stats.lower or None)
            if q.kind in ("phrase", "place"):
                found += phrase_after_terms(text, file, page, q, weights)
            for c in found:
                pages.setdefault(c.key(), set()).add((file, page))  # pages that agree, not a table's repeats
                if c.key() not in best or c.score > best[c.key()].score:
                    best[c.key()] = c
        named = named_documents(q, self.stats.names)
        for key, c in best.items():
            c.score = round(min(1.0, c.score + 0.02 * min(len(pages[key]) - 1, 3)), 4)
            if named and c.file not in named:  # "the author of the booktabs package" is in booktabs.pdf
                c.score = round(c.score * NOT_NAMED, 4)
            c.support = len(pages[key])
        order = {ref: n for n, ref in enumerate((f, p) for f, p, _ in shown)}
        return sorted(best.values(), key=lambda c: (-c.score, order.get((c.file, c.page), 0), c.line, c.pos, c.value))

    def _yes_no(self, q: Question, shown: list[tuple[str, int, int]], weights: dict[str, float]) -> list[Candidate]:
        """Yes when some line holds (nearly) all the question's terms together, else No."""
        if not shown:
            return []
        top = Candidate("No", "yesno", shown[0][0], shown[0][1], 0.0, 0, "no line holds the question's terms")
        for file, page, _ in shown:
            lines = self.page_text(file, page).splitlines()
            bags = [Bag(ln) for ln in lines]
            page_bag = Bag(stems=tuple(x for b in bags for x in b.seq.split()))
            for i, line in enumerate(lines):
                if line.strip():
                    score, _, _ = proximity(bags, i, Bag(), weights, page_bag, q.alts)
                    if score > top.score:
                        top = Candidate("Yes" if score >= 0.75 else "No", "yesno", file, page, round(score, 4), i,
                                        "share of the question's terms on or near one line")
        return [top]

    @property
    def stats(self) -> CorpusStats:
        if self._stats is None:
            self._stats = corpus_stats(self.corpus)
        return self._stats

    def _weights(self, q: Question) -> dict[str, float]:
        return term_weights(q, self.stats.df, self.stats.pages)


def pick_items(q: Question, ranked: list[Candidate]) -> list[Candidate]:
    """One item, or several for a list question: close runners-up of the best one's kind."""
    if not ranked:
        return []
    best = ranked[0]
    if q.count == 1:
        return [best]
    want = q.count or 5
    floor = best.score * (0.6 if q.count else 0.8)
    chosen = [best]
    for c in ranked[1:]:
        if len(chosen) >= want:
            break
        if c.kind == best.kind and c.score >= floor and not any(c.key() in o.key() or o.key() in c.key() for o in chosen):
            chosen.append(c)
    return chosen


def _window(text: str, value: str, width: int = 240) -> str:
    """About ``width`` characters of ``text`` around ``value``, cut at spaces."""
    at = max(0, text.lower().find(value.lower()))
    start = max(0, at - width // 2)
    start = text.rfind(" ", 0, start) + 1 if start else 0
    end = text.find(" ", min(len(text), start + width))
    return text[start:end if end != -1 else len(text)].strip()


OPTIONS = (
    madqa.Option("temperature", float, None, "ignored (no model): accepted so a config's temperature does no harm"),
    madqa.Option("abstain_threshold", float, ABSTAIN, "below this calibrated confidence it refuses (0: always answers)",
                 low=0, high=1),
)


def _factory(host: madqa.Host, options: dict[str, Any]) -> OfflineBackend:
    """The offline baseline for ``host.corpus`` (it reads page text; a key or an api_base, if given, is unused)."""
    threshold = madqa.read_options(options, OPTIONS, "backend offline")["abstain_threshold"]
    if host.corpus is None:
        raise madqa.SettingsError("the offline backend needs the corpus (Registry.create(..., corpus=))")
    return OfflineBackend(host.corpus, abstain_threshold=threshold)


@madqa.hookimpl(trylast=True)
def register_backends(register: madqa.Register) -> None:
    register("offline", _factory, LABEL, options=OPTIONS, takes_host=True)
