"""Reading a plugin's ``options`` dict: known keys only, each of its default's type."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from madqa.errors import PluginError


def read_options(options: Mapping[str, Any] | None, defaults: Mapping[str, Any], who: str) -> dict[str, Any]:
    """``defaults`` updated with ``options``; an unknown key or a value of the wrong type raises.

    Numbers widen (an int where a float is expected is fine); a default of None accepts anything.
    ``who`` names the plugin in the message, e.g. ``"query strategy drift"``.
    """
    given = dict(options or {})
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        known = ", ".join(sorted(defaults)) or "none"
        raise PluginError(f"{who}: unknown option {', '.join(unknown)} (known: {known})")
    merged = dict(defaults)
    for key, value in given.items():
        default = defaults[key]
        if default is None or value is None:
            merged[key] = value
        elif isinstance(default, bool) or isinstance(value, bool):
            if not (isinstance(default, bool) and isinstance(value, bool)):
                raise PluginError(f"{who}: option {key} expects {type(default).__name__}, got {value!r}")
            merged[key] = value
        elif isinstance(default, float) and isinstance(value, int):
            merged[key] = float(value)
        elif not isinstance(value, type(default)):
            raise PluginError(f"{who}: option {key} expects {type(default).__name__}, got {value!r}")
        else:
            merged[key] = value
    return merged
