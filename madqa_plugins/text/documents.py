"""Documents as evidence: a question that names a document (``the zoo quick reference``, ``the RasMol
reference card``, ``the PMX manual``) prefers that document's pages.

Not a plugin: the BM25 retrievers call ``prefer_named`` on their top candidates. A document is
described by the words of its path (``rasmol/refcard.pdf`` -> ``rasmol refcard``) and the first words
of its first page (where a title is written). A query word *names* a document when it is one of
those words, a part of one (``card`` in ``refcard``, ``quick`` in ``quickref``), or one is its
abbreviation (``ref`` for ``reference``). Only words that tell the candidates' documents apart count:
a word naming every candidate document (``rasmol`` for both RasMol PDFs) moves nothing.
Each distinguishing word a page's document names raises the page's score by ``weight`` times the
best candidate's score, so a named document's good pages come first and its unrelated pages do not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from madqa_plugins.text.text_analysis import STOP

T = TypeVar("T")
DEPTH = 30  # candidates a retriever hands to prefer_named (the top k are kept)
TITLE_WORDS = 12  # words of the first page read as the document's title
_WORD = re.compile(r"[^\W_]+")


def describe(file: str, first_page: str) -> frozenset[str]:
    """The words a document is named by: its path's and its title's (lower-cased, no stop words)."""
    stem = file.rsplit(".", 1)[0] if file.lower().endswith(".pdf") else file
    words = _WORD.findall(stem.lower()) + _WORD.findall(first_page.lower())[:TITLE_WORDS]
    return frozenset(w for w in words if w not in STOP and not w.isdigit())


def names(word: str, described: frozenset[str]) -> bool:
    """True when a (lower-cased) query word names a document described by ``described``."""
    if word in described:
        return True
    return any((len(word) >= 4 and word in token) or (len(token) >= 3 and word.startswith(token))
               for token in described)


def prefer_named(ranked: Sequence[T], query_words: Iterable[str], file_of: Callable[[T], str],
                 score_of: Callable[[T], float], describe_file: Callable[[str], frozenset[str]],
                 weight: float) -> list[tuple[float, T]]:
    """``ranked`` (best first) as (new score, item) best first; unchanged when ``weight`` is 0 or no
    query word tells the candidates' documents apart."""
    out = [(score_of(item), item) for item in ranked]
    if weight <= 0:
        return out
    files = list(dict.fromkeys(file_of(item) for item in ranked))
    words = {w.lower() for w in query_words if len(w) >= 3 and w.lower() not in STOP and not w.isdigit()}
    if weight <= 0 or len(files) < 2 or not words or not out:
        return out
    named = {f: {w for w in words if names(w, describe_file(f))} for f in files}
    common = set.intersection(*named.values())
    bonus = {f: len(named[f] - common) for f in files}
    if not any(bonus.values()):
        return out
    top = max(score for score, _ in out)
    raised = [(score + weight * top * bonus[file_of(item)], item) for score, item in out]
    return sorted(raised, key=lambda pair: -pair[0])


def raise_named(ranked: Sequence[tuple[float, int]], query_words: Iterable[str], file_of: Callable[[int], str],
                describe_file: Callable[[str], frozenset[str]], weight: float) -> list[tuple[float, int]]:
    """``prefer_named`` over (score, document number) rows, as the retrievers hold them."""
    return [(score, row[1]) for score, row in prefer_named(ranked, query_words, lambda row: file_of(row[1]),
                                                            lambda row: row[0], describe_file, weight)]
