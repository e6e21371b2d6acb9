"""Text helpers the core and plugins share (exported on ``madqa``'s public face).

``match_key`` and ``quote_on_page`` decide whether a quote is on a page (citation checks, highlights,
the offline reader); ``lexical_similarity`` is the reports' query similarity, which query strategies
also use to judge how far a rewrite strays, so a strategy and the report agree on what "close" means.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter

_NOT_ALNUM = re.compile(r"[\W_]+")
_TOKEN = re.compile(r"\w+")
LEXICAL_REPRESENTATION = (
    "lexical bag-of-words: lowercase, tokens = re.findall(r'\\w+'), raw term-frequency "
    "vectors, cosine similarity (two token-less queries = 1, one token-less = 0)")


def match_key(text: str) -> str:
    """``text`` reduced for quote matching: ligatures unfolded (NFKC), case folded, and only letters and
    digits kept, so whitespace, line breaks, hyphenation at a line end and punctuation spacing (the
    ways a text layer or OCR differs from a quote typed by a model) do not matter."""
    return _NOT_ALNUM.sub("", unicodedata.normalize("NFKC", text).casefold())


def quote_on_page(quote: str, page_text: str) -> bool:
    """True when ``quote`` is, up to ``match_key``'s normalisation, a span of ``page_text``."""
    key = match_key(quote)
    return bool(key) and key in match_key(page_text)


def _tf(text: str) -> Counter[str]:
    return Counter(_TOKEN.findall(text.lower()))


def lexical_similarity(a: str, b: str) -> float:
    """The cosine similarity of two texts' term-frequency vectors (see ``LEXICAL_REPRESENTATION``)."""
    va, vb = _tf(a), _tf(b)
    if not va or not vb:
        return 1.0 if not va and not vb else 0.0
    dot = sum(count * vb[tok] for tok, count in va.items())
    # integer product under one sqrt: identical bags give exactly 1.0
    norm = math.sqrt(sum(c * c for c in va.values()) * sum(c * c for c in vb.values()))
    return min(1.0, dot / norm)
