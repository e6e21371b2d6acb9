"""``madqa chat``: a conversation in the terminal, one question a line, follow-ups keeping the turns."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from madqa.cli import common
from madqa.cli.base import command
from madqa.settings import Settings

NEW_CHAT = "/new"  # a line that starts the conversation over


@command("chat")
def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    """Answer each line of stdin with the agent (one agent, one backend, for the whole session); EOF ends it.

    Exit status 1 when some question failed (the model or a plugin failed), else 0."""
    from madqa.budget import Budget
    from madqa.conversation import ChatTurn, add_turn
    from madqa.trace import Trace
    from madqa.types import AnswerStep

    config, agent = common.agent_for(args, settings)
    scope = common.scope_of(args, agent.corpus)
    budget = Budget(name="command")  # one for the session, as `ask` has one for its question
    interactive = sys.stdin.isatty()
    print(f"config {config.name}: {config.backend}/{config.model}, {config.retriever}; one question a line, "
          f"{NEW_CHAT} starts over, {'Ctrl-D' if interactive else 'end of input'} ends", flush=True)
    if scope:
        print(f"searching only: {', '.join(scope)}", flush=True)
    turns: tuple[ChatTurn, ...] = ()
    failures = 0
    for line in _lines(interactive):
        text = line.strip()
        if not text:
            continue
        if text == NEW_CHAT:
            turns = ()
            print("(a new conversation)", flush=True)
            continue
        trace = Trace(text, config)
        last: Any = None
        for step in trace.follow(agent.run(text, budget=budget, conversation=turns, scope=scope)):
            print(common.describe_step(step), flush=True)
            last = step
        failures += bool(trace.row().get("error"))
        turns = add_turn(turns, text, last if isinstance(last, AnswerStep) and not last.failure else None)
    return 1 if failures else 0


def _lines(interactive: bool) -> Any:
    """The lines of stdin, with a prompt when a person types them."""
    while True:
        if interactive:
            print("> ", end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            return
        yield line


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("chat", help="a conversation in the terminal: questions from stdin, follow-ups keep the turns")
    p.add_argument("--corpus", required=True, metavar="DIR")
    common.add_scope_arg(p)
    common.add_config_args(p)
