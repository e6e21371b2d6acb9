"""``python -m madqa ...`` / ``madqa ...``: the command line.

One module per group of commands (``corpus``: index, search, render; ``agent``: ask, run; ``chat``;
``scoring``: eval; ``info``: plugins, configs; ``research``: diff, export; ``served``: collections; ``dataset``: download). Each module defines
its commands with ``@command(name)`` and their arguments in ``add_parsers(sub)``; a new group is
a new module added to ``GROUPS``.

Core errors become a message on stderr and an exit status: 0 done, 1 done with some failures
(e.g. files that could not be indexed, questions the backend failed on) or stopped by the machine
(a folder that cannot be written, a full disk: one line, no traceback), 2 nothing done (bad input or
settings).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from madqa.cli.base import COMMANDS
from madqa.cli.common import rebuild_corpus
from madqa.errors import IndexDamagedError, MadqaError
from madqa.settings import Settings

GROUPS = ("corpus", "agent", "chat", "scoring", "info", "research", "served", "dataset")
REPAIRABLE = ("search", "ask", "render")  # commands that write nothing before they search


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="madqa", description="Agentic question answering over PDF collections.")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        importlib.import_module(f"madqa.cli.{group}").add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        try:
            return COMMANDS[args.command](args, settings)
        except IndexDamagedError as exc:  # found while searching: rebuilt, then the command runs again
            if args.command not in REPAIRABLE:
                raise
            rebuild_corpus(args, settings, exc)
            return COMMANDS[args.command](args, settings)
    except MadqaError as exc:
        print(f"madqa: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("madqa: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
    except OSError as exc:  # the machine refused: a folder that cannot be written (MADQA_HOME, -o), a full disk
        print(f"madqa: {os_failure(exc)}", file=sys.stderr)
        return 1


def os_failure(exc: OSError) -> str:
    """An operating system's refusal in one line: what it said and the file it was about."""
    said = exc.strerror or str(exc) or type(exc).__name__
    return f"{said}: {exc.filename}" if exc.filename else said
