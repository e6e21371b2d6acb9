"""The command table: ``@command(name)`` registers a ``fn(args, settings) -> exit status``."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from madqa.settings import Settings

COMMANDS: dict[str, Callable[[argparse.Namespace, Settings], int]] = {}


def command(name: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    def wrap(fn: Callable[..., int]) -> Callable[..., int]:
        COMMANDS[name] = fn
        return fn
    return wrap
