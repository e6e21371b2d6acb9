"""Agent tools: what the model may call besides answering, registered like every other plugin.

A tool is registered through ``register_tools`` as ``register(name, factory, description)``; the factory
``(corpus, options)`` returns a ``madqa.AgentTool``: its arguments' JSON schema (``parameters``) and
``run(state, arguments) -> Observation``. The description registered is the one the model reads. A
config offers the tools it names (``tools = [...]``); ``submit_answer`` is always offered, and alone on
the last step. The loop checks a call's arguments against the schema, runs the tool, draws the pages
its observation names through the same context policy as a search's, and records the call in the
trajectory (a ``ToolStep``, or the ``SearchStep`` of a search).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from madqa.contract import Corpus
from madqa.contract import Observation as Observation  # moved to the contract (madqa.Observation): kept here
from madqa.contract import QuestionState as QuestionState
from madqa.errors import MadqaError, PluginError
from madqa.protocols import AgentTool, tool_checks_arguments
from madqa.types import ToolCall

if TYPE_CHECKING:
    from madqa.plugins import Registry

ANSWER = "submit_answer"
PAPER_TOOLS = ("search_documents", "show_pages")  # the MADQA paper's agent: search (plus show_pages)
MAX_PAGES_PER_STEP = 5  # pages the tools of one model turn may show (searches aside: top_k bounds them)


@dataclass(frozen=True)
class OfferedTool:
    """A tool a run offers: its registered name and description, and the tool itself."""

    name: str
    description: str
    tool: AgentTool

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self.tool.parameters)

    def schema(self) -> dict[str, Any]:
        """The OpenAI-shape tool the backends send (litellm converts it for Anthropic and Gemini)."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}


def offered_tools(registry: Registry, names: Sequence[str], corpus: Corpus,
                  options: dict[str, Any] | None = None) -> dict[str, OfferedTool]:
    """The tools ``names`` as registered, made for ``corpus``, with ``submit_answer`` last (PluginError for
    an unknown or unavailable one; SettingsError for a schema that is not a JSON object schema)."""
    out: dict[str, OfferedTool] = {}
    for name in [*(n for n in names if n != ANSWER), ANSWER]:
        component = registry.get("tool", name)
        tool = registry.create("tool", name, corpus, dict((options or {}).get(name, {})))
        if not isinstance(tool, AgentTool) or not isinstance(tool.parameters, dict) \
                or tool.parameters.get("type") != "object":
            raise PluginError(f"tool {name!r} declares no JSON schema of its arguments (parameters = "
                              '{"type": "object", "properties": {...}})')
        out[name] = OfferedTool(name, component.description, tool)
    return out


_JSON_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float),
                                            "boolean": (bool,), "array": (list,), "object": (dict,)}
_A = {"string": "a string", "integer": "a whole number", "number": "a number", "boolean": "true or false",
      "array": "a list", "object": "an object"}


def check_arguments(name: str, parameters: dict[str, Any], arguments: Any) -> str | None:
    """Why ``arguments`` do not fit the tool's schema (required keys, the top-level types), or None."""
    if not isinstance(arguments, dict):
        return f"{name} takes a JSON object of arguments"
    properties = parameters.get("properties") or {}
    for key in parameters.get("required") or ():
        if key not in arguments:
            kind = (properties.get(key) or {}).get("type")
            return f"{name} needs '{key}'" + (f", {_A.get(kind, kind)}" if kind else "")
    for key, value in arguments.items():
        kind = (properties.get(key) or {}).get("type")
        wanted = _JSON_TYPES.get(kind) if isinstance(kind, str) else None
        if wanted and (not isinstance(value, wanted) or (isinstance(value, bool) and kind != "boolean")):
            return f"{name} needs '{key}' as {_A[str(kind)]}, not {type(value).__name__} {str(value)[:60]!r}"
    return None


def run_tool(tool: OfferedTool, call: ToolCall, state: QuestionState) -> Observation:
    """The observation of one call: an error observation for arguments that do not fit or a tool's own
    failure (a madqa error); anything else a tool raises is a bug, raised for the loop to report."""
    problem = None if tool_checks_arguments(tool.tool) else check_arguments(call.name, tool.parameters, call.arguments)
    if problem is not None:
        return Observation(f"Error: {problem}.", error=problem)
    try:
        observation = tool.tool.run(state, dict(call.arguments))
    except MadqaError as exc:
        return Observation(f"Error: {exc}", error=str(exc))
    if not isinstance(observation, Observation):
        raise PluginError(f"tool {call.name!r} returned {type(observation).__name__}, not a madqa.Observation")
    return observation


def call_a_tool(names: Sequence[str]) -> str:
    """The note after a reply that called no tool, naming the tools offered."""
    if tuple(n for n in names if n != ANSWER) == PAPER_TOOLS:
        return ("Call search_documents to search, show_pages to see pages again, or submit_answer to answer "
                "(answer: a list of short values; citations: file, page and a verbatim quote).")
    others = ", ".join(n for n in names if n != ANSWER)
    return (f"Call one of the tools ({others}), or submit_answer to answer (answer: a list of short values; "
            "citations: file, page and a verbatim quote).")
