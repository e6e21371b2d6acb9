"""Pseudo-relevance feedback for ``drift`` (not a plugin): the corpus's own words for a rewrite.

Words that co-occur with the query's words on the pages already shown, weighted by how rare they
are in the corpus: the documents' vocabulary for what the question is about, where a thesaurus
can only guess (Rocchio-style feedback over the pages seen, with a page's words counted once
per page: 1 + log tf). A word on the seen pages only (it finds nothing new) or on more than a
tenth of the corpus (it says little) is left out.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from madqa_plugins.text import text_analysis

_WORD = re.compile(r"[^\W\d_][\w\-]*[^\W_]")
MAX_SHARE = 0.1  # words on more of the corpus's pages than this are too common to steer a search


def feedback_terms(query_words: Iterable[str], seen_texts: list[str], vocabulary: Any, n: int = 3) -> list[str]:
    """Up to ``n`` words of the seen pages that hold a query word, best first (rare in the corpus,
    frequent on those pages); [] without a vocabulary or pages."""
    if vocabulary is None or not seen_texts:
        return []
    asked = {w.lower() for w in query_words}
    asked |= {text_analysis.stem_key(w) for w in asked}
    scores: dict[str, float] = defaultdict(float)
    seen_df: Counter[str] = Counter()
    pages = [[w.lower() for w in _WORD.findall(text)] for text in seen_texts]
    for words in pages:
        seen_df.update(set(words))
    for words in pages:
        if not asked & set(words):
            continue  # a page without the query's words says nothing about them
        for word, tf in Counter(words).items():
            if len(word) < 3 or word in asked or text_analysis.stem_key(word) in asked or \
                    word in text_analysis.STOP or word in text_analysis.QUESTION_WORDS:
                continue
            df = vocabulary.frequency(word)
            if df <= seen_df[word] or df > MAX_SHARE * vocabulary.pages:
                continue
            scores[word] += (1 + math.log(tf)) * math.log(vocabulary.pages / df)
    return [w for w, _ in Counter(scores).most_common(n)]
