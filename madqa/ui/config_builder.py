"""The config builder of Evaluate: configs made from the registered parts, several at once, as a table.

A visitor starts from a preset, picks the backend and model, retriever, reranker, query strategy,
top_k, max steps and image budget (menus from the registry; ranges from the web policy), and adds
the config to a table; each row is one config run side by side with the others. The table itself
is what the run receives, and it is rebuilt and re-checked on the server (``built_configs``): the
menus only save a visitor from choices the server would refuse. Each built config can be
downloaded as the TOML file ``madqa run --config FILE`` reads.
"""

from __future__ import annotations

import html
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from madqa.settings import PipelineConfig
from madqa.ui.built_configs import (
    HEADERS,
    MAX_BUILT,
    PART_KINDS,
    build_config,
    config_file_name,
    config_toml,
    offered_parts,
    specs_from_table,
    table_row,
    unavailable_parts,
    visitor_option_hint,
)
from madqa.ui.config_panel import options_text, slider_mp
from madqa.ui.context import AppContext, shown_error
from madqa.ui.messages import md_escape
from madqa.ui.model_access import config_choices, key_problem, required_keys
from madqa.ui.policy import SERVER_KEY_BACKENDS, VISITOR_LIMITS, Refused, shown_options

BUILDER_FIELDS = ("base", "backend", "model", "retriever", "reranker", "query_strategy", "top_k", "max_steps",
                  "image_budget_mp", "options")  # the builder's inputs, in order, as spec keys
FILE_NOTE = "A madqa pipeline config, built in the web app. Run it with: madqa run --config THIS_FILE ..."


def empty_table() -> pd.DataFrame:
    return pd.DataFrame(columns=HEADERS)


def built_list(configs: list[PipelineConfig]) -> str:
    """The built configs as the visitor reads them: a numbered line each (name, then its parts), words kept whole
    on a phone (the table the run receives is not drawn: Gradio's narrow columns stacked a word's letters)."""
    if not configs:
        return '<p class="built-none">No config built yet: the run takes the presets ticked below.</p>'
    items = []
    for c in configs:
        budget = "" if c.image_budget_px is None else f" · image {c.image_budget_px / 1e6:g} MP"
        options = "".join(f" · {html.escape(f'{part}.{key}={value}')}" for part, table in sorted(shown_options(c.options).items())
                          for key, value in sorted(table.items()))
        items.append(f"<li><b>{html.escape(c.name)}</b>: {html.escape(c.backend)}/{html.escape(c.model)} · "
                     f"retriever {html.escape(c.retriever)} · reranker {html.escape(c.reranker)} · "
                     f"{html.escape(c.query_strategy)} · top_k {c.top_k} · ≤{c.max_steps} steps{budget}{options}</li>")
    return f'<ol class="built-configs">{"".join(items)}</ol>'


def keyed_backends(ctx: AppContext) -> set[str]:
    """Backends that need a key this server lacks: offered only once the visitor's key box is filled."""
    return {b for b in ctx.backends if b in SERVER_KEY_BACKENDS
            and not any(c.backend == b and not required_keys(c) for c in ctx.configs.values())}


def backend_choices(ctx: AppContext, api_key: str | None) -> list[str]:
    keyed = set() if (api_key or "").strip() else keyed_backends(ctx)
    return [b for b in offered_parts(ctx.registry, "backend", ctx.policy) if b in ctx.backends and b not in keyed]


def models_of(configs: Mapping[str, PipelineConfig], backend: str) -> list[str]:
    return sorted({c.model for c in configs.values() if c.backend == backend}) or [backend]


def options_info(ctx: AppContext, retriever: str, reranker: str, strategy: str) -> str:
    hints = [h for kind, name in zip(PART_KINDS, (retriever, reranker, strategy), strict=True)
             if (h := visitor_option_hint(ctx.registry, kind, name))]
    return ("one PART.KEY=VALUE per line; for these parts: " + "; ".join(hints)) if hints \
        else "the chosen parts have no options a visitor may set"


@dataclass
class ConfigBuilder:
    """The builder's table (the run's input) and its config files (a download)."""

    table: gr.DataFrame
    files: gr.File


def write_config_files(configs: list[PipelineConfig], kept: Callable[[Path], None]) -> list[str]:
    """Each config as its own TOML file in a fresh folder (handed to ``kept``, which deletes old ones)."""
    if not configs:
        return []
    folder = Path(tempfile.mkdtemp(prefix="madqa-eval-"))
    paths = []
    for config in configs:
        path = folder / config_file_name(config)
        path.write_text(config_toml(config, FILE_NOTE), encoding="utf-8")
        paths.append(str(path))
    kept(folder)
    return paths


def rebuilt(ctx: AppContext, table: Any) -> list[PipelineConfig]:
    """The configs of a built-configs table, each rebuilt and checked by the web policy; gr.Error naming the row."""
    try:
        specs = specs_from_table(table)
    except Refused as exc:
        raise shown_error(f"Built configs: {exc}") from None
    configs = []
    for number, spec in enumerate(specs, 1):
        try:
            configs.append(build_config(spec, ctx.configs, ctx.registry, ctx.policy, ctx.default_config))
        except Refused as exc:
            raise shown_error(f"Built config {number}: {exc}") from None
    return configs


@dataclass(frozen=True)
class BuiltTable:
    """The built configs after a change to the table: the table the run receives, and the configs in it."""

    frame: pd.DataFrame
    configs: list[PipelineConfig]
    note: str = ""  # Markdown: what changed ("Added X.", "X is already in the table.")
    changed: bool = True  # False: the table stays as it was (the config was in it already)


def table_of(configs: list[PipelineConfig], specs: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame([table_row(c, s.get("base") or "", s) for c, s in zip(configs, specs, strict=True)],
                        columns=HEADERS)


def with_config(ctx: AppContext, spec: dict[str, Any], shown: Any, key: str, base_url: str) -> BuiltTable:
    """The table with the config of ``spec`` added (the builder's fields, keyed as ``BUILDER_FIELDS``); gr.Error
    when it is full, the config is refused, or its model cannot be reached with the key given."""
    start_config = ctx.configs.get(spec["base"])
    if start_config is not None and spec["image_budget_mp"] is not None \
            and float(spec["image_budget_mp"]) == slider_mp(start_config, ctx.settings):
        spec = {**spec, "image_budget_mp": None}  # not moved: the preset's own (or MADQA_IMAGE_BUDGET) stays in force
    configs = rebuilt(ctx, shown)
    if len(configs) >= MAX_BUILT:
        raise shown_error(f"The table holds at most {MAX_BUILT} configs: remove one first.")
    try:
        config = build_config(spec, ctx.configs, ctx.registry, ctx.policy, ctx.default_config)
        problem = key_problem(config, ctx.policy.backend_options(config, key, base_url))
    except Refused as exc:
        raise shown_error(f"Not added: {exc}") from None
    if problem:
        raise shown_error(f"Not added: {problem}")
    if any(c.name == config.name for c in configs):
        return BuiltTable(empty_table(), configs, f"**{md_escape(config.name)}** is already in the table.", False)
    return BuiltTable(table_of([*configs, config], [*specs_from_table(shown), spec]), [*configs, config],
                      f"Added **{md_escape(config.name)}**.")


def without_last(ctx: AppContext, shown: Any, everything: bool) -> BuiltTable:
    """The table with its last config (or every one) removed."""
    configs = [] if everything else rebuilt(ctx, shown)[:-1]
    specs = [] if everything else specs_from_table(shown)[:-1]
    return BuiltTable(table_of(configs, specs), configs)


@dataclass
class BuilderParts:
    """The builder's fields (in ``BUILDER_FIELDS`` order), buttons, note, the listing and the table."""

    fields: list[Any]
    options: gr.Textbox
    add: gr.Button
    remove: gr.Button
    clear: gr.Button
    note: gr.Markdown
    listing: gr.HTML
    table: gr.DataFrame
    files: gr.File


def build_config_builder(ctx: AppContext, prefix: str, api_key: gr.Textbox, api_base: gr.Textbox,
                         kept: Callable[[Path], None]) -> ConfigBuilder:
    """The builder's rows, inside the current layout; ``api_key``/``api_base`` are the tab's model-access fields."""
    parts = builder_layout(ctx, prefix)
    start, backend, model, retriever, reranker, strategy = parts.fields[:6]
    high_s = VISITOR_LIMITS["max_steps"][1]

    def fill(name: str, key: str) -> dict[Any, Any]:
        picked = ctx.configs.get(name)
        if picked is None:
            return gr.skip()  # every field as it is
        offered = backend_choices(ctx, key)
        values = [gr.Dropdown(choices=offered if picked.backend in offered else [*offered, picked.backend],
                              value=picked.backend),
                  gr.Dropdown(choices=models_of(ctx.configs, picked.backend), value=picked.model),
                  picked.retriever, picked.reranker, picked.query_strategy, picked.top_k,
                  min(picked.max_steps, high_s), slider_mp(picked, ctx.settings), options_text(picked)]
        return dict(zip(parts.fields[1:], values, strict=True))

    def backend_picked(name: str, current: str) -> Any:
        models = models_of(ctx.configs, name)
        return gr.Dropdown(choices=models, value=current if current in models else models[0])

    def key_given(key: str, current: str) -> Any:
        offered = backend_choices(ctx, key)
        return gr.Dropdown(choices=offered, value=current if current in offered or not offered else offered[0])

    def shown(built: BuiltTable, files: list[str] | None) -> dict[Any, Any]:
        if not built.changed:
            return {parts.note: built.note}
        return {parts.table: built.frame, parts.files: files, parts.note: built.note,
                parts.listing: built_list(built.configs)}

    def add_config(*values: Any) -> dict[Any, Any]:
        *chosen, table, key, base_url = values
        built = with_config(ctx, dict(zip(BUILDER_FIELDS, chosen, strict=True)), table, key, base_url)
        return shown(built, write_config_files(built.configs, kept) if built.changed else None)

    def drop(table: Any, everything: bool) -> dict[Any, Any]:
        built = without_last(ctx, table, everything)
        return shown(built, write_config_files(built.configs, kept) or None)

    start.input(fill, [start, api_key], parts.fields[1:], queue=False, api_visibility="private")
    backend.input(backend_picked, [backend, model], [model], queue=False, api_visibility="private")
    api_key.change(key_given, [api_key, backend], [backend], queue=False, api_visibility="private")
    for part in (retriever, reranker, strategy):
        part.input(lambda r, k, s: gr.Textbox(info=options_info(ctx, r, k, s)), [retriever, reranker, strategy],
                   [parts.options], queue=False, api_visibility="private")
    changed = [parts.table, parts.files, parts.note, parts.listing]
    parts.add.click(add_config, [*parts.fields, parts.table, api_key, api_base], changed,
                    api_name=f"{prefix}_add_config", concurrency_limit=4)
    parts.remove.click(lambda table: drop(table, False), [parts.table], changed, api_visibility="private",
                       concurrency_limit=4)
    parts.clear.click(lambda table: drop(table, True), [parts.table], changed, api_visibility="private",
                      concurrency_limit=4)
    return ConfigBuilder(parts.table, parts.files)


def builder_layout(ctx: AppContext, prefix: str) -> BuilderParts:
    """The builder's fields, opened on the default config, its buttons, and the table of what was built."""
    base = ctx.configs.get(ctx.default_config) or next(iter(ctx.configs.values()), PipelineConfig())
    (low_k, high_k), (low_s, high_s), (low_px, high_px) = (VISITOR_LIMITS[n] for n in
                                                           ("top_k", "max_steps", "image_budget_px"))
    parts = {kind: offered_parts(ctx.registry, kind, ctx.policy) for kind in PART_KINDS}
    gr.Markdown("Build configs from the installed parts and compare them side by side: pick the parts, press "
                "**Add this config**, change a part, add again. Every config in the table runs over the same "
                "questions. A backend that needs a provider key is offered once you give yours under Model access; "
                "the offline baseline needs none.", elem_id=f"{prefix}-builder-intro")
    with gr.Row():
        start = gr.Dropdown(config_choices(ctx.configs), value=base.name, label="Start from", elem_id=f"{prefix}-start")
        first = backend_choices(ctx, "")
        backend = gr.Dropdown(first if base.backend in first else [*first, base.backend], value=base.backend, label="Backend", elem_id=f"{prefix}-backend")
        model = gr.Dropdown(models_of(ctx.configs, base.backend), value=base.model, label="Model",
                            allow_custom_value=True, elem_id=f"{prefix}-model")
    with gr.Row():
        retriever = gr.Dropdown(parts["retriever"], value=base.retriever, label="Retriever",
                                elem_id=f"{prefix}-retriever")
        reranker = gr.Dropdown(parts["reranker"], value=base.reranker, label="Reranker", elem_id=f"{prefix}-reranker")
        strategy = gr.Dropdown(parts["query_strategy"], value=base.query_strategy, label="Query strategy",
                               elem_id=f"{prefix}-strategy")
    with gr.Row():
        top_k = gr.Slider(low_k, high_k, value=base.top_k, step=1, label="Pages per search (top_k)",
                          elem_id=f"{prefix}-top-k")
        max_steps = gr.Slider(low_s, high_s, value=min(base.max_steps, high_s), step=1, label="Max steps",
                              elem_id=f"{prefix}-max-steps")
        budget = gr.Slider(low_px / 1e6, high_px / 1e6, value=slider_mp(base, ctx.settings), step=0.1,
                           label="Image budget (megapixels per page)", elem_id=f"{prefix}-budget")
    options = gr.Textbox(options_text(base), label="Part options", lines=1, max_lines=4, elem_id=f"{prefix}-options",
                         info=options_info(ctx, base.retriever, base.reranker, base.query_strategy))
    missing = unavailable_parts(ctx.registry)
    if missing:
        gr.Markdown("Not installed here, so not offered: " + "; ".join(md_escape(m) for m in missing),
                    elem_id=f"{prefix}-unavailable")
    with gr.Row():
        add = gr.Button("Add this config", variant="secondary", elem_id=f"{prefix}-add")
        remove = gr.Button("Remove the last", size="sm", elem_id=f"{prefix}-remove")
        clear = gr.Button("Clear the table", size="sm", elem_id=f"{prefix}-clear")
    note = gr.Markdown(elem_id=f"{prefix}-builder-note")
    gr.Markdown(f"**Built configs** (at most {MAX_BUILT}; each runs with the presets ticked below)",
                elem_id=f"{prefix}-built-title")
    listing = gr.HTML(built_list([]), elem_id=f"{prefix}-built")
    table = gr.DataFrame(empty_table(), label="Built configs (the run's input)", interactive=False, visible=False,
                         elem_id=f"{prefix}-built-table")  # not drawn; it still takes and gives its value
    files = gr.File(label="Config files (TOML: madqa run --config FILE)", file_count="multiple", interactive=False,
                    height=150, elem_id=f"{prefix}-config-files")
    fields = [start, backend, model, retriever, reranker, strategy, top_k, max_steps, budget, options]
    return BuilderParts(fields, options, add, remove, clear, note, listing, table, files)
