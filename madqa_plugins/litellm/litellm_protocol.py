"""Which protocol a model gets: native tool calls, or the JSON-in-text protocol, and whether it gets images.

Decided per (api_base, model) from what is known, strongest first: the options ``native_tools`` /
``vision``; what this process already learned (a server refused ``tools`` or images: ``learn``);
an Ollama server's own ``POST /api/show`` ``capabilities``; litellm's model map; else an assumption
(native tools and images). What was learned is kept in a thread-safe memo for the life of the
process, so every backend of the same (api_base, model) in any thread uses it; another process (a
Dask worker) learns it again from its first refusal.
"""

from __future__ import annotations

import http.client
import json
import threading
import urllib.request
from dataclasses import dataclass
from typing import Any

OLLAMA_PROVIDERS = ("ollama", "ollama_chat")
OLLAMA_DEFAULT_BASE = "http://localhost:11434"
SHOW_TIMEOUT_S = 3.0

_lock = threading.Lock()
_learned: dict[tuple[str, str], dict[str, tuple[bool, str]]] = {}


def learn(api_base: str | None, model: str, capability: str, value: bool, reason: str) -> None:
    """Remember for this process that ``model`` at ``api_base`` has (or lacks) ``capability``
    ("tools" or "vision"), and why (the server's own words)."""
    with _lock:
        _learned.setdefault((api_base or "", model), {})[capability] = (value, reason)


def learned(api_base: str | None, model: str) -> dict[str, tuple[bool, str]]:
    """What this process learned about ``model`` at ``api_base``: capability -> (value, reason)."""
    with _lock:
        return dict(_learned.get((api_base or "", model), {}))


def forget(api_base: str | None = None, model: str | None = None) -> None:
    """Forget what was learned (about one model, or everything when no model is given); for tests."""
    with _lock:
        if model is None:
            _learned.clear()
        else:
            _learned.pop((api_base or "", model), None)


def ollama_capabilities(api_base: str | None, model: str, timeout: float = SHOW_TIMEOUT_S) -> list[str] | None:
    """The ``capabilities`` list of an Ollama server's ``/api/show`` for ``model`` (e.g. ["completion",
    "tools", "vision"]); None when the server cannot be asked or does not say (older Ollama)."""
    name = model.split("/", 1)[1] if "/" in model else model
    url = (api_base or OLLAMA_DEFAULT_BASE).rstrip("/") + "/api/show"
    request = urllib.request.Request(url, data=json.dumps({"model": name}).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:  # noqa: S310 - the user's own server
            body = json.loads(reply.read(1_000_000))
    # never fatal: the model map or the first refusal decides instead (unreachable, refused, a timeout, an HTTP
    # error status or a cut reply, a body that is not JSON)
    except (OSError, ValueError, http.client.HTTPException):
        return None
    found = body.get("capabilities") if isinstance(body, dict) else None
    return [str(c) for c in found] if isinstance(found, list) else None


@dataclass(frozen=True)
class Choice:
    """One capability's decision: the value and where it came from (option, learned, server,
    model map, assumed) with a reason for people."""

    value: bool
    source: str
    reason: str = ""

    @property
    def guessed(self) -> bool:
        return self.source in ("assumed", "learned")


def choose(capability: str, option: bool | None, api_base: str | None, model: str,
           server_caps: list[str] | None, model_map: bool | None) -> Choice:
    """Decide ``capability`` ("tools" or "vision") from what is known, strongest first."""
    if option is not None:
        return Choice(bool(option), "option", f"option {'native_tools' if capability == 'tools' else 'vision'}="
                                              f"{str(bool(option)).lower()}")
    known = learned(api_base, model).get(capability)
    if known is not None:
        return Choice(known[0], "learned", f"the server said: {known[1]}")
    if server_caps is not None:
        has = capability in server_caps
        return Choice(has, "server", f"the Ollama server's /api/show capabilities {server_caps}")
    if model_map is not None:
        return Choice(model_map, "model map", "litellm's model map")
    return Choice(True, "assumed", "litellm does not know the model; assumed until the server says otherwise")


def describe(model: str, tools: Choice, vision: Choice) -> dict[str, Any]:
    """The protocol part of ``capabilities()``: protocol, its source and reason, and vision's."""
    return {"protocol": "native" if tools.value else "text", "protocol_source": tools.source,
            "protocol_reason": tools.reason, "vision_source": vision.source, "vision_reason": vision.reason}
