"""Configs a visitor builds from the registered parts, checked again on the server, and written as TOML files.

The Evaluate and Compare builders send a config as a *spec*: plain values (the preset it starts from,
backend, model, retriever, reranker, query strategy, top_k, max_steps, image budget in megapixels, part
options as ``PART.KEY=VALUE`` lines), shown to the visitor as one row of a table. The browser is not
trusted: every spec is rebuilt here on every request (``build_config``) from the registry and the web
policy, so an API caller sending a hand-made table gets the same refusals as the builder's menus.
``config_toml`` writes a built config as the file ``madqa run --config FILE`` reads.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from madqa.errors import MadqaError
from madqa.options import read_options
from madqa.plugins import Registry
from madqa.settings import PipelineConfig
from madqa.ui.config_panel import parse_options_text
from madqa.ui.policy import VISITOR_LIMITS, Refused, WebPolicy, shown_config

PART_KINDS = ("retriever", "reranker", "query_strategy")  # the parts a visitor picks besides the backend
# the builder table's columns, in words, and the spec key each one holds
COLUMNS = (("config", "name"), ("start from", "base"), ("backend", "backend"), ("model", "model"),
           ("retriever", "retriever"), ("reranker", "reranker"), ("query strategy", "query_strategy"),
           ("top_k", "top_k"), ("max steps", "max_steps"), ("image budget (MP)", "image_budget_mp"),
           ("part options", "options"))
HEADERS = [label for label, _ in COLUMNS]
MAX_BUILT = 6  # configs one evaluation may build: each runs the whole question set
MAX_TEXT = 200  # characters of a name or model a visitor may send
MAX_OPTIONS_TEXT = 1000


def part_words(kind: str) -> str:
    return kind.replace("_", " ")


def offered_parts(registry: Registry, kind: str, policy: WebPolicy) -> list[str]:
    """The names a visitor may pick for ``kind``: available components (and, for backends, those the policy
    offers)."""
    names = registry.names(kind)
    return [n for n in names if policy.backend_allowed(n)] if kind == "backend" else names


def unavailable_parts(registry: Registry, kinds: Iterable[str] = (*PART_KINDS, "backend")) -> list[str]:
    """``"retriever milvus: needs ..."`` for each registered part that cannot run here (shown, never offered)."""
    return [f"{part_words(c.kind)} {c.name}: {c.unavailable}" for c in registry.list()
            if c.kind in kinds and c.unavailable]


def visitor_option_hint(registry: Registry, kind: str, name: str) -> str:
    """The options a visitor may set on one part, as ``kind.option (range)`` words; "" when none."""
    component = registry.components.get((kind, name))
    if component is None:
        return ""
    return ", ".join(f"{kind}.{o.name}" + (f" ({o.describe_range()})" if o.describe_range() else "")
                     for o in component.options if o.visitor_safe)


def _text(spec: Mapping[str, Any], key: str, what: str) -> str:
    value = spec.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if not isinstance(value, str):
        raise Refused(f"{what} must be text, not {type(value).__name__}")
    value = value.strip()
    if len(value) > MAX_TEXT or not value.isprintable():
        raise Refused(f"{what} must be at most {MAX_TEXT} printable characters")
    return value


def _number(spec: Mapping[str, Any], key: str, what: str, whole: bool) -> float | int | None:
    """A number from the table (text, int or float); None when the cell is empty (the starting config's)."""
    value = spec.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise Refused(f"{what} must be a number, not {value!r}")
    if isinstance(value, str):
        text = value.strip()
        try:
            value = float(text)
        except ValueError:
            raise Refused(f"{what} must be a number, not {text[:40]!r}") from None
        if not math.isfinite(value):
            raise Refused(f"{what} must be a finite number")
    if isinstance(value, float) and math.isnan(value):
        return None  # an empty cell of a pandas frame
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise Refused(f"{what} must be a finite number, not {str(value)[:40]!r}")
    if whole:
        if value != int(value):
            raise Refused(f"{what} must be a whole number, not {value}")
        return int(value)
    return float(value)


def _in_limits(name: str, value: int | None, what: str) -> None:
    least, most = VISITOR_LIMITS[name]
    if value is not None and not least <= value <= most:
        raise Refused(f"{what} {value:,} is outside {least:,}..{most:,}, what the web app allows")


def _component(registry: Registry, kind: str, name: str, policy: WebPolicy) -> None:
    """Refused unless ``name`` is a registered, available ``kind`` the web app offers."""
    component = registry.components.get((kind, name))
    offered = offered_parts(registry, kind, policy)
    if component is None or (kind == "backend" and name not in offered and not component.unavailable):
        raise Refused(f"{part_words(kind)} {name[:60]!r} is not offered here (offered: {', '.join(offered) or 'none'})")
    if component.unavailable:
        raise Refused(f"{part_words(kind)} {name!r} is unavailable here: {component.unavailable}")


def build_config(spec: Mapping[str, Any], configs: Mapping[str, PipelineConfig], registry: Registry,
                 policy: WebPolicy, default_base: str = "offline") -> PipelineConfig:
    """The pipeline config a visitor's spec describes, or Refused saying which value is not allowed and why.

    Every part must be registered, available and offered; top_k, max_steps and the image budget within
    the web app's limits; part options declared by the chosen part and visitor-safe (``policy``)."""
    if not isinstance(spec, Mapping):
        raise Refused("a built config is a table row of named values")
    base_name = _text(spec, "base", "start from") or (default_base if default_base in configs
                                                     else next(iter(configs), ""))
    base = configs.get(base_name)
    if base is None:
        raise Refused(f"start from {base_name[:60]!r} is not a config offered here (offered: {', '.join(configs)})")
    parts: dict[str, Any] = {}
    for kind in (*PART_KINDS, "backend"):
        name = _text(spec, kind, part_words(kind)) or getattr(base, kind)
        _component(registry, kind, name, policy)
        parts[kind] = name
    model = _text(spec, "model", "model")
    if parts["backend"] != base.backend and not model:
        raise Refused(f"name the model the {parts['backend']} backend should use")
    parts["model"] = model or base.model
    top_k = _number(spec, "top_k", "top_k", whole=True)
    max_steps = _number(spec, "max_steps", "max steps", whole=True)
    budget_mp = _number(spec, "image_budget_mp", "image budget", whole=False)
    budget_px = None if budget_mp is None else int(round(budget_mp * 1e6))
    _in_limits("top_k", top_k, "top_k")  # type: ignore[arg-type]
    _in_limits("max_steps", max_steps, "max steps")  # type: ignore[arg-type]
    _in_limits("image_budget_px", budget_px, "image budget (pixels)")
    options_text = spec.get("options")
    if options_text is not None and not isinstance(options_text, str):
        raise Refused("part options must be text: one PART.KEY=VALUE per line")
    if options_text and len(options_text) > MAX_OPTIONS_TEXT:
        raise Refused(f"part options must be at most {MAX_OPTIONS_TEXT} characters")
    changed = [kind for kind in PART_KINDS if parts[kind] != getattr(base, kind)]
    # another part than the starting config's: that config's options for the old part do not apply to it
    start = replace(base, options={p: t for p, t in base.options.items() if p not in changed}) if changed else base
    try:
        options = parse_options_text(options_text if isinstance(options_text, str) else "")
        for part, table in options.items():
            if part not in PART_KINDS:
                raise Refused(f"{part} options cannot be set here: only the retriever's, reranker's and query "
                              "strategy's")
            read_options({**start.part_options(part), **table}, registry.get(part, parts[part]).options,
                         f"{part_words(part)} {parts[part]}")
        config = start.with_overrides(**parts, top_k=top_k, max_steps=max_steps, image_budget_px=budget_px,
                                      options=options)
        policy.check_config(config, base)
        if config is not base:  # the preset's description says what the preset is, not what was built from it
            config = replace(config, description=f"Built in the madqa web app from the config {base.name}.")
    except Refused:
        raise
    except MadqaError as exc:
        raise Refused(str(exc)) from None
    return config


def specs_from_table(table: Any) -> list[dict[str, Any]]:
    """The table a browser (or an API caller) sent, as one spec per row; Refused when it is not one."""
    if table is None:
        return []
    headers: Sequence[Any] = HEADERS
    if hasattr(table, "columns") and hasattr(table, "values"):  # a pandas frame, as Gradio hands it
        headers, rows = [str(c) for c in table.columns], table.values.tolist()
    elif isinstance(table, Mapping):
        headers, rows = table.get("headers") or HEADERS, table.get("data") or []
    else:
        rows = table
    if not isinstance(rows, list | tuple) or not all(isinstance(r, list | tuple) for r in rows):
        raise Refused("the built configs must be a table (rows of values)")
    rows = [r for r in rows if any(v not in (None, "") for v in r)]  # Gradio's empty table has one blank row
    if len(rows) > MAX_BUILT:
        raise Refused(f"at most {MAX_BUILT} built configs at once (got {len(rows)})")
    keys = dict(COLUMNS)
    unknown = [h for h in headers if h not in keys]
    if unknown:
        raise Refused(f"unknown column {str(unknown[0])[:40]!r} in the built configs (columns: {', '.join(HEADERS)})")
    return [{keys[h]: v for h, v in zip(headers, row, strict=False)} for row in rows]


def table_row(config: PipelineConfig, base: str, spec: Mapping[str, Any]) -> list[Any]:
    """One row of the built-configs table for ``config`` (what the visitor chose, as the spec holds it)."""
    mp = "" if config.image_budget_px is None else f"{config.image_budget_px / 1e6:g}"
    return [config.name, base, config.backend, config.model, config.retriever, config.reranker, config.query_strategy,
            config.top_k, config.max_steps, mp, str(spec.get("options") or "").strip()]


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):  # JSON's escapes are TOML's, but DEL must be escaped in TOML too
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise Refused(f"cannot write {type(value).__name__} into a config file")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _toml_value(key)


def config_toml(config: PipelineConfig, note: str = "") -> str:
    """``config`` as a TOML file ``madqa run --config FILE`` (``madqa.settings.load_config``) reads back equal;
    ``note`` goes into a comment on top. The operator's options (``shown_options``: an api_base...) are left out:
    the file is a visitor's download."""
    lines = [f"# {line}" for line in note.splitlines()]
    data = shown_config(config)
    options = data.pop("options")
    for key, value in data.items():
        if value is not None:
            lines.append(f"{key} = {_toml_value(value)}")
    for part, table in sorted(options.items()):
        if table:
            lines.append(f"\n[options.{_toml_key(part)}]")
            lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in sorted(table.items())]
    return "\n".join(lines) + "\n"


def config_file_name(config: PipelineConfig) -> str:
    """A file name for ``config``'s TOML: its name with what a file name cannot hold replaced."""
    stem = re.sub(r"[^\w.=,+-]+", "_", config.name).strip("._") or "config"
    return stem[:120] + ".toml"
