"""``plugins`` and ``configs``: what is installed and which named configs exist."""

from __future__ import annotations

import argparse
import json
from typing import Any

from madqa.cli import common
from madqa.cli.base import command
from madqa.options import options_table
from madqa.settings import Settings


@command("plugins")
def cmd_plugins(args: argparse.Namespace, settings: Settings) -> int:
    components = common.registry(settings).list()
    if args.json:
        print(json.dumps([c.to_dict() for c in components], indent=1))
        return 0
    if args.markdown:  # the options table of docs/plugins-reference.md
        print(options_table((c.kind, c.name, o) for c in components for o in c.options))
        return 0
    rows = [(c.kind, c.name, c.plugin, c.description + (f"  [unavailable: {c.unavailable}]" if c.unavailable else ""))
            for c in components]
    print_columns([("KIND", "NAME", "PLUGIN", "WHAT"), *rows])
    for c in components:
        if c.options:
            print(f"\n{c.kind} {c.name} options (--set {c.kind}.NAME=VALUE; web: visitors may set those marked *):")
            print_columns([(f"  {'*' if o.visitor_safe else ' '} {o.name}", o.type_name, f"default {_default(o.default)}",
                            (f"[{o.describe_range()}] " if o.describe_range() else "") + o.description)
                           for o in c.options])
    return 0


def _default(value: Any) -> str:
    return "-" if value is None else json.dumps(value) if isinstance(value, (bool, str)) else str(value)


def print_columns(rows: list[tuple[str, ...]]) -> None:
    """Rows as left-aligned columns as wide as their longest cell (the last column is not padded)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]]).rstrip())


@command("configs")
def cmd_configs(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.settings import list_configs

    configs = list_configs()
    if args.json:
        print(json.dumps({n: c.to_dict() for n, c in configs.items()}, indent=1))
        return 0
    width = max(len(name) for name in configs) + 2
    for name, c in configs.items():
        mark = "*" if name == settings.config else " "
        print(f"{mark} {name:{width}} {c.backend}/{c.model} · {c.retriever} · rerank {c.reranker} · "
              f"{c.query_strategy} · top_k {c.top_k} · {c.max_steps} steps · tools {', '.join(c.tools)}"
              f"\n  {'':{width}} {c.description}")
    print(f"\n(* the default, MADQA_CONFIG={settings.config}; pick another with --config NAME)")
    return 0


def add_parsers(sub: Any) -> None:
    for name, help_text in (("plugins", "list registered components"), ("configs", "list named configs")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--json", action="store_true")
        if name == "plugins":
            p.add_argument("--markdown", action="store_true", help="the options table of docs/plugins-reference.md")
