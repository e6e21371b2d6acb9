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
from collections import Counter
from typing import Any

import madqa
from plugins.offline_answer_types import (
    Candidate,
    Question,
    analyze,
    find_candidates,
    phrase_after_terms,
    proximity,
    stem,
    term_weights,
    words,
)

CONVINCING = 0.5  # a best candidate scoring at least this ends the search
MAX_DF_PAGES = 50_000  # corpora larger than this use uniform term weights
MAX_QUERY_TERMS = 8
NOTE = "offline extractive baseline (no language model)"
_LABEL = re.compile(r"^File: (.+), Page: (\d+)$")
SYNONYMS: dict[str, tuple[str, ...]] = {  # small, general list; keys and values are lowercase words
    "revenue": ("sales", "turnover", "income"), "sales": ("revenue", "turnover"),
    "profit": ("earnings", "income"), "earnings": ("profit", "income"),
    "employees": ("staff", "headcount", "workforce", "personnel"), "staff": ("employees", "personnel"),
    "cost": ("price", "fee", "charge", "amount"), "price": ("cost", "fee", "rate"),
    "fee": ("charge", "cost", "price"), "total": ("sum", "amount", "due"), "amount": ("total", "sum", "value"),
    "signed": ("approved", "authorized", "signature"), "approved": ("signed", "authorized"),
    "author": ("prepared", "written", "by"), "wrote": ("written", "author", "prepared"),
    "company": ("firm", "organization", "corporation", "inc"), "customer": ("client", "buyer"),
    "client": ("customer", "buyer"), "supplier": ("vendor", "seller"), "vendor": ("supplier", "seller"),
    "start": ("begin", "commence", "effective"), "began": ("start", "commenced"), "end": ("expire", "close", "finish"),
    "deadline": ("due", "by"), "due": ("deadline", "payable"), "budget": ("allocation", "funding", "funds"),
    "salary": ("pay", "wage", "compensation"), "increase": ("growth", "rise", "grew"),
    "decrease": ("decline", "drop", "reduction", "fell"), "growth": ("increase", "rise"),
    "manager": ("head", "supervisor", "lead"), "director": ("head", "chief"), "ceo": ("chief", "executive"),
    "address": ("location", "street"), "phone": ("telephone", "tel"), "email": ("mail", "contact"),
    "meeting": ("session", "conference"), "contract": ("agreement",), "agreement": ("contract",),
    "invoice": ("bill", "receipt"), "purchase": ("order", "buy", "bought"), "number": ("no", "id", "#"),
    "percentage": ("percent", "share", "rate"), "rate": ("percentage", "ratio"), "founded": ("established", "incorporated"),
    "located": ("headquartered", "based", "address"), "headquarters": ("head office", "based"),
    "date": ("dated", "on"), "year": ("fiscal", "fy"), "people": ("persons", "individuals", "staff"),
}


class OfflineBackend:
    """Extractive question answering over the pages the loop shows it; no model, no network."""

    supports_tools = True

    def __init__(self, corpus: Any, threshold: float = CONVINCING) -> None:
        self.corpus = corpus
        self.threshold = threshold
        self._df: dict[str, int] | None = None
        self._pages = 0
        self._texts: dict[tuple[str, int], str] = {}

    # --- the decision ----------------------------------------------------------------------

    def decide(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               force_answer: bool) -> madqa.ModelDecision:
        """Search again, or answer with the best span of the pages shown so far."""
        question = next((m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)), "")
        q = analyze(question)
        issued = _issued_queries(messages)
        shown = _shown_pages(messages)
        weights = self._weights(q)
        ranked = self.rank(q, shown, weights)
        best = ranked[0] if ranked else None
        n = sum(1 for m in messages if m.get("role") == "assistant") + 1
        can_search = not force_answer and any(_tool_name(t) == "search_documents" for t in tools)
        if q.kind == "yesno" and shown:
            best = self._yes_no(q, shown, weights)
        convincing = best is not None and best.score >= self.threshold
        if can_search and not convincing:
            nxt = next_query(q, weights, issued)
            if nxt is not None:
                query, why = nxt
                lead = (f"best candidate so far {best.value!r} ({best.kind}) on {best.file} p.{best.page}, score "
                        f"{best.score:.2f} < {self.threshold}; " if best else "nothing convincing yet; " if issued else "")
                text = f"{NOTE}: {lead}searching for {query!r} ({why})"
                call = madqa.ToolCall("search_documents", {"query": query}, f"offline_{n}")
                return madqa.ModelDecision(text=text, tool_calls=(call,), usage=madqa.Usage(0, 0), cost_usd=0.0)
        return self._answer(q, ranked, best, n)

    def _answer(self, q: Question, ranked: list[Candidate], best: Candidate | None, n: int) -> madqa.ModelDecision:
        if best is None:
            args: dict[str, Any] = {"answer": [], "citations": []}
            text = f"{NOTE}: found no candidate answer on the pages shown; giving no answer"
        else:
            chosen = [best] if q.kind == "yesno" else pick_items(q, ranked)
            args = {"answer": [c.value for c in chosen],
                    "citations": [dict(t) for t in dict.fromkeys((("file", c.file), ("page", c.page)) for c in chosen)]}
            args["citations"] = [{"file": c["file"], "page": c["page"]} for c in args["citations"]]
            text = (f"{NOTE}: answering {args['answer']!r}; best candidate {best.value!r} ({best.kind}) on "
                    f"{best.file} p.{best.page}, score {best.score:.2f} ({best.why})")
        call = madqa.ToolCall("submit_answer", args, f"offline_{n}")
        return madqa.ModelDecision(text=text, tool_calls=(call,), usage=madqa.Usage(0, 0), cost_usd=0.0)

    # --- reading the pages -------------------------------------------------------------------

    def page_text(self, file: str, page: int) -> str:
        key = (file, page)
        if key not in self._texts:
            try:
                self._texts[key] = self.corpus.page_text(file, page) or ""
            except Exception:  # a page that cannot be read holds no candidates
                self._texts[key] = ""
            if len(self._texts) > 2000:
                self._texts.pop(next(iter(self._texts)))
        return self._texts[key]

    def rank(self, q: Question, shown: list[tuple[str, int, int]], weights: dict[str, float]) -> list[Candidate]:
        """Distinct candidates over every page shown, best first (ties broken by order shown)."""
        best: dict[str, Candidate] = {}
        counts: Counter[str] = Counter()
        for file, page, rank in shown:
            text = self.page_text(file, page)
            found = find_candidates(text, file, page, q, weights, rank)
            if q.kind == "phrase":
                found += phrase_after_terms(text, file, page, q, weights)
            for c in found:
                counts[c.key()] += 1
                if c.key() not in best or c.score > best[c.key()].score:
                    best[c.key()] = c
        for key, c in best.items():
            c.score = round(min(1.0, c.score + 0.02 * min(counts[key] - 1, 3)), 4)
        order = {ref: n for n, ref in enumerate((f, p) for f, p, _ in shown)}
        return sorted(best.values(), key=lambda c: (-c.score, order.get((c.file, c.page), 0), c.line, c.value))

    def _yes_no(self, q: Question, shown: list[tuple[str, int, int]], weights: dict[str, float]) -> Candidate:
        """Yes when some line holds (nearly) all the question's terms together, else No."""
        top = Candidate("No", "yesno", shown[0][0], shown[0][1], 0.0, 0, "no line holds the question's terms")
        for file, page, _ in shown:
            lines = self.page_text(file, page).splitlines()
            for i, line in enumerate(lines):
                if line.strip():
                    score, _ = proximity(lines, i, "", weights)
                    if score > top.score:
                        top = Candidate("Yes" if score >= 0.75 else "No", "yesno", file, page, round(score, 4), i,
                                        "share of the question's terms near one line")
        return top

    def _weights(self, q: Question) -> dict[str, float]:
        if self._df is None:
            self._df, self._pages = {}, 0
            try:
                if getattr(self.corpus, "page_count", MAX_DF_PAGES + 1) <= MAX_DF_PAGES:
                    df: Counter[str] = Counter()
                    for p in self.corpus.iter_pages():
                        df.update({stem(w) for w in words(p.text)})
                        self._pages += 1
                    self._df = dict(df)
            except Exception:  # no page iterator: uniform weights
                self._df, self._pages = {}, 0
        return term_weights(q.stems, self._df, self._pages)


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


def _shown_pages(messages: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    """(file, page, rank within its search) of every page shown, in order, from the text labels."""
    out: list[tuple[str, int, int]] = []
    seen: set[tuple[str, int]] = set()
    for m in messages:
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        rank = 0
        for part in m["content"]:
            if isinstance(part, dict) and part.get("type") == "text":
                match = _LABEL.match(str(part.get("text", "")).strip())
                if match and (match.group(1), int(match.group(2))) not in seen:
                    seen.add((match.group(1), int(match.group(2))))
                    out.append((match.group(1), int(match.group(2)), rank))
                    rank += 1
    return out


# --- queries and answers -----------------------------------------------------------------------

def _term(word: str) -> str:
    return re.sub(r"[^\w\-.'&]", "", word).strip(".-'&")


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
    groups, changed = [], False
    for t in terms:
        syns = SYNONYMS.get(t.lower()) or SYNONYMS.get(stem(t))
        if syns:
            groups.append("(" + " OR ".join([t, *[s for s in syns if " " not in s]]) + ")")
            changed = True
        else:
            groups.append(t)
    if changed:
        out.append((" ".join(quoted + groups), "synonyms of the content words"))
        out.append((" OR ".join(quoted + [s for t in terms for s in (SYNONYMS.get(t.lower()) or ()) if " " not in s]),
                    "synonyms only"))
    out.append((" ".join(quoted + by_weight[:2]), "the two rarest terms"))
    names = re.findall(r"\b[A-Z][\w&'\-]*(?:\s+[A-Z][\w&'\-]*)+", q.text)
    for name in names:
        out.append((f'"{name}"', "a quoted name from the question"))
    if target:
        out.append((" ".join(target), "the asked attribute alone"))
    for t in by_weight:
        out.append((t, "a single rare term"))
    return [(query.strip(), why) for query, why in out if query.strip()]


def next_query(q: Question, weights: dict[str, float], issued: list[str]) -> tuple[str, str] | None:
    """The first query not yet issued (compared case- and space-insensitively), or None."""
    done = {" ".join(s.lower().split()) for s in issued}
    for query, why in candidate_queries(q, weights):
        if " ".join(query.lower().split()) not in done:
            return query, why
    return None


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


def _factory(model: str, options: dict[str, Any]) -> OfflineBackend:
    corpus = options.get("corpus")
    if corpus is None:
        raise madqa.SettingsError("the offline backend needs the corpus (options['corpus'])")
    return OfflineBackend(corpus)


@madqa.hookimpl(trylast=True)
def register_backends(register: madqa.Register) -> None:
    register("offline", _factory, "the offline extractive baseline: BM25 search and typed span extraction, no model")
