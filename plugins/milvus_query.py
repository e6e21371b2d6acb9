"""The madqa query language mapped onto what Milvus can do (not a plugin: ``plugins/milvus.py`` uses it).

What maps, and how:
- bare words: ranked by Milvus's BM25 (the server-side ``standard`` analyzer: ``\\w+``, lower-cased,
  Whoosh's English stop words removed), so a page needs *some* of the words, and ranks higher with
  more; there is no filter, unlike ``whoosh``/``tantivy`` where bare words must all match;
- ``AND``, ``OR``, ``NOT`` and parentheses: a boolean filter expression of ``text_match(text, 'w')``
  terms, applied server-side to the BM25 (and dense) search; every word of an ``AND`` group (also an
  implicit one, once the query has any operator) is then required;
- ``"quoted phrases"``: ``phrase_match(text, '...')`` where the server has it (Milvus 2.6+); Milvus
  Lite has no phrase match, so there the phrase's words are required through ``text_match`` and the
  word order is checked here on the returned candidates (a note says so).

What cannot be done, said in the result note: wildcards (``*``, ``?``) are dropped (Milvus has no
term-dictionary expansion); no stemmed or fuzzy fallback (the analyzer does not stem, for
portability between Milvus Lite and Milvus); a ``NOT`` alone (nothing to rank) searches nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from whoosh import analysis

STOP_WORDS = sorted(analysis.STOP_WORDS)  # the same words whoosh and tantivy drop
ANALYZER = {"tokenizer": "standard", "filter": ["lowercase", {"type": "stop", "stop_words": STOP_WORDS}]}
_LEX = re.compile(r'"[^"]*"?|\(|\)|[^\s()"]+')
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(STOP_WORDS)
OPERATOR_HINT = re.compile(r'\b(AND|OR|NOT)\b|["()]')


def tokens(text: str) -> list[str]:
    """What the server-side analyzer makes of ``text`` (``\\w+``, lower case, no stop words)."""
    return [t for t in _WORD.findall(text.lower()) if t not in _STOP]


@dataclass
class MilvusQuery:
    """A query as Milvus sees it: the BM25 text, a filter expression (or None), phrases to check."""

    text: str
    filter: str | None
    phrases: list[list[str]] = field(default_factory=list)  # checked here when the server has no phrase_match
    notes: list[str] = field(default_factory=list)


def parse(text: str) -> Any:
    """A tree of ("or", [...]), ("and", [...]), ("not", x), ("phrase", s), ("word", s)."""
    toks = _LEX.findall(text)
    pos = 0

    def peek() -> str | None:
        return toks[pos] if pos < len(toks) else None

    def parse_or() -> Any:
        nonlocal pos
        items = [parse_and()]
        while peek() == "OR":
            pos += 1
            items.append(parse_and())
        return ("or", items)

    def parse_and() -> Any:
        nonlocal pos
        items = []
        while peek() not in (None, "OR", ")"):
            if peek() == "AND":
                pos += 1
                continue
            items.append(parse_unary())
        return ("and", items)

    def parse_unary() -> Any:
        nonlocal pos
        tok = toks[pos]
        pos += 1
        if tok == "NOT":
            return ("not", parse_unary()) if peek() not in (None, "OR", "AND", ")") else ("and", [])
        if tok == "(":
            inner = parse_or()
            if peek() == ")":
                pos += 1
            return inner
        if tok.startswith('"'):
            return ("phrase", tok.strip('"'))
        return ("word", tok)

    items = [parse_or()]
    while pos < len(toks):  # a stray ")": the rest is more of the same AND
        pos += 1
        items.append(parse_or())
    return ("and", items)


def _quote(words: list[str]) -> str:
    return "'" + " ".join(words) + "'"  # analyzed tokens are \w+: nothing to escape


class _Filter:
    def __init__(self, phrase_match: bool) -> None:
        self.phrase_match = phrase_match
        self.phrases: list[list[str]] = []
        self.positive: list[str] = []  # words to rank by
        self.wildcards = False

    def build(self, node: Any, negated: bool = False) -> str | None:
        kind, value = node
        if kind == "word":
            if "*" in value or "?" in value:
                self.wildcards = True
                value = value.replace("*", " ").replace("?", " ")
            words = tokens(value)
            if not negated:
                self.positive.extend(words)
            return " and ".join(f"text_match(text, {_quote([w])})" for w in words) or None
        if kind == "phrase":
            if "*" in value or "?" in value:
                self.wildcards = True
            words = tokens(value.replace("*", " ").replace("?", " "))
            if not negated:
                self.positive.extend(words)
            if len(words) > 1 and self.phrase_match:
                return f"phrase_match(text, {_quote(words)})"
            if len(words) > 1 and not negated:
                self.phrases.append(words)
            elif len(words) > 1:  # NOT "a b" without phrase_match: cannot exclude the phrase alone
                return None
            return " and ".join(f"text_match(text, {_quote([w])})" for w in words) or None
        if kind == "not":
            inner = self.build(value, negated=not negated)
            return f"not ({inner})" if inner else None
        parts = [p for p in (self.build(n, negated) for n in value) if p]
        if not parts:
            return None
        joiner = " or " if kind == "or" else " and "
        return "(" + joiner.join(parts) + ")" if len(parts) > 1 else parts[0]


def to_milvus(text: str, phrase_match: bool) -> MilvusQuery:
    """Map a madqa query for Milvus; ``phrase_match`` says whether the server has ``phrase_match``."""
    tree = parse(text)
    builder = _Filter(phrase_match)
    expression = builder.build(tree)
    notes = []
    if builder.wildcards:
        notes.append("milvus has no wildcards: * and ? were dropped, the rest searched as words")
    if not OPERATOR_HINT.search(text):
        # plain words: BM25 ranking only (any word may match), as a search engine does
        return MilvusQuery(" ".join(builder.positive), None, [], notes)
    if builder.phrases:
        notes.append("this Milvus has no phrase_match: a phrase's words are required and their order "
                      "is checked on the candidates returned")
    if re.search(r'\bNOT\s+"[^"]+\s[^"]*"', text) and not phrase_match:
        notes.append("NOT \"phrase\" cannot be excluded without phrase_match: ignored")
    return MilvusQuery(" ".join(builder.positive), expression, builder.phrases, notes)


def has_phrase(text: str, words: list[str]) -> bool:
    """Whether ``words`` occur in this order, adjacent (stop words skipped), in ``text``."""
    seq = tokens(text)
    n = len(words)
    return any(seq[i:i + n] == words for i in range(len(seq) - n + 1))
