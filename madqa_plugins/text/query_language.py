"""The search tool's query language: ``madqa.query_language`` (its public home), re-exported for the
built-in retrievers, with ``plain_terms`` reading English unless given the corpus language's analysis."""

from __future__ import annotations

import madqa
from madqa_plugins.text import text_analysis

MAX_DEPTH = madqa.query_language.MAX_DEPTH
Node = madqa.query_language.Node
OPERATORS = madqa.query_language.OPERATORS
WILDCARD = madqa.query_language.WILDCARD
parse = madqa.query_language.parse
query_words = madqa.query_language.query_words


def plain_terms(text: str, analysis: text_analysis.Analysis = text_analysis.ENGLISH) -> list[str] | None:
    """``madqa.query_language.plain_terms``, in English unless ``analysis`` says otherwise."""
    return madqa.query_language.plain_terms(text, analysis)
