"""The search tool's query language, parsed once for every BM25 retriever: ``madqa.query_language``.

``AND``/``OR``/``NOT`` (upper case), parentheses, ``"quoted phrases"``, ``*`` and ``?`` wildcards;
bare words are ANDed. The built-in ``whoosh``, ``tantivy`` and ``milvus`` retrievers turn the same tree into
their engine's queries, so they read a query alike; a third-party retriever parses with the same
functions. A *plain* query (words only, no operator, quote, parenthesis or wildcard) is what people type
as a question: the retrievers rank it by its ``plain_terms`` (every word present first, then the best
partial matches) instead of a strict AND. Part of the contract: imports nothing from the loop.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, Protocol


class QueryAnalysis(Protocol):
    """How a language reads a query's words (the built-in retrievers' ``text_analysis.Analysis``)."""

    @property
    def question_words(self) -> Collection[str]:
        """Words that make a query a question (what, which, ...), dropped when other words remain."""

    def query_tokens(self, word: str) -> list[str]:
        """The index terms of one query word (none for a stop word)."""

    def question_shaped(self, words: list[str]) -> list[str]:
        """``words`` without the question words, unless nothing else would remain."""


_LEX = re.compile(r'"[^"]*"?|\(|\)|[^\s()"]+')
OPERATORS = ("AND", "OR", "NOT")
WILDCARD = re.compile(r"[*?]")
MAX_DEPTH = 32  # parentheses nested deeper than this are read as plain grouping of the same level

Node = Any  # ("or"|"and", [Node]), ("not", Node), ("phrase", str), ("word", str), or None


def parse(text: str) -> list[Node]:
    """Lex a query into trees: ("or", [...]), ("and", [...]), ("not", x), ("phrase", s), ("word", s)."""
    tokens = _LEX.findall(text)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def parse_or(depth: int) -> Node:
        nonlocal pos
        items = [parse_and(depth)]
        while peek() == "OR":
            pos += 1
            items.append(parse_and(depth))
        return ("or", items)

    def parse_and(depth: int) -> Node:
        nonlocal pos
        items = []
        while peek() not in (None, "OR", ")"):
            if peek() == "AND" or (peek() == "(" and depth >= MAX_DEPTH):
                pos += 1  # too deep a group: its words join this one (no recursion past MAX_DEPTH)
                continue
            items.append(parse_unary(depth))
        return ("and", items)

    def parse_unary(depth: int) -> Node:
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        if tok == "NOT":
            nots = 1
            while peek() == "NOT":  # a run of NOTs, read without recursion: NOT NOT x stays NOT (NOT x)
                pos += 1
                nots += 1
            if peek() in (None, "OR", "AND", ")"):
                return None
            operand = parse_unary(depth)
            return ("not", operand) if nots % 2 else ("not", ("not", operand))
        if tok == "(":
            inner = parse_or(depth + 1)
            if peek() == ")":
                pos += 1
            return inner
        if tok.startswith('"'):
            return ("phrase", tok.strip('"'))
        return ("word", tok)

    tree = [parse_or(0)]
    while pos < len(tokens):  # a stray ")" ends a group early: parse the rest as more of the same
        pos += 1
        tree.append(parse_or(0))
    return tree


def plain_terms(text: str, analysis: QueryAnalysis) -> list[str] | None:
    """The terms of a plain query of two or more words (in a question, its question words are
    dropped when others remain), or None when the query uses the query language (operators, quotes, parentheses, wildcards).
    A ``?`` ending a query of several words is read as a question mark, not a wildcard. ``analysis``: the
    corpus language's (its stop words and question words)."""
    text = text.strip()
    asked = text.endswith("?")
    text = text.rstrip("?")
    words = text.split()
    if len(words) < 2 or any(w in OPERATORS for w in words) or re.search(r'["()*?]', text):
        return None
    terms = list(dict.fromkeys(t for w in words for t in analysis.query_tokens(w)))
    if asked or words[0].lower() in analysis.question_words:  # a question: its question words go
        terms = analysis.question_shaped(terms)
    return terms or None


def query_words(text: str) -> list[str]:
    """The words of a query without its operators and syntax (for snippets)."""
    return [w for w in re.findall(r"[^\s()\"]+", text) if w not in OPERATORS]
