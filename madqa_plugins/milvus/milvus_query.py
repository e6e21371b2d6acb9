"""The madqa query language mapped onto what Milvus can do (not a plugin: ``madqa_plugins/milvus/milvus.py`` uses it).

Words are analyzed by ``madqa_plugins.text.text_analysis``, as ``whoosh`` and ``tantivy`` analyze them: a page's
``text`` field holds its analyzed tokens, so one-character and punctuated tokens (``6``, ``-v``,
``image/png``, ``C++``, ``2.0``) are searchable. Milvus's server-side tokenizer (``standard``: runs
of word characters) would cut a punctuated token apart, so such a token travels as one plain word
(``term``: ``image/png`` -> ``qz696d6167652f706e67``), on the page and in the query alike.

What maps, and how (parsed by ``madqa_plugins.text.query_language``):
- a plain query of several words (a question typed as-is; its question words dropped): pages
  holding every word first (a ``text_match`` filter), then the best of the others by BM25;
- a single word: ranked by Milvus's BM25;
- ``AND``, ``OR``, ``NOT`` and parentheses: a boolean filter expression of ``text_match(text, 'w')``
  terms, applied server-side to the BM25 (and dense) search; every word of an ``AND`` group (also an
  implicit one, once the query has any operator) is then required;
- ``"quoted phrases"``: ``phrase_match(text, '...')`` where the server has it (Milvus 2.6+); Milvus
  Lite has no phrase match, so there the phrase's words are required through ``text_match`` and the
  word order is checked here on the returned candidates (a note says so).

What cannot be done, said in the result note: wildcards (``*``, ``?``) are dropped (Milvus has no
term-dictionary expansion); no stemmed or fuzzy fallback; a ``NOT`` alone (nothing to rank)
searches nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from madqa_plugins.text import query_language, text_analysis

# the page text arrives analyzed (stop words gone, compounds made plain words): the server only splits it
ANALYZER = {"tokenizer": "standard"}
OPERATOR_HINT = re.compile(r'\b(AND|OR|NOT)\b|["()]')
_ALNUM = re.compile(r"[^\W_]+")
_MARK = "qz"  # starts a punctuated token written as hex: no English word is "qz" + hex digits


def term(token: str) -> str:
    """An analyzed token as one word of the server's tokenizer (letters and digits only)."""
    return token if _ALNUM.fullmatch(token) else _MARK + token.encode("utf-8", "surrogatepass").hex()


def page_terms(text: str) -> str:
    """What a page's ``text`` field holds: its analyzed tokens, in order, as server words."""
    return " ".join(term(t) for t in text_analysis.analyze(text))


def tokens(text: str) -> list[str]:
    """The server words of ``text`` (pages and phrases): ``text_analysis.analyze``, then ``term``."""
    return [term(t) for t in text_analysis.analyze(text)]


@dataclass
class MilvusQuery:
    """A query as Milvus sees it: the BM25 text, a filter expression (or None), phrases to check, and
    for a plain query of several words the filter requiring every word (ranked first)."""

    text: str
    filter: str | None
    phrases: list[list[str]] = field(default_factory=list)  # checked here when the server has no phrase_match
    notes: list[str] = field(default_factory=list)
    every: str | None = None


def _quote(words: list[str]) -> str:
    return "'" + " ".join(words) + "'"  # server words are letters and digits: nothing to escape


def _match(token: str) -> str:
    """Pages holding a query token: the token, or (a compound the pages may write apart) all its parts."""
    whole = f"text_match(text, {_quote([term(token)])})"
    parts = text_analysis.compound_parts(token) if text_analysis.is_compound(token) else []
    if len(parts) < 2:
        return whole
    return "(" + whole + " or (" + " and ".join(f"text_match(text, {_quote([term(p)])})" for p in parts) + "))"


def _ranked(token: str) -> list[str]:
    """The server words a query token ranks by: a compound and its parts (a page may hold either)."""
    parts = text_analysis.compound_parts(token) if text_analysis.is_compound(token) else []
    return [term(token), *(term(p) for p in parts if p != token)]


class _Filter:
    def __init__(self, phrase_match: bool) -> None:
        self.phrase_match = phrase_match
        self.phrases: list[list[str]] = []
        self.positive: list[str] = []  # server words to rank by
        self.wildcards = False

    def build(self, node: Any, negated: bool = False) -> str | None:
        if node is None:
            return None
        kind, value = node
        if kind == "word":
            if query_language.WILDCARD.search(value):
                self.wildcards = True
                value = query_language.WILDCARD.sub(" ", value)
            toks = [t for w in value.split() for t in text_analysis.query_tokens(w)]
            if not negated:
                self.positive.extend(w for t in toks for w in _ranked(t))
            return " and ".join(_match(t) for t in toks) or None
        if kind == "phrase":
            if query_language.WILDCARD.search(value):
                self.wildcards = True
            words = tokens(query_language.WILDCARD.sub(" ", value))
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
    plain = query_language.plain_terms(text)
    if plain is not None:  # a question or keyword query: every word first, then BM25 over any of them
        ranked = [w for t in plain for w in _ranked(t)]
        every = " and ".join(_match(t) for t in plain) if len(plain) > 1 else None
        return MilvusQuery(" ".join(ranked), None, [], [], every)
    builder = _Filter(phrase_match)
    expression = builder.build(("and", query_language.parse(text)))
    notes = []
    if builder.wildcards:
        notes.append("milvus has no wildcards: * and ? were dropped, the rest searched as words")
    if not OPERATOR_HINT.search(text):
        # one word (or words with wildcards): BM25 ranking only (any word may match)
        return MilvusQuery(" ".join(builder.positive), None, [], notes)
    if builder.phrases:
        notes.append("this Milvus has no phrase_match: a phrase's words are required and their order "
                      "is checked on the candidates returned")
    if re.search(r'\bNOT\s+"[^"]+\s[^"]*"', text) and not phrase_match:
        notes.append("NOT \"phrase\" cannot be excluded without phrase_match: ignored")
    return MilvusQuery(" ".join(builder.positive), expression, builder.phrases, notes)


def has_phrase(text: str, words: list[str]) -> bool:
    """Whether ``words`` (server words) occur in this order, adjacent (stop words skipped), in ``text``."""
    seq = tokens(text)
    n = len(words)
    return any(seq[i:i + n] == words for i in range(len(seq) - n + 1))
