"""Backend ``scripted``: plays a given list of decisions, for tests and for replaying a trajectory.

Each decision is a dict: ``{"search": "query"}``, ``{"answer": [...], "citations": [...]}``,
``{"text": "..."}``, ``{"tool_calls": [{"name", "arguments"}]}`` (any tool the config offers: ``open_page``,
``document_outline``, a plugin's), ``{"tool": "name", "arguments": {...}}`` (one such call), ``{"raise": "message"}``,
``{"limit": "images_per_request", "value": 1}`` (the server refused the request for a limit:
``madqa.ServerLimitError``) or ``{"broken": ToolCall}`` (a call whose arguments could not be read,
as a real backend reports it). Any decision may add ``"finish_reason"`` (e.g. ``"length"``).
Give them as ``options["script"]`` (a list, from the caller's own data). A script is never read
from a path named in the model string: a model string can come from a stranger (the web app never
offers this backend, see ``madqa.ui.policy``). When the script runs out, it answers with an empty
answer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import madqa


class ScriptedBackend:
    """Returns the scripted decisions in order and records what it was asked."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = list(script)
        self.calls: list[dict[str, Any]] = []  # (messages, tools, force_answer) of every call

    def decide(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               force_answer: bool) -> madqa.ModelDecision:
        self.calls.append({"messages": list(messages), "tools": tools, "force_answer": force_answer})
        item = self.script.pop(0) if self.script else {"answer": [], "citations": []}
        usage = madqa.Usage(10, 5)
        if "raise" in item:
            raise madqa.BackendError(str(item["raise"]))
        if "limit" in item:
            raise madqa.ServerLimitError(f"the server refused the request ({item['limit']})", item["limit"],
                                         item.get("value"))
        decision = self._decision(item, usage)
        return replace(decision, finish_reason=item["finish_reason"]) if "finish_reason" in item else decision

    def _decision(self, item: dict[str, Any], usage: madqa.Usage) -> madqa.ModelDecision:
        if "broken" in item:
            call = item["broken"]
            return madqa.ModelDecision(tool_calls=(madqa.ToolCall(call.name, {}, f"b{len(self.calls)}", call.error),),
                                       usage=usage, cost_usd=0.0, raw={"notes": [f"{call.name}: {call.error}"]})
        if "search" in item:
            call = madqa.ToolCall("search_documents", {"query": item["search"]}, f"s{len(self.calls)}")
            return madqa.ModelDecision(text=item.get("text"), tool_calls=(call,), usage=usage, cost_usd=0.0)
        if "tool" in item:
            call = madqa.ToolCall(str(item["tool"]), dict(item.get("arguments") or {}), f"t{len(self.calls)}_0")
            return madqa.ModelDecision(text=item.get("text"), tool_calls=(call,), usage=usage, cost_usd=0.0)
        if "tool_calls" in item:
            calls = tuple(madqa.ToolCall(c["name"], c.get("arguments", {}), f"t{len(self.calls)}_{n}")
                          for n, c in enumerate(item["tool_calls"]))
            return madqa.ModelDecision(text=item.get("text"), tool_calls=calls, usage=usage, cost_usd=0.0)
        if "answer" in item or "citations" in item:
            return madqa.ModelDecision(answer={k: item.get(k) for k in ("answer", "citations")},
                                       usage=usage, cost_usd=0.0)
        return madqa.ModelDecision(text=item.get("text", ""), usage=usage, cost_usd=0.0)


def _factory(host: madqa.Host, options: dict[str, Any]) -> ScriptedBackend:
    script = options.get("script")
    if not isinstance(script, list) or not all(isinstance(item, dict) for item in script):
        raise madqa.SettingsError("the scripted backend needs a script: a list of decisions as options['script']")
    return ScriptedBackend(script)


@madqa.hookimpl(trylast=True)
def register_backends(register: madqa.Register) -> None:
    register("scripted", _factory, "plays a scripted list of decisions (tests, replays)", takes_host=True)
