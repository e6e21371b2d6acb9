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
import re
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
from madqa_plugins.offline.offline_navigation import navigate
from madqa_plugins.offline.offline_passages import ClosestPassage, closest_passages
from madqa_plugins.offline.offline_phrases import phrase_after_terms
from madqa_plugins.offline.offline_question import SYNONYMS, analyze, split_parts
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
MAX_QUERY_TERMS = 8
SEARCH_BUDGET = 8  # searches for the whole question, shared by its parts
NOT_NAMED = 0.8  # a candidate's score outside the documents the question names by their file name
NOTE = "offline extractive baseline (no language model)"
# the baseline's one label, shown by every face (the Ask bar, each answer's badge): what it is and how
# often it is right when it answers, on its development sets and on first runs on unseen sets (docs/offline-reader.md)
LABEL = ("the offline search-and-extract baseline, no language model: it answers only when its evidence looks "
         "strong and otherwise shows the closest passages; measured, 73-100% of its answers were right on its "
         "development sets, 56% on documents it had never seen")
_LABEL = re.compile(r"^File: (.+?), Page: (\d+)(?::|$)")  # a label, or an earlier page's "label: excerpt" line


@dataclass(frozen=True)
class CorpusStats:
    """Document frequencies of word stems, the page count, and words the corpus writes in lower case."""

    df: dict[str, int]
    pages: int
    lower: frozenset[str]
    names: dict[str, frozenset[str]] = field(default_factory=dict)  # each document's name words (document_words)


_stats: weakref.WeakKeyDictionary[Any, CorpusStats] = weakref.WeakKeyDictionary()
_stats_lock = threading.Lock()


def corpus_stats(corpus: Any) -> CorpusStats:
    """The corpus's term statistics, read once per corpus object (a backend is made per question)."""
    with _stats_lock:
        cached = _stats.get(corpus)
    if cached is not None:
        return cached
    stats = CorpusStats({}, 0, frozenset())
    try:
        if getattr(corpus, "page_count", MAX_DF_PAGES + 1) <= MAX_DF_PAGES:
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
    except Exception:  # no page iterator: uniform weights
        pass
    with _stats_lock:
        _stats[corpus] = stats
    return stats


class OfflineBackend:
    """Extractive question answering over the pages the loop shows it; no model, no network."""

    supports_tools = True

    def __init__(self, corpus: Any, threshold: float = CONVINCING, budget: int = SEARCH_BUDGET,
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
        issued, shown = _issued_queries(messages), _shown_pages(messages)
        n = sum(1 for m in messages if m.get("role") == "assistant") + 1
        offered = {_tool_name(t) for t in tools}
        can_search = not force_answer and "search_documents" in offered
        plans = [candidate_queries(q, self._weights(q)) for q in parts]
        owner = _owners(plans, issued)
        stale = _fruitless(messages)
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
            done = {_norm(s) for s in issued}
            nxt = next(((qq, why) for qq, why in plans[k] if _norm(qq) not in done), None)
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
        """The stored text of a shown page ('' when it cannot be read), cached."""
        key = (file, page)
        if key not in self._texts:
            try:
                self._texts[key] = readable(self.corpus.page_text(file, page) or "")
            except Exception:  # a page that cannot be read holds no candidates
                self._texts[key] = ""
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


# --- the messages ------------------------------------------------------------------------------

def _tool_name(tool: dict[str, Any]) -> str:
    return str(tool.get("function", {}).get("name", tool.get("name", "")))


def _issued_queries(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for m in messages:
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {})
            if fn.get("name") == "search_documents":
                try:
                    out.append(str(json.loads(fn.get("arguments") or "{}").get("query", "")))
                except ValueError:
                    continue
    return out


def _fruitless(messages: list[dict[str, Any]]) -> int:
    """How many of the latest searches in a row showed no new page (no labelled pages followed them)."""
    count = 0
    for m in reversed(messages):
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            return count
        if m.get("role") == "assistant" and m.get("tool_calls"):
            count += 1
    return count if any(m.get("tool_calls") for m in messages) else 0


def _shown_pages(messages: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    """(file, page, rank within its search) of every page shown, in order, from the text labels
    (a page shown earlier comes back as a "label: excerpt" line; its text is read from the corpus)."""
    out: list[tuple[str, int, int]] = []
    seen: set[tuple[str, int]] = set()
    for m in messages:
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        rank = 0
        for part in m["content"]:
            if not (isinstance(part, dict) and part.get("type") == "text"):
                continue
            for line in str(part.get("text", "")).strip().splitlines():
                match = _LABEL.match(line.strip())
                if match and (match.group(1), int(match.group(2))) not in seen:
                    seen.add((match.group(1), int(match.group(2))))
                    out.append((match.group(1), int(match.group(2)), rank))
                    rank += 1
    return out


# --- queries and answers -----------------------------------------------------------------------

def _term(word: str) -> str:
    return re.sub(r"[^\w\-.'&]", "", word).strip(".-'&")


def _phrase(text: str) -> str:
    return f'"{text}"' if " " in text else text


def candidate_queries(q: Question, weights: dict[str, float]) -> list[tuple[str, str]]:
    """Every query worth trying, in order, each with why; duplicates are removed by the caller."""
    phrases = [p for p in q.phrases if p]
    in_phrase = {stem(w) for p in phrases for w in words(p)}
    terms = [t for t in (_term(w) for w in q.terms) if t and stem(t) not in in_phrase]
    by_weight = sorted(terms, key=lambda t: (-weights.get(stem(t), 0.0), q.terms.index(t) if t in q.terms else 0))
    quoted = [f'"{p}"' for p in phrases]
    out: list[tuple[str, str]] = []
    main = quoted + terms
    if len(main) > MAX_QUERY_TERMS:
        keep = set(by_weight[: MAX_QUERY_TERMS - len(quoted)])
        main = quoted + [t for t in terms if t in keep]
    out.append((" ".join(main), "the question's content words"))
    target = [t for t in terms if stem(t) in q.target]
    entities = [t for t in terms if t not in target and (t[:1].isupper() or any(ch.isdigit() for ch in t))]
    out.append((" ".join(quoted + target + entities), "the asked attribute and the names and numbers"))
    out.append((" ".join(quoted + by_weight[:3]), "the three rarest terms"))
    if len(terms) > 1:
        out.append((" OR ".join(quoted + terms), "any of the content words"))
    low = q.text.lower()
    found = [(k, v) for k, v in SYNONYMS.items() if re.search(rf"\b{re.escape(k)}\b", low)]
    if found:
        covered = {stem(w) for k, _ in found for w in words(k)}
        groups = ["(" + " OR ".join(_phrase(x) for x in (k, *v)) + ")" for k, v in found]
        rest = [t for t in terms if stem(t) not in covered]
        out.append((" ".join(quoted + groups + rest), "synonyms of the content words"))
        out.append((" ".join(quoted + [" OR ".join(_phrase(x) for _, v in found for x in v)] + rest[:2]),
                    "synonyms in place of the question's words"))
    out.append((" ".join(quoted + by_weight[:2]), "the two rarest terms"))
    names = re.findall(r"\b[A-Z][\w&'\-]*(?:\s+[A-Z][\w&'\-]*)+", q.text)
    for name in names:
        out.append((f'"{name}"', "a quoted name from the question"))
    if target:
        out.append((" ".join(target), "the asked attribute alone"))
    for t in by_weight:
        out.append((t, "a single rare term"))
    return [(query.strip(), why) for query, why in out if query.strip()]


def _norm(query: str) -> str:
    return " ".join(query.lower().split())


def _owners(plans: list[list[tuple[str, str]]], issued: list[str]) -> list[int]:
    """For each issued query, the first question part whose plan holds it (-1: none)."""
    return [next((k for k, plan in enumerate(plans) if any(_norm(p) == _norm(q) for p, _ in plan)), -1)
            for q in issued]


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


def _factory(model: str, options: dict[str, Any]) -> OfflineBackend:
    given = {k: v for k, v in options.items() if k not in ("corpus", "api_key", "api_base")}
    threshold = madqa.read_options(given, OPTIONS, "backend offline")["abstain_threshold"]
    corpus = options.get("corpus")
    if corpus is None:
        raise madqa.SettingsError("the offline backend needs the corpus (options['corpus'])")
    return OfflineBackend(corpus, abstain_threshold=threshold)


@madqa.hookimpl(trylast=True)
def register_backends(register: madqa.Register) -> None:
    register("offline", _factory, LABEL, options=OPTIONS)
