"""Who answers, said before the first question: the bar at the top of Ask, and the badge under each answer.

The offline baseline is named by its own registered description (``register("offline", ..., description)``
in its plugin), so the bar, the badge under an answer and Compare's panes use one label, defined by the
backend itself.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from madqa.errors import MadqaError
from madqa.settings import PipelineConfig
from madqa.ui.messages import REAL_MODEL_HINT, md_escape
from madqa.ui.model_access import key_problem

OFFLINE = "offline"  # the backend that runs no language model
FALLBACK_LABEL = "the offline extractive baseline (no language model)"  # a registry without its description


def answerer(registry: Any, backend: str, model: str) -> str:
    """Who answers, in words: the offline baseline by its own description, any other backend as model and backend."""
    if backend == OFFLINE:
        try:
            return registry.get("backend", OFFLINE).description or FALLBACK_LABEL
        except MadqaError:
            return FALLBACK_LABEL
    return f"{model} (backend {backend})"


def model_bar(registry: Any, config: PipelineConfig, options: Mapping[str, Any] | None = None,
              env: Mapping[str, str] | None = None) -> str:
    """The bar's Markdown: which model answers with these settings, or that it is the no-key baseline, or why
    the model cannot be reached from here."""
    who = md_escape(answerer(registry, config.backend, config.model))
    if config.backend == OFFLINE:
        # the label's first clause in the bar, its measured caveat folded under it: on a phone the whole
        # label pushed the question box below the first screen (the badge under each answer says it all)
        name, _, caveat = answerer(registry, config.backend, config.model).partition(":")
        folded = (f"<details><summary>How far to trust it</summary>{html.escape(caveat.strip())}. "
                  f"<em>{REAL_MODEL_HINT}</em></details>") if caveat.strip() else f"_{REAL_MODEL_HINT}_"
        return f"**Answers:** {md_escape(name)} — no API key needed.\n{folded}"
    problem = key_problem(config, options, env)
    if problem:
        return f"**Answers:** {who} — ⚠ cannot be reached from here: {md_escape(problem)}"
    return f"**Answers:** {who} · config {md_escape(config.name)}"
