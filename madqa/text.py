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


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 search``, ``2 searches``, ``1 config``, ``3 configs``: the count and the word, the one
    place every face turns a number into words (``many`` for an irregular plural)."""
    if many is None:
        many = word + ("es" if word.endswith(("s", "x", "z", "ch", "sh")) else "s")
    return f"{n:,} {word if n == 1 else many}"


def with_article(word: str) -> str:
    """``a Gemini``, ``an OpenAI``, ``an Anthropic``: the indefinite article by the word's first sound
    (a vowel letter; names spelled out letter by letter, such as ``xAI``, are not guessed)."""
    return f"{'an' if word[:1].lower() in 'aeiou' and word[:1] else 'a'} {word}"


def stemmed_note(variants: dict[str, list[str]] | None = None, *, phrases_loosened: bool = False,
                 most: int = 4) -> str:
    """The note a retriever gives when a search matched only once words were stemmed, naming the
    query's own words and the forms they matched (``reports: report, reporting``), so the reader
    sees what was loosened. ``variants``: each query word → its other forms (words with none are left
    out); ``most`` words are named, then an ellipsis."""
    named = [(w, [f for f in forms if f != w]) for w, forms in (variants or {}).items()]
    named = [(w, forms) for w, forms in named if forms]
    shown = "; ".join(f"{w}: {', '.join(forms[:3])}{', …' if len(forms) > 3 else ''}" for w, forms in named[:most])
    if len(named) > most:
        shown += "; …"
    what = f"matched stemmed variants ({shown})" if shown else "matched stemmed variants of the query's words"
    return f"no page matched exactly; {what}" + (", phrases loosened to words" if phrases_loosened else "")
