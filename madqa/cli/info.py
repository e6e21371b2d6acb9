"""``plugins`` and ``configs``: what is installed and which named configs exist."""

from __future__ import annotations

import argparse
import json
from typing import Any

from madqa.cli import common
from madqa.cli.base import command
from madqa.settings import Settings


@command("plugins")
def cmd_plugins(args: argparse.Namespace, settings: Settings) -> int:
    components = common.registry(settings).list()
    if args.json:
        print(json.dumps([c.to_dict() for c in components], indent=1))
        return 0
    for c in components:
        state = f"  [unavailable: {c.unavailable}]" if c.unavailable else ""
        print(f"{c.kind:15} {c.name:14} {c.plugin:28} {c.description}{state}")
    return 0


@command("configs")
def cmd_configs(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.settings import list_configs

    configs = list_configs()
    if args.json:
        print(json.dumps({n: c.to_dict() for n, c in configs.items()}, indent=1))
        return 0
    for name, c in configs.items():
        print(f"{name:18} {c.backend}/{c.model} · {c.retriever} · rerank {c.reranker} · "
              f"{c.query_strategy} · top_k {c.top_k} · {c.max_steps} steps\n{'':18} {c.description}")
    return 0


def add_parsers(sub: Any) -> None:
    for name, help_text in (("plugins", "list registered components"), ("configs", "list named configs")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--json", action="store_true")
