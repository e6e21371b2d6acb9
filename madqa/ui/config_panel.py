"""The settings panel shared by Ask and Compare: a named config or its parts, plus model access.

Choices come from the plugin registry and the shipped presets. The API key and ``api_base``
fields go to the Agent as backend options for one request and nowhere else: not stored, not
logged, not in a trace or a download. What a visitor may set is decided by ``madqa.ui.policy``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import gradio as gr

from madqa.errors import MadqaError
from madqa.settings import PipelineConfig, Settings, image_budget_px, parse_options
from madqa.ui.context import shown_error
from madqa.ui.lazy import defer_until_opened
from madqa.ui.model_access import config_choices, picker_info
from madqa.ui.policy import VISITOR_LIMITS, WebPolicy, shown_options

FIELD_NAMES = ("config", "backend", "model", "retriever", "reranker", "query_strategy", "top_k", "max_steps",
               "image_budget_mp", "options", "api_key", "api_base")  # the API names of a panel's values, in order
MAX_STEPS_UI = VISITOR_LIMITS["max_steps"][1]  # the sliders offer what the web policy allows, no more


@dataclass
class ConfigPanel:
    """The components of one settings panel, in the order handlers receive their values."""

    name: gr.Dropdown
    backend: gr.Dropdown
    model: gr.Dropdown
    retriever: gr.Dropdown
    reranker: gr.Dropdown
    query_strategy: gr.Dropdown
    top_k: gr.Slider
    max_steps: gr.Slider
    budget_mp: gr.Slider
    options: gr.Textbox
    api_key: gr.Textbox
    api_base: gr.Textbox

    @property
    def inputs(self) -> list[gr.components.Component]:
        return [self.name, self.backend, self.model, self.retriever, self.reranker, self.query_strategy,
                self.top_k, self.max_steps, self.budget_mp, self.options, self.api_key, self.api_base]

    @property
    def parts(self) -> list[gr.components.Component]:
        return self.inputs[1:10]


def part_values(config: PipelineConfig, settings: Settings | None = None) -> list[Any]:
    """The panel's part fields for a config (image budget in megapixels, options as text)."""
    return [config.backend, config.model, config.retriever, config.reranker, config.query_strategy,
            config.top_k, config.max_steps, slider_mp(config, settings), options_text(config)]


def slider_mp(config: PipelineConfig, settings: Settings | None = None) -> float:
    """The image budget the slider shows for ``config``, in megapixels: the config's own, else the
    settings' (MADQA_IMAGE_BUDGET), as ``madqa.settings.image_budget_px`` decides."""
    return round(image_budget_px(settings or Settings(), config) / 1e6, 2)


def options_text(config: PipelineConfig) -> str:
    """The config's part options a visitor may see (``shown_options``) as ``PART.KEY=VALUE`` lines (values as TOML);
    the operator's stay in the named config and still apply."""
    return "\n".join(f"{part}.{key}={json.dumps(value)}" for part, table in sorted(shown_options(config.options).items())
                     for key, value in sorted(table.items()))


def parse_options_text(text: str | None) -> dict[str, dict[str, Any]]:
    """``PART.KEY=VALUE`` lines (blank lines and ``#`` comments skipped) as option tables."""
    lines = (line.strip() for line in (text or "").splitlines())
    return parse_options(line for line in lines if line and not line.startswith("#"))


def _choices(names: list[str], current: str) -> list[str]:
    return names if current in names else [*names, current]


def build_config_panel(configs: dict[str, PipelineConfig], registry: Any, default: str, label: str,
                       open: bool = False, initial: dict[str, Any] | None = None,
                       backends: list[str] | None = None, elem_id: str | None = None,
                       settings: Settings | None = None) -> ConfigPanel:
    """Render a settings accordion; picking a named config fills in its parts.

    ``initial`` overrides some parts of the ``default`` config in the first view (e.g. top_k);
    ``backends`` are the backends offered (default: every installed one).
    """
    base = configs.get(default) or next(iter(configs.values()), PipelineConfig())
    config = base.with_overrides(**(initial or {}))
    models = sorted({c.model for c in configs.values()} | {config.model})
    with gr.Accordion(label, open=open, elem_id=elem_id) as accordion:
        name = gr.Dropdown(config_choices(configs), value=base.name, label="Named config",
                           info=picker_info(configs, "a preset; change any part below to adjust it"))
        with gr.Row():
            offered = registry.names("backend") if backends is None else backends
            backend = gr.Dropdown(_choices(offered, config.backend), value=config.backend, label="Backend")
            model = gr.Dropdown(models, value=config.model, label="Model", allow_custom_value=True,
                                info="e.g. openai/gpt-4.1-mini, anthropic/claude-sonnet-4-5")
        with gr.Row():
            retriever = gr.Dropdown(_choices(registry.names("retriever"), config.retriever),
                                    value=config.retriever, label="Retriever")
            reranker = gr.Dropdown(_choices(registry.names("reranker"), config.reranker), value=config.reranker,
                                   label="Reranker")
            strategy = gr.Dropdown(_choices(registry.names("query_strategy"), config.query_strategy),
                                   value=config.query_strategy, label="Query strategy")
        with gr.Row():
            top_k = gr.Slider(*VISITOR_LIMITS["top_k"], value=config.top_k, step=1, label="Pages per search (top_k)")
            max_steps = gr.Slider(1, MAX_STEPS_UI, value=min(config.max_steps, MAX_STEPS_UI), step=1,
                                  label="Max steps")
            budget = gr.Slider(*(px / 1e6 for px in VISITOR_LIMITS["image_budget_px"]), value=slider_mp(config, settings),
                               step=0.1,
                               label="Image budget (megapixels per page)")
        options = gr.Textbox(options_text(config), label="Part options", lines=1, max_lines=6,
                             placeholder="one PART.KEY=VALUE per line, e.g. query_strategy.threshold=0.6",
                             info="add to or change the options of the retriever, reranker or query strategy "
                                  "(see docs/plugins.md)")
        with gr.Row():
            api_key = gr.Textbox("", label="API key (this browser session only)", type="password",
                                 placeholder="uses the server's environment when empty")
            api_base = gr.Textbox("", label="api_base (OpenAI-compatible server)",
                                  placeholder="e.g. http://localhost:8000/v1")
    panel = ConfigPanel(name, backend, model, retriever, reranker, strategy, top_k, max_steps, budget,
                        options, api_key, api_base)
    if not open:
        defer_until_opened(accordion)  # drawn (and its sliders' code fetched) when first opened

    def fill(chosen: str) -> list[Any]:
        picked = configs.get(chosen)
        return part_values(picked, settings) if picked else [gr.update()] * len(panel.parts)

    name.change(fill, [name], panel.parts, queue=False, api_visibility="private")
    return panel


def resolve_config(configs: dict[str, PipelineConfig], values: list[Any] | tuple[Any, ...], policy: WebPolicy,
                   settings: Settings | None = None) -> tuple[PipelineConfig, dict[str, Any]]:
    """The pipeline config and backend options from a panel's values; gr.Error when they are invalid
    or ``policy`` does not let a visitor use them. The slider's image budget becomes the config's only
    when the visitor moved it from what the panel showed (the config's own, else MADQA_IMAGE_BUDGET)."""
    name, backend, model, retriever, reranker, strategy, top_k, max_steps, budget_mp, options_box, api_key, api_base \
        = values
    base = configs.get(name)
    if base is None:
        raise shown_error(f"Unknown config {name!r}; pick one of {', '.join(configs)}.")
    try:
        parts = {"backend": backend, "model": (model or "").strip() or None, "retriever": retriever,
                 "reranker": reranker, "query_strategy": strategy,
                 "top_k": int(top_k) if top_k is not None else None,
                 "max_steps": int(max_steps) if max_steps is not None else None,
                 "image_budget_px": int(round(float(budget_mp) * 1e6))
                 if budget_mp and float(budget_mp) != slider_mp(base, settings) else None}
        config = base.with_overrides(**parts, options=parse_options_text(options_box))
        policy.check_config(config, base)
        options = policy.backend_options(config, api_key, api_base)
    except (MadqaError, TypeError, ValueError) as exc:
        raise shown_error(f"Settings: {exc}") from None
    return config, options


def describe(config: PipelineConfig) -> str:
    return (f"{config.name}: {config.backend}/{config.model} · {config.retriever} · rerank {config.reranker} · "
            f"{config.query_strategy} · top_k {config.top_k} · ≤{config.max_steps} steps")
