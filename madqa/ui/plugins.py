"""The Plugins tab: what is installed — every component by kind, name, plugin and availability."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import gradio as gr
import pandas as pd

from madqa import __version__
from madqa.settings import PipelineConfig, Settings
from madqa.ui.context import AppContext

COMPONENT_COLUMNS = ["kind", "name", "plugin", "available", "description", "shadows"]
CONFIG_COLUMNS = ["config", "backend", "model", "retriever", "reranker", "query strategy", "top_k", "max steps",
                  "description"]


def components_frame(registry: Any) -> pd.DataFrame:
    rows = []
    for c in registry.list():
        available = "yes" if c.unavailable is None else f"no: {c.unavailable}"
        rows.append([c.kind.replace("_", " "), c.name, c.plugin, available, c.description, ", ".join(c.shadows)])
    return pd.DataFrame(rows, columns=COMPONENT_COLUMNS)


def configs_frame(configs: dict[str, PipelineConfig]) -> pd.DataFrame:
    rows = [[c.name, c.backend, c.model, c.retriever, c.reranker, c.query_strategy, c.top_k, c.max_steps,
             c.description] for c in configs.values()]
    return pd.DataFrame(rows, columns=CONFIG_COLUMNS)


def settings_frame(settings: Settings) -> pd.DataFrame:
    rows = [[f.metadata.get("env", ""), shown(settings, f), f.metadata.get("help", "")] for f in fields(settings)]
    return pd.DataFrame(rows, columns=["variable", "value", "what it is"])


def shown(settings: Settings, f: Any) -> str:
    """A setting's value for visitors: a private one (it may name internal hosts) only says whether it is set."""
    value = getattr(settings, f.name)
    if f.metadata.get("private"):
        return "(set)" if value else "(not set)"
    return str(value)


def build_plugins_tab(ctx: AppContext) -> None:
    gr.Markdown(f"madqa {__version__}. Components come from the built-in `madqa_plugins` package, packages that declare "
                "the `madqa` entry point, and single-file plugins in `MADQA_PLUGINS_DIR`. A named config picks one "
                "of each kind.")
    gr.DataFrame(components_frame(ctx.registry), label="Components", interactive=False, wrap=True,
                 elem_id="plugins-components", column_widths=["11%", "10%", "17%", "14%", "38%", "10%"])
    gr.DataFrame(configs_frame(ctx.configs), label="Named configs", interactive=False, wrap=True,
                 column_widths=["14%", "7%", "16%", "7%", "7%", "9%", "5%", "6%", "29%"])
    with gr.Accordion("Settings (MADQA_* environment variables)", open=False):
        gr.DataFrame(settings_frame(ctx.settings), interactive=False, wrap=True,
                     column_widths=["20%", "30%", "50%"])
