"""A plugin's options, declared once: name, type, range or choices, default, description, visitor-safe.

A plugin lists its options as a tuple of ``Option`` and hands it to ``register(..., options=OPTIONS)``;
its factory reads the ``options`` dict it is given with ``read_options(options, OPTIONS, who)``. From
the same declaration come the checks (unknown keys, types, ranges, choices), the typing of text given
on the command line or in a form (``--set retriever.k=30``), ``madqa plugins``, the options table in
docs/plugins-reference.md (``options_table``) and the web app's visitor allow-list (``visitor_safe``).
``read_options`` still takes a plain mapping of defaults (each value's type is its default's).
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from madqa.errors import OptionError, PluginError

_TYPE_NAMES: dict[type, str] = {bool: "bool", int: "int", float: "float", str: "str", dict: "table", list: "list",
                                object: "any"}
VISITOR_TEXT_CHARS = 100  # the longest text a web visitor may give a text option without choices


@dataclass(frozen=True)
class Option:
    """One option of one plugin.

    ``type`` is bool, int, float, str, dict, list or object (anything); a ``default`` of None means
    "not set" and then None is accepted too. ``low``/``high`` bound a number (inclusive; ``above`` makes
    ``low`` exclusive); ``choices`` lists the accepted values. ``visitor_safe``: a web visitor may set it
    (within ``visitor_high`` when given, a tighter ceiling than the operator's)."""

    name: str
    type: type
    default: Any
    description: str
    choices: tuple[Any, ...] = ()
    low: float | None = None
    high: float | None = None
    above: bool = False
    visitor_safe: bool = False
    visitor_high: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.type, type):
            raise PluginError(f"option {self.name}: type must be a type (bool, int, float, str, dict, list, object)")

    @property
    def type_name(self) -> str:
        return _TYPE_NAMES.get(self.type, self.type.__name__)

    def describe_range(self) -> str:
        """The accepted values in a few words (``0..1``, ``> 0``, ``standard|stemming``), or ""."""
        if self.choices:
            return "|".join(_shown(c) for c in self.choices)
        if self.low is not None and self.high is not None:
            return f"{_shown(self.low)}..{_shown(self.high)}"
        if self.low is not None:
            return f"{'>' if self.above else '>='} {_shown(self.low)}"
        if self.high is not None:
            return f"<= {_shown(self.high)}"
        return ""

    def read(self, value: Any, who: str) -> Any:
        """``value`` checked and typed (text from a form or ``--set`` read as the option's type);
        OptionError saying what is expected."""
        if value is None and self.default is None:
            return None
        if isinstance(value, str) and self.type in (bool, int, float):
            value = _parsed(value)
        if self.type is bool or isinstance(value, bool):
            if not (self.type in (bool, object) and isinstance(value, bool)):
                raise OptionError(f"{who}: option {self.name} expects {self.type_name}, got {value!r}")
        elif self.type is float and isinstance(value, int):
            value = float(value)
        elif self.type is not object and not isinstance(value, self.type):
            raise OptionError(f"{who}: option {self.name} expects {self.type_name}, got {value!r}")
        if self.type is float and not math.isfinite(value):
            raise OptionError(f"{who}: option {self.name} expects a finite number, got {value!r}")
        if self.choices and value not in self.choices:
            raise OptionError(f"{who}: option {self.name} must be one of {', '.join(map(_shown, self.choices))}, "
                              f"not {value!r}")
        if self.type in (int, float) and not self._in_range(value, self.high):
            number = "a whole number" if self.type is int else "a number"
            raise OptionError(f"{who}: option {self.name} must be {number} {self._range_words()}, not {value!r}")
        return value

    def visitor_allows(self, value: Any) -> bool:
        """Whether a web visitor may give ``value``: a visitor-safe option, a valid value, within
        ``visitor_high``; text without choices at most ``VISITOR_TEXT_CHARS`` printable characters."""
        if not self.visitor_safe:
            return False
        try:
            value = self.read(value, "visitor")
        except OptionError:
            return False
        if self.type in (int, float) and value is not None and not self._in_range(value, self.visitor_high):
            return False
        if isinstance(value, str) and not self.choices:
            return len(value) <= VISITOR_TEXT_CHARS and value.isprintable()
        return self.type in (bool, int, float, str) or value is None

    def _in_range(self, value: float, high: float | None) -> bool:
        high = self.high if high is None else min(high, self.high) if self.high is not None else high
        if self.low is not None and (value <= self.low if self.above else value < self.low):
            return False
        return high is None or value <= high

    def _range_words(self) -> str:
        if self.low is not None and self.high is not None:
            return f"between {_shown(self.low)} and {_shown(self.high)}"
        if self.low is not None:
            return f"{'above' if self.above else 'at least'} {_shown(self.low)}"
        return f"at most {_shown(self.high)}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type_name, "default": self.default, "description": self.description,
                "range": self.describe_range() or None, "visitor_safe": self.visitor_safe}


def _shown(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).lower() if isinstance(value, bool) else str(value)


def _parsed(text: str) -> Any:
    """Text as the TOML value it spells (``3``, ``0.5``, ``true``), else the text itself."""
    try:
        return tomllib.loads(f"v = {text.strip()}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):  # nested too deeply: kept as text, refused by its type
        return text


Declared = Iterable[Option] | Mapping[str, Any]


def declared_options(declared: Declared) -> tuple[Option, ...]:
    """Options as declarations; a plain mapping of defaults becomes one Option per key, typed by its default."""
    if isinstance(declared, Mapping):
        return tuple(Option(k, object if v is None else type(v), v, "") for k, v in declared.items())
    return tuple(declared)


def read_options(options: Mapping[str, Any] | None, declared: Declared, who: str) -> dict[str, Any]:
    """The defaults updated with ``options``; an unknown key or a bad value raises.

    ``declared``: a tuple of ``Option`` (checked for type, range and choices, text read as the type), or
    a mapping of defaults (numbers widen: an int where a float is expected is fine; a default of None
    accepts anything). ``who`` names the plugin in the message, e.g. ``"query strategy drift"``."""
    plain = isinstance(declared, Mapping)
    by_name = {o.name: o for o in declared_options(declared)}
    given = dict(options or {})
    unknown = sorted(set(given) - set(by_name))
    if unknown:
        known = ", ".join(sorted(by_name)) or "none"
        raise PluginError(f"{who}: unknown option {', '.join(unknown)} (known: {known})")
    merged = {name: option.default for name, option in by_name.items()}
    for key, value in given.items():
        option = by_name[key]
        if plain and isinstance(value, str) and option.type in (bool, int, float):
            raise OptionError(f"{who}: option {key} expects {option.type_name}, got {value!r}")
        merged[key] = option.read(value, who)
    return merged


def options_table(rows: Iterable[tuple[str, str, Option]]) -> str:
    """A Markdown table of (kind, component name, option) rows: docs/plugins-reference.md holds this one."""
    lines = ["| part | name | option | type | default | range | web | what |", "|---|---|---|---|---|---|---|---|"]
    for kind, name, o in rows:
        default = "-" if o.default is None else f"`{_shown(o.default)}`" if o.default != "" else '`""`'
        lines.append(f"| {kind} | `{name}` | `{o.name}` | {o.type_name} | {default} | {o.describe_range() or '-'} | "
                     f"{'yes' if o.visitor_safe else '-'} | {o.description.replace('|', '/')} |")
    return "\n".join(lines)
