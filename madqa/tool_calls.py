"""Running one tool call inside the loop: the observation, its pages drawn (bounded per model turn), and
the steps that record it (the tool's own ``SearchStep``, or a ``ToolStep``; an ``ErrorStep`` when it
showed nothing because it failed)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from madqa.context import ShownPage
from madqa.errors import MadqaError
from madqa.search_call import PluginBug
from madqa.tools import MAX_PAGES_PER_STEP, OfferedTool, QuestionState, run_tool
from madqa.types import ErrorStep, PageRef, SearchStep, Step, ToolCall, ToolStep

T = TypeVar("T")


class CoreError(Exception):
    """An exception madqa itself raised inside a tool's call to ``state.search`` or ``state.display`` (a bug
    of the core, not of the tool): raised again as it was, never blamed on the tool."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def core_call(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` (handed to tools) with anything but a madqa error or a plugin's bug marked as the core's."""
    def call(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except (MadqaError, PluginBug):
            raise
        except Exception as exc:
            raise CoreError(exc) from exc
    return call


@dataclass
class ToolRunner:
    """Runs the calls of one model turn; counts the pages they show against ``MAX_PAGES_PER_STEP``."""

    display: Callable[[PageRef, tuple[str, ...]], ShownPage]
    shown: int = 0  # pages shown by this turn's non-search calls so far

    def run(self, tool: OfferedTool, call: ToolCall, state: QuestionState,
            by: str = "model") -> tuple[list[Step], str, list[ShownPage]]:
        """(steps to yield, the text result, the pages to show); PluginBug when the tool has a bug."""
        started = time.perf_counter()
        try:
            observation = run_tool(tool, call, state)
        except PluginBug:
            raise
        except CoreError as core:  # madqa's own bug, inside the tool's search or page drawing
            raise core.error from None
        except Exception as exc:  # not a madqa error: a bug in the tool, reported with its traceback
            raise PluginBug(f"tool {call.name}", exc) from exc
        steps: list[Step] = list(observation.steps)
        if any(isinstance(s, SearchStep) for s in steps):  # a search: its step records it, its pages are drawn
            return steps, observation.text, [p for p in observation.pages if isinstance(p, ShownPage)]
        wanted = list(dict.fromkeys(observation.pages))
        room = max(0, MAX_PAGES_PER_STEP - self.shown)
        lines = [observation.text]
        if len(wanted) > room:
            lines.append(f"Only {room} of the {len(wanted)} pages are shown: at most {MAX_PAGES_PER_STEP} pages "
                         "a turn (ask for the others in the next turn).")
        pages: list[ShownPage] = []
        problems: list[str] = []
        for item in wanted[:room]:
            if isinstance(item, ShownPage):
                pages.append(item)
                continue
            try:
                pages.append(self.display(item, state.searches.terms.get(item, ())))
            except (MadqaError, OSError) as exc:  # a page that cannot be drawn (RenderError, PageLimitError): said
                problems.append(f"{item.label()} could not be shown: {exc}")
        self.shown += len(pages)
        new = tuple(p.ref for p in pages if p.ref not in state.seen)
        state.seen.update(p.ref for p in pages)
        lines += [f"Error: {p}" for p in problems]
        text = "\n".join(line for line in lines if line)
        error = "; ".join(e for e in (observation.error, *problems) if e) or None
        if error and not pages:
            steps.append(ErrorStep(state.iteration, "tool", text))
        steps.append(ToolStep(state.iteration, call.name, dict(call.arguments), text[:4000],
                              tuple(p.ref for p in pages), new, error, time.perf_counter() - started, by))
        return steps, text, pages
