"""The litellm backend's options: their defaults, how they are read and checked, and the key holder.

Documented in madqa_plugins/litellm/litellm_backend.py's docstring (one place for people to read them).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import madqa

DEFAULT_ATTEMPTS = 3
DEFAULT_TIMEOUT_S = 120.0
PLACEHOLDER_KEY = "none"  # sent to an OpenAI-compatible api_base when no key is given
WHO = "backend litellm"
MAX_TOKENS_CEILING = 16384  # a reply cut off at max_tokens is retried once with at most this many
LENGTH_RETRY_TOKENS = 4096  # ... or with this many when max_tokens was not set
# Options a user sets (``[options.backend]``, ``--set backend.KEY=VALUE``, the web app's options box),
# with their defaults; None means "not sent" / "ask litellm's model map".
Option = madqa.Option
OPTIONS: tuple[madqa.Option, ...] = (
    Option("api_base", str, None, "server URL (an OpenAI-compatible server as openai/<name>, Ollama, a proxy)"),
    Option("api_key_env", str, None, "environment variable holding the key (else litellm's usual OPENAI_API_KEY, ...)"),
    Option("temperature", float, None, "sampling temperature (default: the config's)", low=0),
    Option("timeout", float, DEFAULT_TIMEOUT_S, "seconds per attempt", low=0, above=True),
    Option("max_tokens", int, None, "most completion tokens", low=1),
    Option("completion_kwargs", dict, None, "further litellm.completion arguments (a TOML inline table)"),
    Option("drop_params", bool, True, "let litellm drop parameters the model does not take"),
    Option("native_tools", bool, None, "false: a JSON-in-text protocol instead of tool calls (unset: auto)"),
    Option("vision", bool, None, "false: the model gets each page's text instead of its image (unset: auto)"),
    Option("force_tool_choice", str, "named", "how the last step forces submit_answer",
           choices=("named", "required", "none")),
    Option("max_attempts", int, None, f"attempts per model call (default {DEFAULT_ATTEMPTS})", low=1),
    Option("max_retries", int, None, "max_attempts - 1 (litellm's name)", low=0),
    Option("retry_base_delay", float, 1.0, "backoff base between attempts (seconds)", low=0),
    Option("retry_max_delay", float, 30.0, "longest backoff between attempts (seconds)", low=0),
    Option("overload_delay", float, 5.0, "the backoff's base after an overload (Anthropic 529, a 503)", low=0),
    Option("max_tokens_ceiling", int, MAX_TOKENS_CEILING,
           "a reply cut off at max_tokens is asked again once with twice as many, at most this", low=1),
    Option("mock_response", object, None, "litellm's offline mock reply, every call (tests, demos)"),
    Option("mock_tool_calls", object, None, "litellm's offline mock tool calls, every call (tests)"),
    Option("mock_responses", list, None, "litellm's offline mocks, one per call (tests, demos)"),
)
DEFAULTS: dict[str, Any] = {o.name: o.default for o in OPTIONS}
# Given by the program, not by a user: the key from the CLI or a web session, the corpus (for
# backends that read page text), a sleep function for tests.
INTERNAL = {"api_key": None, "corpus": None, "sleep": None}


def read_backend_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """The backend's options with defaults; an unknown key raises PluginError listing the known ones."""
    given = dict(options or {})
    internal = {k: given.pop(k) for k in list(given) if k in INTERNAL}
    for name in ("vision", "native_tools"):  # yes/no/auto, also as text from a form
        if name in given:
            given[name] = flag(given, name)
    read = {**madqa.read_options(given, OPTIONS, WHO), **internal}
    if read.get("api_base") is not None:  # blank: not set, as before (an empty form field, api_base = "")
        read["api_base"] = server_url(str(read["api_base"])) if str(read["api_base"]).strip() else None
    return read


def server_url(api_base: str) -> str:
    """``api_base`` when it is an http(s) URL with a host; else OptionError saying how to write it. Without
    the scheme (``localhost:11434``, ``127.0.0.1:8000/v1``: how Ollama and vLLM print their address) every
    call failed as "Connection error" after its retries, on each question of a run."""
    text = api_base.strip()
    parts = urlsplit(text)
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        parts = parts._replace(netloc="")
    if parts.scheme in ("http", "https") and parts.hostname:
        return text
    hint = f"; did you mean http://{text}?" if "://" not in text and text else ""
    raise madqa.OptionError(f"{WHO}: option api_base must be a server URL starting with http:// or https://, "
                            f"e.g. http://localhost:11434 or http://127.0.0.1:8000/v1, not {api_base!r}{hint}")


class Secret:
    """Holds a key so that printing, repr() or vars() of its holder never shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str | None) -> None:
        self._value = value or None

    def reveal(self) -> str | None:
        return self._value

    def __bool__(self) -> bool:
        return self._value is not None

    def __repr__(self) -> str:
        return "<hidden>" if self._value else "<none>"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # never pickled along with a backend
        raise TypeError("a secret cannot be pickled")


def flag(options: dict[str, Any], name: str) -> bool | None:
    """A yes/no option (a bool, or text such as "false" from a form); None when not given."""
    value = options.get(name)
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    if text in ("", "auto"):
        return None
    raise madqa.SettingsError(f"litellm option {name} must be true, false or auto, not {value!r}")


def attempts(options: dict[str, Any]) -> int:
    """Attempts per model call from checked options: ``max_attempts``, else ``max_retries`` + 1, else 3."""
    if options.get("max_attempts") is not None:
        return int(options["max_attempts"])
    if options.get("max_retries") is not None:
        return int(options["max_retries"]) + 1
    return DEFAULT_ATTEMPTS


# --- mocks -----------------------------------------------------------------------------------


def mock_kwargs(item: Any) -> dict[str, Any]:
    """litellm mock arguments for one scripted reply (see the module docstring)."""
    if isinstance(item, (str, BaseException)):
        return {"mock_response": item}
    if isinstance(item, dict) and "tool_calls" in item:
        calls = []
        for n, call in enumerate(item["tool_calls"]):
            arguments = call.get("arguments", {})
            calls.append({"id": call.get("id") or f"mock_call_{n}", "type": "function",
                          "function": {"name": call["name"], "arguments": arguments if isinstance(arguments, str)
                                       else json.dumps(arguments)}})
        return {"mock_response": item.get("content", ""), "mock_tool_calls": calls}
    if isinstance(item, dict) and {"mock_response", "mock_tool_calls"} & set(item):
        return {k: item[k] for k in ("mock_response", "mock_tool_calls") if k in item}
    raise madqa.SettingsError(f"cannot use {type(item).__name__} as a litellm mock response")


def whole(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0
