"""Embedding query drift, beside the report's lexical one.

The paper measures drift between consecutive queries as a cosine distance of query embeddings,
but does not publish which embedding model it used; so this is *an* embedding drift, not the
paper's number. The vectors come from an embedder asked of the plugin registry (``register_embedders``;
by default ``minilm``, the optional all-MiniLM-L6-v2 the ``dense`` retriever uses): mean of
1 - cosine(e(q_i), e(q_i+1)) over consecutive queries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from madqa.errors import PluginError
from madqa.evaluation import metrics as m
from madqa.evaluation.report import embedding_similarity, per_question

EMBEDDER = "minilm"
Embed = Callable[[str], Sequence[float]]


def embedding_representation(vectors: str) -> str:
    """How the embedding drift is computed, given the embedder's ``representation`` of its vectors."""
    return (f"embedding: {vectors}, cosine distance between consecutive executed queries; the paper's exact "
            "embedding is not published")


def registry_embed(registry: Any, name: str = EMBEDDER) -> tuple[Embed, str]:
    """(a memoised text -> vector function, what the drift's figures mean) over the registry's embedder
    ``name``; PluginError when it is unknown or not installed."""
    try:
        embedder = registry.create("embedder", name, {})
    except PluginError as exc:
        raise PluginError(f"embedding drift needs an embedding model: {exc} "
                          "(scripts/install --optional installs the default, all-MiniLM-L6-v2)") from exc
    cache: dict[str, list[float]] = {}
    lock = threading.Lock()

    def embed(text: str) -> Sequence[float]:
        with lock:
            if text not in cache:
                cache[text] = [float(x) for x in embedder.embed(text)]
            return cache[text]
    return embed, embedding_representation(embedder.representation)


def embedding_drift(rows: Sequence[Any], gold: Sequence[Mapping[str, Any]], embed: Embed,
                    representation: str) -> dict[str, Any]:
    """``{"overall", "by_hop_type"}``, each ``{"query_drift_embedding", "n"}``, plus ``"representation"``
    (``embed`` and ``representation`` as ``registry_embed`` gives them)."""
    records = per_question(rows, gold, embedding_similarity(embed))

    def figure(selected: list[dict[str, Any]]) -> dict[str, Any]:
        drifts = [r["drift"] for r in selected if r["drift"] is not None]
        return {"query_drift_embedding": sum(drifts) / len(drifts) if drifts else None, "n": len(drifts)}

    return {"overall": figure(records),
            "by_hop_type": {h: figure([r for r in records if r["hop_type"] == h]) for h in m.HOP_TYPES},
            "representation": representation}


def add_embedding_drift(result: dict[str, Any], drift: Mapping[str, Any]) -> dict[str, Any]:
    """Put the embedding figures into an ``evaluate`` result beside its lexical ``query_drift``."""
    result["overall"]["query_drift_embedding"] = drift["overall"]["query_drift_embedding"]
    result["overall"]["query_drift_embedding_representation"] = drift["representation"]
    for hop, figures in drift["by_hop_type"].items():
        if hop in result.get("by_hop_type", {}):
            result["by_hop_type"][hop]["query_drift_embedding"] = figures["query_drift_embedding"]
    return result
