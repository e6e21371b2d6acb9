"""Tool calls a model wrote as text, read back as calls; reasoning blocks removed first.

Models without native tool calls (or servers started without a tool parser) write their calls into
the reply: bare JSON objects, ```json fences, Hermes/Qwen ``<tool_call>`` tags, Mistral
``[TOOL_CALLS]``, Llama ``<|python_tag|>`` / ``<function=name>`` / pythonic ``[f(a=1)]``, GLM-4.5
``<arg_key>``/``<arg_value>`` tags, and the
JSON-in-text protocol's own ``{"search": ...}`` / ``{"answer": ..., "citations": ...}`` shapes. Every
backend and both protocols read them here. Pure functions, bounded work on any input.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from madqa.answer import find_json_object

MAX_SCAN_CHARS = 200_000  # a reply is read up to here (after its reasoning is removed)
MAX_CALLS = 16  # calls read from one reply; a model that writes more is not obeyed beyond this
_MAX_TOKENS = 300_000  # brackets and strings the scanner looks at in one reply: bounded work
_MAX_RESTARTS = 64  # rescans after an unclosed or mismatched bracket
_MAX_DESCENTS = 8  # rescans inside a bracketed list that is not JSON
_MAX_REPAIR_CHARS = 20_000  # longer broken spans are not handed to find_json_object

TEXT_PROTOCOL = """
You cannot call tools directly. To search, reply with only {"search": "<query>"}. To see pages again, reply with only {"show_pages": [{"file": "...", "page": 1}]}. To answer, reply with only {"answer": ["..."], "citations": [{"file": "...", "page": 1, "quote": "..."}]}."""




def text_protocol(tools: Sequence[dict[str, Any]] = ()) -> str:
    """The JSON-in-text protocol's instructions for the tools offered (OpenAI-shape schemas): the paper's
    three in their short shapes (``TEXT_PROTOCOL``), any other as ``{"tool": name, "arguments": {...}}``."""
    others = [t.get("function", {}) for t in tools
              if t.get("function", {}).get("name") not in ("search_documents", "show_pages", "submit_answer")]
    if not others:
        return TEXT_PROTOCOL
    lines = [TEXT_PROTOCOL, 'To call another tool, reply with only {"tool": "<name>", "arguments": {...}}. Other tools:']
    for fn in others:
        props = (fn.get("parameters") or {}).get("properties") or {}
        required = set((fn.get("parameters") or {}).get("required") or ())
        args = ", ".join(f"{k}: {v.get('type', 'any')}{'' if k in required else ' (optional)'}" for k, v in props.items())
        lines.append(f"- {fn.get('name')}({args}): {fn.get('description', '')}")
    return "\n".join(lines)


@dataclass(frozen=True)
class TextCall:
    """One tool call read from text; ``error`` (arguments left empty) says why it could not be read."""

    name: str
    arguments: dict[str, Any] = field(hash=False)
    error: str | None = None


# --- reasoning -------------------------------------------------------------------------------

_REASONING_TAG = re.compile(r"<(/?)(think|thinking|reasoning)\s*>", re.I)


def strip_reasoning(text: str) -> str:
    """``text`` without ``<think>``/``<thinking>``/``<reasoning>`` blocks, stripped of outer whitespace.

    An unclosed block runs to the end (a reply cut off while thinking has no answer); a closing tag
    with no opening one (Qwen3 and DeepSeek-R1 servers drop the opening) makes all before it reasoning.
    """
    pieces: list[str] = []
    pos, inside = 0, False
    for m in _REASONING_TAG.finditer(text):
        closing = bool(m.group(1))
        if inside:
            if closing:
                inside, pos = False, m.end()
        elif closing:
            pieces, pos = [], m.end()
        else:
            pieces.append(text[pos:m.start()])
            inside = True
    if not inside:
        pieces.append(text[pos:])
    return "".join(pieces).strip()


# --- reading calls ---------------------------------------------------------------------------

_NAME_KEYS = ("name", "function", "tool", "tool_name", "action")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input", "action_input")
_ALIASES = {"search": "search_documents"}
_IDENT = r"[A-Za-z_][\w.\-]*"
# markers that only frame a call: blanked so the JSON inside is read like any other
_FRAMES = re.compile(r"</?(?:tool_calls?|function_calls?|tools)>|<\|[a-z_]{1,30}\|>|\[TOOL_CALLS\]", re.I)
_MISTRAL_NAMED = re.compile(rf"\[TOOL_CALLS\]\s*({_IDENT})\s*(?:\[CALL_ID\]\s*[\w\-]*\s*)?(?:\[ARGS\]\s*)?(?=\{{)")
_FUNCTION_TAG = re.compile(rf"<function=({_IDENT})>")
_PARAMETER_TAG = re.compile(rf"<parameter=({_IDENT})>")
# GLM-4.5/4.6: <tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>...</tool_call> (vLLM's glm45 parser)
_GLM_CALL = re.compile(rf"<tool_call>\s*({_IDENT})\s*(?=<arg_key>|</tool_call>)")
_FENCE = re.compile(r"```[ \t]*([\w\-]*)")
_PYTHONIC = re.compile(rf"\[\s*{_IDENT}\s*\(")
_NAMED_IN_BROKEN = re.compile(rf"[\"']?(?:{'|'.join(_NAME_KEYS)})[\"']?\s*:\s*[\"']({_IDENT})")
_KEY_IN_BROKEN = re.compile(r"[\"'](answer|answers|show_pages|search|query)[\"']\s*:")
# inside brackets: a double-quoted string (closed or not), a single-quoted one where a value starts, a bracket
_TOKEN = re.compile(r"\"(?:[^\"\\]|\\.)*+(?P<dq>\")?|(?<=[{\[,:\s])'(?:[^'\\\n]|\\.)*+(?P<sq>')?|[{}\[\]]", re.S)
_PAIRS = {"{": "}", "[": "]"}
_UNCLOSED, _MISMATCHED, _EXHAUSTED = -1, -2, -3


def read_tool_calls(text: str, tool_names: Sequence[str]) -> tuple[TextCall, ...]:
    """Every call in a reply to a tool in ``tool_names`` (the tools offered), in order; () for prose.

    Calls to other names are ignored; a call whose arguments cannot be read, even repaired, comes
    back with ``error`` set so the loop can ask for it again.
    """
    offered = {name.casefold(): name for name in tool_names}
    if not text or not offered:
        return ()
    text = strip_reasoning(text)[:MAX_SCAN_CHARS]
    found: list[tuple[int, TextCall]] = []
    claimed: list[tuple[int, int]] = []
    budget = [_MAX_TOKENS]
    for m in _MISTRAL_NAMED.finditer(text):
        end = _span_end(text, m.end(), budget)
        if end == _EXHAUSTED:
            break
        stop = end if end > 0 else len(text)
        found += [(m.start(), c) for c in _named_call(m.group(1), text[m.end():stop], offered, end > 0)]
        claimed.append((m.start(), stop))
    for start, stop, calls in (*_function_tags(text, offered), *_glm_calls(text, offered)):
        found += [(start, c) for c in calls]
        claimed.append((start, stop))
    for start, head, stop, lang in _fences(text):
        calls = _python_calls(text[head:stop - 3], offered, True) if lang in ("tool_code", "python", "py") else []
        found += [(start, c) for c in calls]
        # a fence of Python calls is read; of any other fence only the fence lines go, what it holds is read below
        claimed += [(start, stop)] if calls else [(start, head), (stop - 3, stop)]
    claimed += [m.span() for m in _FRAMES.finditer(text)]
    found += _scan(_blank(text, claimed), offered, budget)
    found.sort(key=lambda pair: pair[0])
    return tuple(call for _, call in found[:MAX_CALLS])


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with ``spans`` replaced by spaces, so positions stay what they were."""
    chars = list(text)
    for start, stop in spans:
        chars[start:stop] = " " * (stop - start)
    return "".join(chars)


def _scan(text: str, offered: dict[str, str], budget: list[int]) -> list[tuple[int, TextCall]]:
    """Calls in every top-level JSON object or list of ``text`` (a broken one that names a tool: an error)."""
    found: list[tuple[int, TextCall]] = []
    pos, restarts, descents, unclosed = 0, 0, 0, None
    opener = re.compile(r"[{\[]")
    while budget[0] > 0 and (m := opener.search(text, pos)):
        start = m.start()
        end = _span_end(text, start, budget)
        if end == _EXHAUSTED:
            return found
        if end < 0:  # unclosed or mismatched: look again inside it, a bounded number of times
            unclosed = start if end == _UNCLOSED and unclosed is None else unclosed
            restarts += 1
            if restarts > _MAX_RESTARTS:
                break
            pos = start + 1
            continue
        calls, readable = _span_calls(text[start:end], offered)
        if calls:
            found += [(start, c) for c in calls]
            unclosed = None
            pos = end
        elif not readable and text[start] == "[" and descents < _MAX_DESCENTS:
            descents += 1  # a list that is not JSON (e.g. "[see {...}]"): read what it holds
            pos = start + 1
        else:
            pos = end
    if unclosed is not None and (call := _broken_call(text[unclosed:], offered, "its JSON is not closed "
                                                      "(the reply may have been cut off)")):
        found.append((unclosed, call))
    return found


def _span_end(text: str, start: int, budget: list[int]) -> int:
    """Index after the bracket closing the one at ``start``; _UNCLOSED or _MISMATCHED when there is none,
    _EXHAUSTED when the reply's token budget ran out first."""
    stack: list[str] = []
    pos = start
    while budget[0] > 0:
        budget[0] -= 1
        m = _TOKEN.search(text, pos)
        if m is None:
            return _UNCLOSED
        tok = m.group()
        if tok[0] == '"':
            if m.group("dq") is None:
                return _UNCLOSED
        elif tok[0] == "'":
            if m.group("sq") is None:  # an apostrophe, not a string
                pos = m.start() + 1
                continue
        elif tok in _PAIRS:
            stack.append(tok)
        elif not stack or _PAIRS[stack.pop()] != tok:
            return _MISMATCHED
        elif not stack:
            return m.end()
        pos = m.end()
    return _EXHAUSTED


def _span_calls(raw: str, offered: dict[str, str]) -> tuple[list[TextCall], bool]:
    """(calls in one bracketed span, whether it read as JSON or a Python literal)."""
    value, error = _load(raw)
    if error is None:
        return _interpret(value, offered, 0), True
    if raw.startswith("[") and _PYTHONIC.match(raw):
        calls = _python_calls(raw, offered, statements=False)
        if calls:
            return calls, True
    if raw.startswith("{"):
        call = _broken_call(raw, offered, f"its JSON could not be read ({error})")
        return ([call] if call else []), False
    return [], False


def _load(raw: str) -> tuple[Any, str | None]:
    """(value, None) for JSON, or what find_json_object can repair; (None, why) otherwise."""
    try:
        return json.loads(raw, strict=False), None
    except json.JSONDecodeError as exc:
        error = f"{exc.msg} at character {exc.pos}"
    except (ValueError, RecursionError) as exc:
        error = f"{type(exc).__name__}"
    if len(raw) <= _MAX_REPAIR_CHARS:
        if raw.startswith("{"):
            value = find_json_object(raw)
            if value is not None:
                return value, None
        else:
            try:
                return ast.literal_eval(re.sub(r",\s*([}\]])", r"\1", raw)), None
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                pass
    return None, error


def _tool(name: Any, offered: dict[str, str]) -> str | None:
    """The offered tool ``name`` means (case aside, a ``functions.`` prefix or ``:0`` suffix aside)."""
    if not isinstance(name, str):
        return None
    key = name.strip().casefold().removeprefix("functions.").split(":")[0]
    return offered.get(key) or offered.get(_ALIASES.get(key, ""))


def _arguments(name: str, value: Any) -> TextCall:
    """A call of ``name`` with ``value`` as its arguments: an object, a JSON string of one, or nothing."""
    if value is None:
        return TextCall(name, {})
    if isinstance(value, str):
        parsed, error = _load(value.strip()) if value.strip() else ({}, None)
        if error is not None:
            return TextCall(name, {}, f"its arguments are not valid JSON ({error})")
        value = parsed
    if not isinstance(value, dict):
        return TextCall(name, {}, f"its arguments are a {type(value).__name__}, not a JSON object")
    return TextCall(name, value)


def _interpret(value: Any, offered: dict[str, str], depth: int) -> list[TextCall]:
    """The calls a parsed JSON value stands for (see the module docstring for the shapes)."""
    if depth > 4:
        return []
    if isinstance(value, list):
        return [c for item in value[:MAX_CALLS] for c in _interpret(item, offered, depth + 1)]
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("tool_calls"), list):
        return _interpret(value["tool_calls"], offered, depth + 1)
    for wrapper in ("tool_call", "function_call"):
        if isinstance(value.get(wrapper), dict):
            return _interpret(value[wrapper], offered, depth + 1)
    if isinstance(value.get("function"), dict):  # OpenAI's {"type": "function", "function": {...}}
        return _interpret(value["function"], offered, depth + 1)
    name_key = next((k for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if name_key is not None:  # a name that is no offered tool is not a call (it may be data)
        name = _tool(value[name_key], offered)
        if name is None:
            return []
        arg_key = next((k for k in _ARG_KEYS if k in value), None)
        if arg_key is not None:
            return [_arguments(name, value[arg_key])]
        return [TextCall(name, {k: v for k, v in value.items() if k not in (name_key, "type", "id")})]
    if "answer" in value or "answers" in value:
        name = _tool("submit_answer", offered)
        if name is None:
            return []
        arguments = {"answer": value.get("answer", value.get("answers"))}
        if "citations" in value:
            arguments["citations"] = value["citations"]
        return [TextCall(name, arguments)]
    for key, given in value.items():  # {"search": "q"}, {"show_pages": [...]}, {"search_documents": {...}}
        name = _tool(key, offered)
        if name is not None:
            return [_keyed(name, given)]
    if isinstance(value.get("query"), str) and (name := _tool("search_documents", offered)):
        return [TextCall(name, {"query": value["query"]})]
    return []


def _keyed(name: str, given: Any) -> TextCall:
    """A call written as ``{tool: value}``: a query string, a list of pages, or the arguments."""
    if name == "search_documents" and isinstance(given, str):
        return TextCall(name, {"query": given})
    if name == "show_pages" and isinstance(given, list):
        return TextCall(name, {"pages": given})
    if name == "submit_answer" and isinstance(given, list):
        return TextCall(name, {"answer": given})
    return _arguments(name, given)


def _broken_call(raw: str, offered: dict[str, str], why: str) -> TextCall | None:
    """An error call when unreadable JSON names an offered tool (or a protocol key); None for prose."""
    named = _NAMED_IN_BROKEN.search(raw)
    name = _tool(named.group(1), offered) if named else None
    if name is None and not named and (key := _KEY_IN_BROKEN.search(raw)):
        word = key.group(1)
        name = _tool({"answer": "submit_answer", "answers": "submit_answer", "query": "search_documents"}
                     .get(word, word), offered)
    return TextCall(name, {}, why) if name else None


def _named_call(name: str, rest: str, offered: dict[str, str], closed: bool) -> list[TextCall]:
    """``name`` followed by its JSON arguments (Mistral's ``[TOOL_CALLS]name[ARGS]{...}``)."""
    tool = _tool(name, offered)
    if tool is None:
        return []
    if not closed:
        return [TextCall(tool, {}, "its arguments are not closed (the reply may have been cut off)")]
    return [_arguments(tool, rest.strip())]


def _function_tags(text: str, offered: dict[str, str]) -> list[tuple[int, int, list[TextCall]]]:
    """Llama's ``<function=name>{...}</function>`` and Qwen3-Coder's ``<parameter=k>v</parameter>`` bodies."""
    out: list[tuple[int, int, list[TextCall]]] = []
    for m in list(_FUNCTION_TAG.finditer(text))[:MAX_CALLS]:
        close = text.find("</function>", m.end())
        following = _FUNCTION_TAG.search(text, m.end())
        stop = min(p for p in (close, following.start() if following else -1, len(text)) if p >= 0)
        body = text[m.end():stop]
        end = stop + len("</function>") if stop == close else stop
        tool = _tool(m.group(1), offered)
        if tool is None:
            out.append((m.start(), end, []))
        elif "<parameter=" in body:
            out.append((m.start(), end, [TextCall(tool, _parameters(body))]))
        else:
            out.append((m.start(), end, [_arguments(tool, body.strip())]))
    return out


def _glm_calls(text: str, offered: dict[str, str]) -> list[tuple[int, int, list[TextCall]]]:
    """GLM-4.5's ``<tool_call>name`` followed by ``<arg_key>``/``<arg_value>`` pairs up to ``</tool_call>``."""
    out: list[tuple[int, int, list[TextCall]]] = []
    for m in list(_GLM_CALL.finditer(text))[:MAX_CALLS]:
        close = text.find("</tool_call>", m.end())
        stop = close if close >= 0 else len(text)
        tool = _tool(m.group(1), offered)
        arguments = _glm_arguments(text[m.end():stop])
        out.append((m.start(), stop + len("</tool_call>") if close >= 0 else stop,
                    [TextCall(tool, arguments)] if tool else []))
    return out


def _glm_arguments(body: str) -> dict[str, Any]:
    """The ``<arg_key>k</arg_key><arg_value>v</arg_value>`` pairs of one call (at most 32; one pass, no regex
    backtracking over a hostile reply)."""
    arguments: dict[str, Any] = {}
    pos = 0
    while len(arguments) < 32 and (key := body.find("<arg_key>", pos)) >= 0:
        key_end = body.find("</arg_key>", key)
        value = body.find("<arg_value>", key_end)
        value_end = body.find("</arg_value>", value)
        if min(key_end, value, value_end) < 0 or body[key_end + 10:value].strip():
            break
        arguments[body[key + 9:key_end].strip()] = _value(body[value + 11:value_end].strip())
        pos = value_end + 12
    return arguments


def _value(raw: str) -> Any:
    """A tag's value: JSON when it reads as a number, list or object, else the text as it is."""
    try:
        return json.loads(raw) if raw[:1] in "[{0123456789-" else raw
    except ValueError:
        return raw


def _parameters(body: str) -> dict[str, Any]:
    """``<parameter=k>v</parameter>`` pairs; a value that reads as JSON (a number, a list) is taken as such."""
    params: dict[str, Any] = {}
    for m in list(_PARAMETER_TAG.finditer(body))[:32]:
        close = body.find("</parameter>", m.end())
        params[m.group(1)] = _value(body[m.end():close if close >= 0 else len(body)].strip())
    return params


def _fences(text: str) -> list[tuple[int, int, int, str]]:
    """(start, end of the opening line, stop, language) of each closed ``` fence."""
    out: list[tuple[int, int, int, str]] = []
    pos = 0
    while len(out) < 64 and (m := _FENCE.search(text, pos)):
        close = text.find("```", m.end())
        if close < 0:
            break
        out.append((m.start(), m.end(), close + 3, m.group(1).casefold()))
        pos = close + 3
    return out


def _python_calls(source: str, offered: dict[str, str], statements: bool) -> list[TextCall]:
    """Calls written as Python: ``[f(a=1), g(b="x")]`` (Llama's pythonic style) or statements in a
    ``tool_code`` fence (Gemma's, also wrapped in ``print(...)``). Keyword arguments must be literals."""
    try:
        tree = ast.parse(source.strip(), mode="exec" if statements else "eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    if statements:
        nodes = [s.value for s in tree.body if isinstance(s, ast.Expr)]  # type: ignore[attr-defined]
    else:
        body = tree.body  # type: ignore[attr-defined]
        nodes = list(body.elts) if isinstance(body, (ast.List, ast.Tuple)) else []
    calls = []
    for node in nodes[:MAX_CALLS]:
        if isinstance(node, ast.Call) and _func_name(node) == "print" and len(node.args) == 1:
            node = node.args[0]
        if not isinstance(node, ast.Call) or (name := _tool(_func_name(node), offered)) is None:
            continue
        if node.args:
            calls.append(TextCall(name, {}, "its arguments were given by position; give each by name"))
            continue
        try:
            calls.append(TextCall(name, {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            calls.append(TextCall(name, {}, "its arguments are not plain values (strings, numbers, lists)"))
    return calls


def _func_name(node: ast.Call) -> str | None:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
