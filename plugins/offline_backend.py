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
from dataclasses import dataclass
from typing import Any

import madqa
from plugins.offline_answer_types import (
    Bag,
    Candidate,
    Question,
    find_candidates,
    lowercase_words,
    phrase_after_terms,
    proximity,
    stem,
    stems_of,
    term_weights,
    words,
)

CONVINCING = 0.5  # a best candidate scoring at least this ends the search
MAX_DF_PAGES = 20_000  # corpora larger than this use uniform term weights (reading them all is slow)
MAX_QUERY_TERMS = 8
SEARCH_BUDGET = 8  # searches for the whole question, shared by its parts
NOTE = "offline extractive baseline (no language model)"
_LABEL = re.compile(r"^File: (.+), Page: (\d+)$")
STOPWORDS = frozenset("""
a about above according after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have
having he her here hers him his how i if in into is it its itself just me more most my no nor not of off on
once only or other our ours out over own same she should so some such than that the their theirs them then
there these they this those through to too under until up very was we were what when where which while who
whom whose why will with would you your yours please tell give state find show according document documents
mentioned listed stated given shown specified provided noted indicated reported described exact exactly kind
type many much whats what's take took taken place make made get got go went happen happened occur occurred
list enumerate identify describe explain
""".split())
LINK_WORDS = frozenset("of in for on at by to from with during per as under between within after before".split())
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10, "both": 2}
SYNONYMS: dict[str, tuple[str, ...]] = {  # a small general list; multi-word entries are phrases
    "revenue": ("sales", "turnover"), "sales": ("revenue", "turnover"), "turnover": ("revenue", "sales"),
    "profit": ("earnings", "income"), "earnings": ("profit", "income"), "profit after tax": ("net income",),
    "net profit": ("net income",), "operating income": ("ebit",), "ebit": ("operating income",),
    "employees": ("staff", "headcount", "workforce", "personnel"), "staff": ("employees", "headcount", "personnel"),
    "headcount": ("employees", "staff"), "cost": ("price", "fee", "charge"), "price": ("cost", "fee", "rate"),
    "fee": ("charge", "cost", "price"), "total": ("sum", "amount"), "signed": ("approved", "authorized", "signature"),
    "approved": ("signed", "authorized", "approval"), "author": ("prepared", "written"), "wrote": ("written", "author"),
    "company": ("firm", "organization", "corporation"), "customer": ("client", "buyer"), "client": ("customer",),
    "supplier": ("vendor", "seller"), "vendor": ("supplier", "seller"), "start": ("begin", "commence", "effective"),
    "end": ("expire", "close", "finish"), "deadline": ("due",), "due": ("deadline", "payable"),
    "budget": ("allocation", "funding"), "salary": ("pay", "wage", "compensation"), "increase": ("growth", "rise"),
    "decrease": ("decline", "drop", "reduction"), "growth": ("increase", "rise"), "manager": ("head", "supervisor"),
    "director": ("head", "chief"), "ceo": ("chief executive officer",), "chief executive officer": ("ceo",),
    "cfo": ("chief financial officer",), "address": ("location", "street"), "phone": ("telephone", "tel"),
    "meeting": ("session",), "contract": ("agreement",), "agreement": ("contract",), "invoice": ("bill",),
    "purchase": ("order", "buy"), "percentage": ("percent", "share", "rate"), "founded": ("established", "incorporated"),
    "located": ("headquartered", "based"), "guarantee": ("warranty",), "warranty": ("guarantee",),
    "annual general meeting": ("agm",), "agm": ("annual general meeting",), "vat": ("value added tax",),
    "tax": ("vat",), "paid out": ("payable", "payment"), "chaired": ("chair", "chairman", "chairperson"),
    "gross total": ("total amount", "grand total", "total due"), "amount due": ("total due", "payable", "balance due"),
}
_MONEY_WORDS = (r"\b(?:cost|costs|price|prices|amount|amounts|paid|fee|fees|budget|salary|revenue|revenues|sales|"
                r"income|profit|profits|spend|spent|expense|expenses|worth|funding|grant|balance|subtotal|total|dividend|"
                r"investment|allowance|reimbursement|charge|charged|ebit|ebitda|earnings|capex|turnover|intake|eur|usd|"
                r"dollars|euros|pay|pays|earn|earned|raise|raised|invest|invested|receive|received|owe|owed|save|saved|"
                r"lose|lost|donate|donated|bill|billed|rent|deposit|fine|penalty|wage|wages|bonus)\b")
KIND_CUES: tuple[tuple[str, str], ...] = (  # the question word first, then the attribute's own word
    (r"\bstands? for\b|\babbreviation\b|\bacronym\b|\bshort for\b|\babbreviated\b", "expansion"),
    (r"\b(?:in|during)\s+(?:what|which)\s+year\b|\b(?:what|which)\s+year\b|\byear\s+(?:did|was|were)\b", "year"),
    (r"\b(?:what|which)\s+(?:percentage|percent|proportion|fraction)\b|\bhow many percent\b|\bby what percent", "percent"),
    (r"^(?:\w+\s+){0,3}(?:who|whom|whose)\b|\b(?:which|what) (?:person|employee|author|manager|officer|individual|"
     r"technician|engineer|member|director|consultant|contact|chair|chairman|ceo)\b|\bname of the (?:person|author|"
     r"manager|director|officer|ceo|cfo|chair|president|contact|signatory)\b", "person"),
    (r"\b(?:which|what) (?:company|companies|firm|organi[sz]ation|supplier|vendor|customer|client|bank|auditor|"
     r"contractor|manufacturer|partner|agency|university|institution|brand|team|department|landlord|tenant|insurer)\b",
     "org"),
    (r"\bwhen\b|\b(?:what|which)\s+(?:date|day)\b", "date"),
    (r"\bwhere\b|\b(?:which|what) (?:city|country|town|location|site|plant|region|address|venue|place)\b", "place"),
    (r"\bhow many\b", "number"),
    (r"\bhow much\b(?=.*" + _MONEY_WORDS[2:] + ")", "money"),
    (r"\bhow much\b", "quantity"),
    (r"\bhow (?:long|old|far|big|large|tall|high|heavy|wide|deep|often|fast)\b(?=.*" + _MONEY_WORDS[2:] + ")", "money"),
    (r"\bhow (?:long|old|far|big|large|tall|high|heavy|wide|deep|often|fast)\b", "quantity"),
    (r"\b(?:what|which|at what)\s+time\b|\bhours\b", "time"),
    (r"\bpercentage\b|\brate\b|\bratio\b|\bmargin\b|\bshare of\b|\bwhat share\b", "percent"),
    (r"\bdate\b|\bdated\b|\bdeadline\b", "date"),
    (r"\b(?:id|identifier|code|reference|ref|serial|account|invoice|order|policy|case|file|po|tracking|registration|"
     r"licen[cs]e|contract|model|part|ticket|claim|phone|telephone|fax|item|article|project)\s+(?:number|no\.?|#|id|code)\b"
     r"|\b(?:version|ip address|iban|bic|swift|vat id|sku|postcode|zip code|class|standard)\b"
     r"|\b(?:what|which)(?: \w+)? (?:id|code|model)\b", "code"),
    (_MONEY_WORDS, "money"),
    (r"\b(?:capacity|weight|duration|length|voltage|distance|size|height|width|speed|temperature|lifetime|warranty|"
     r"guarantee|period)\b", "quantity"),
    (r"\bnumber of\b|\bcount of\b", "number"),
    (r"^(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\b", "yesno"),
)
_SPLIT = re.compile(r",?\s+and\s+(?=(?:what|which|who|whom|when|where|how|at what|by what|in what|on what|from what)\b)", re.I)
_SYN = {stem(k): tuple(stems_of(v)[0] for v in vs if " " not in v) for k, vs in SYNONYMS.items() if " " not in k}


# --- reading the question ----------------------------------------------------------------------

def split_parts(question: str) -> list[str]:
    """The parts of a compound question ("What is X, and who is Y?"); a shared lead-in goes to each."""
    text = " ".join(question.split())
    pieces = [p.strip(" ,?") for p in _SPLIT.split(text) if p.strip(" ,?")]
    if len(pieces) < 2:
        return [text]
    lead = re.match(r"^((?:according to|in|on|for|from|within)\b[^,]{3,80}),\s*(?=\w)", pieces[0], re.I)
    if lead:
        pieces = [pieces[0]] + [f"{lead.group(1)}, {p}" for p in pieces[1:]]
    return [p + "?" for p in pieces[:4]]


def analyze(question: str) -> Question:
    """Read one question into a Question (rule based)."""
    text = " ".join(question.split())
    low = text.lower()
    phrases = tuple(p.strip() for p in re.findall(r"[\"“”]([^\"“”]{2,80})[\"“”]", text) if p.strip())
    kind = next((k for pattern, k in KIND_CUES if re.search(pattern, low)), "phrase")
    terms: list[str] = []
    for w in words(text):
        lw = w.lower()
        if (lw in STOPWORDS and not (w.isupper() and not text.isupper())) or lw in NUMBER_WORDS or \
                (len(lw) < 2 and not w.isdigit()) or w in ("AND", "OR", "NOT") or len(w) > 40:
            continue  # question words, search operators, stray letters, runaway tokens
        if w not in terms:
            terms.append(w)
    count = 1
    m = re.search(r"\b(?:which|what|name|list)\s+(two|three|four|five|six|\d)\b(?![-.,\d])", low)
    if m:
        count = NUMBER_WORDS.get(m.group(1)) or int(m.group(1))
    elif re.search(r"^(?:list|name all|enumerate)\b|\b(?:what|which) are (?:the|all)\b|\ball of the\b", low):
        count = 0
    stems = tuple(dict.fromkeys(stem(t) for t in terms))
    alts: dict[str, list[tuple[str, ...]]] = {s: [(a,) for a in _SYN.get(s, ())] for s in stems}
    for key, values in SYNONYMS.items():  # phrases: each word of "profit after tax" may be "net income"
        if (" " in key or any(" " in v for v in values)) and re.search(rf"\b{re.escape(key)}\b", low):
            for s in stems_of(key):
                alts.setdefault(s, []).extend(stems_of(v) for v in values)
    return Question(text, kind, tuple(terms), stems, _target(text), phrases, count,
                    {s: tuple(dict.fromkeys(v)) for s, v in alts.items() if v})


def _target(text: str) -> tuple[str, ...]:
    """Stems of the attribute asked for: the content words after the question word, names left out."""
    m = re.search(r"\b(?:what|which|who|whom|whose|when|where|how much|how many|how \w+|list|name)\b(.*)", text, re.I)
    out: list[str] = []
    for w in words(m.group(1) if m else text):
        lw = w.lower()
        if out and (lw in LINK_WORDS or lw in ("did", "does", "was", "were", "is", "are", "has", "have", "the", "a")):
            break
        acronym = w.isupper() and w.isalpha() and len(w) <= 5
        if out and w[0].isupper() and not acronym and w.replace("'", "").isalpha():
            break  # a name after the attribute: the subject, not the attribute
        if lw in STOPWORDS or lw in NUMBER_WORDS or (w[0].isupper() and not acronym) or any(c.isdigit() for c in w):
            continue
        out.append(stem(lw))
        if len(out) >= 4:
            break
    return tuple(out)


@dataclass(frozen=True)
class CorpusStats:
    """Document frequencies of word stems, the page count, and words the corpus writes in lower case."""

    df: dict[str, int]
    pages: int
    lower: frozenset[str]


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
            pages = 0
            for p in corpus.iter_pages():
                df.update({stem(w) for w in words(p.text)})
                lower |= lowercase_words(p.text)
                pages += 1
            stats = CorpusStats(dict(df), pages, frozenset(lower))
    except Exception:  # no page iterator: uniform weights
        pass
    with _stats_lock:
        _stats[corpus] = stats
    return stats


class OfflineBackend:
    """Extractive question answering over the pages the loop shows it; no model, no network."""

    supports_tools = True

    def __init__(self, corpus: Any, threshold: float = CONVINCING, budget: int = SEARCH_BUDGET) -> None:
        self.corpus = corpus
        self.threshold = threshold
        self.budget = budget
        self._stats: CorpusStats | None = None
        self._texts: dict[tuple[str, int], str] = {}

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
        can_search = not force_answer and any(_tool_name(t) == "search_documents" for t in tools)
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
        return self._answer(parts, bests, n)

    def _answer(self, parts: list[Question], bests: list[list[Candidate]], n: int) -> madqa.ModelDecision:
        chosen: list[Candidate] = []
        for q, ranked in zip(parts, bests, strict=True):
            fresh = [c for c in ranked if all(c.key() != o.key() for o in chosen)]
            chosen += fresh[:1] if q.kind == "yesno" else pick_items(q, fresh)
        if not chosen:
            args: dict[str, Any] = {"answer": [], "citations": []}
            text = f"{NOTE}: found no candidate answer on the pages shown; giving no answer"
        else:
            refs = list(dict.fromkeys((c.file, c.page) for c in chosen))
            args = {"answer": [c.value for c in chosen], "citations": [{"file": f, "page": p} for f, p in refs]}
            why = "; ".join(f"{c.value!r} ({c.kind}) on {c.file} p.{c.page}, score {c.score:.2f} ({c.why})"
                            for c in chosen)
            text = f"{NOTE}: answering {args['answer']!r}; best candidate {why}"
        call = madqa.ToolCall("submit_answer", args, f"offline_{n}")
        return madqa.ModelDecision(text=text, tool_calls=(call,), usage=madqa.Usage(0, 0), cost_usd=0.0)

    # --- reading the pages -------------------------------------------------------------------

    def page_text(self, file: str, page: int) -> str:
        """The stored text of a shown page ('' when it cannot be read), cached."""
        key = (file, page)
        if key not in self._texts:
            try:
                self._texts[key] = self.corpus.page_text(file, page) or ""
            except Exception:  # a page that cannot be read holds no candidates
                self._texts[key] = ""
            if len(self._texts) > 2000:
                self._texts.pop(next(iter(self._texts)))
        return self._texts[key]

    def rank(self, q: Question, shown: list[tuple[str, int, int]], weights: dict[str, float],
             exclude: set[str] | None = None) -> list[Candidate]:
        """Distinct candidates over every page shown, best first (ties: order shown, line, value)."""
        best: dict[str, Candidate] = {}
        counts: Counter[str] = Counter()
        for file, page, rank in shown:
            text = self.page_text(file, page)
            found = find_candidates(text, file, page, q, weights, rank, exclude, self.stats.lower or None)
            if q.kind in ("phrase", "place"):
                found += phrase_after_terms(text, file, page, q, weights)
            for c in found:
                counts[c.key()] += 1
                if c.key() not in best or c.score > best[c.key()].score:
                    best[c.key()] = c
        for key, c in best.items():
            c.score = round(min(1.0, c.score + 0.02 * min(counts[key] - 1, 3)), 4)
        order = {ref: n for n, ref in enumerate((f, p) for f, p, _ in shown)}
        return sorted(best.values(), key=lambda c: (-c.score, order.get((c.file, c.page), 0), c.line, c.value))

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


def _factory(model: str, options: dict[str, Any]) -> OfflineBackend:
    corpus = options.get("corpus")
    if corpus is None:
        raise madqa.SettingsError("the offline backend needs the corpus (options['corpus'])")
    return OfflineBackend(corpus)


@madqa.hookimpl(trylast=True)
def register_backends(register: madqa.Register) -> None:
    register("offline", _factory, "the offline extractive baseline: BM25 search and typed span extraction, no model")
