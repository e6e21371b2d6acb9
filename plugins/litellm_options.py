"""The litellm backend's options: their defaults, how they are read and checked, and the key holder.

Documented in plugins/litellm_backend.py's docstring (one place for people to read them).
"""

from __future__ import annotations

import json
from typing import Any

import madqa

DEFAULT_ATTEMPTS = 3
DEFAULT_TIMEOUT_S = 120.0
PLACEHOLDER_KEY = "none"  # sent to an OpenAI-compatible api_base when no key is given
WHO = "backend litellm"
MAX_TOKENS_CEILING = 16384  # a reply cut off at max_tokens is retried once with at most this many
LENGTH_RETRY_TOKENS = 4096  # ... or with this many when max_tokens was not set
# Options a user sets (``[options.backend]``, ``--set backend.KEY=VALUE``, the web app's options box),
# with their defaults; None means "not sent" / "ask litellm's model map".
DEFAULTS: dict[str, Any] = {
    "api_base": None, "api_key_env": None, "temperature": None, "timeout": DEFAULT_TIMEOUT_S, "max_tokens": None,
    "completion_kwargs": None, "drop_params": True, "native_tools": None, "vision": None,
    "force_tool_choice": "named", "max_attempts": None, "max_retries": None, "retry_base_delay": 1.0,
    "retry_max_delay": 30.0, "overload_delay": 5.0, "max_tokens_ceiling": MAX_TOKENS_CEILING,
    "mock_response": None, "mock_tool_calls": None, "mock_responses": None,
}
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
    return {**madqa.read_options(given, DEFAULTS, WHO), **internal}


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


def positive(options: dict[str, Any], name: str, zero: bool = False) -> float:
    value = options.get(name)
    if value is None:
        return float(DEFAULTS[name])
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (value == 0 and not zero):
        raise madqa.SettingsError(f"litellm option {name} must be a number of seconds "
                                  f"{'>= 0' if zero else '> 0'}, not {value!r}")
    return float(value)


def attempts(options: dict[str, Any]) -> int:
    if options.get("max_attempts") is not None:
        value, name = options["max_attempts"], "max_attempts"
    elif options.get("max_retries") is not None:
        value, name = options["max_retries"], "max_retries"
        value = value + 1 if isinstance(value, int) and not isinstance(value, bool) else value
    else:
        return DEFAULT_ATTEMPTS
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise madqa.SettingsError(f"litellm option {name} must be a whole number (attempts at least 1)")
    return value


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
