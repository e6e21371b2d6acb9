"""The offline backend's queries for a question, in the order it tries them (each with why), and which question
part an issued query belongs to: the content words, the asked attribute with the names and numbers, the rarest
terms, OR-groups, synonyms, quoted names, single rare terms; never the same query twice."""

from __future__ import annotations

import re

from madqa_plugins.offline.offline_question import SYNONYMS
from madqa_plugins.offline.offline_spans import Question, stem, words

MAX_QUERY_TERMS = 8


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


def normalized(query: str) -> str:
    return " ".join(query.lower().split())


def query_owners(plans: list[list[tuple[str, str]]], issued: list[str]) -> list[int]:
    """For each issued query, the first question part whose plan holds it (-1: none)."""
    return [next((k for k, plan in enumerate(plans) if any(normalized(p) == normalized(q) for p, _ in plan)), -1)
            for q in issued]
