"""Fake provider servers on 127.0.0.1 that speak four wire formats and check every request.

Each ``FakeProvider`` plays scripted replies (a search, an answer, an error, a hang, arguments that
are not JSON) in its provider's own response format, and checks each request it receives against
that provider's documented request rules (``RULES``; sources in docs/models.md). litellm reaches it
through its real client code with ``api_base``. Used by tests/test_providers.py and
bench/context.py; nothing here is a test by itself.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests import fake_behaviours as fb

KINDS = ("openai", "anthropic", "gemini", "ollama")
MODELS = {"openai": "openai/gpt-4o", "anthropic": "anthropic/claude-sonnet-4-5",
          "gemini": "gemini/gemini-2.5-flash", "ollama": "ollama_chat/qwen2.5vl"}
# The rules each provider's fake checks, by name (the rows of the conformance matrix).
RULES = ("roles", "tool results", "images", "tool schema", "max_tokens", "cache marks", "request size")
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # OpenAI and Anthropic function / tool names
GEMINI_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
MB = 1024 * 1024


@dataclass
class Reply:
    """One scripted reply: ``kind`` is search, answer, text, raw_call, error, raw or hang."""

    kind: str
    query: str = ""
    answer: tuple[str, ...] = ()
    citations: tuple[dict[str, Any], ...] = ()
    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    raw_arguments: str = ""
    tool: str = "search_documents"
    finish: str = "stop"  # stop, length or content_filter, sent in the provider's own shape
    usage: bool = True  # False: the reply carries no token counts
    truncated: bool = False  # a 200 whose JSON body is cut off half-way


def search(query: str) -> Reply:
    return Reply("search", query=query)


def answer(values: list[str], citations: list[dict[str, Any]]) -> Reply:
    return Reply("answer", answer=tuple(values), citations=tuple(citations))


def show(pages: list[dict[str, Any]]) -> Reply:
    return Reply("raw_call", tool="show_pages", raw_arguments=json.dumps({"pages": pages}))


def error(status: int, message: str, **headers: str) -> Reply:
    return Reply("error", status=status, text=message, headers=dict(headers))


def raw(status: int, body: str, content_type: str) -> Reply:
    """A body sent as it is (not in the provider's format): a web page at api_base, an event stream."""
    return Reply("raw", status=status, text=body, headers={"Content-Type": content_type})


def hang(seconds: float) -> Reply:
    return Reply("hang", seconds=seconds)


def raw_call(name: str, arguments: str) -> Reply:
    return Reply("raw_call", tool=name, raw_arguments=arguments)


def text(value: str, finish: str = "stop", usage: bool = True) -> Reply:
    """A plain-text reply (the JSON-in-text protocol's, or tool calls a model wrote as text)."""
    return Reply("text", text=value, finish=finish, usage=usage)


def cut(value: str = fb.CUT_TEXT) -> Reply:
    """A reply cut off by max_tokens (finish reason length, in the provider's shape)."""
    return Reply("text", text=value, finish="length")


def filtered(value: str = "") -> Reply:
    """A reply withheld or cut by the provider's content filter."""
    return Reply("text", text=value, finish="content_filter")


def truncated_body() -> Reply:
    """A 200 whose JSON body stops half-way (a proxy or server that died mid-reply)."""
    return Reply("answer", truncated=True)


def cut_mid_body() -> Reply:
    """A 200 that promises a whole body (Content-Length) and closes the connection half-way through it."""
    return Reply("answer", headers={"X-Fake-Cut": "1"})


def overloaded(kind: str) -> Reply:
    """The provider's overload reply: Anthropic's 529 overloaded_error, the others' 503."""
    status, message = fb.OVERLOAD[kind]
    return Reply("error", status=status, text=message)


def json_search(query: str) -> Reply:
    """A search in the JSON-in-text protocol."""
    return text(json.dumps({"search": query}))


def json_answer(values: list[str], citations: list[dict[str, Any]]) -> Reply:
    """An answer in the JSON-in-text protocol."""
    return text(json.dumps({"answer": values, "citations": citations}))


# Replies of models that write tool calls or answers as text (the loop reads them: madqa/tool_text.py).
TEXT_REPLY_KINDS = {
    "bare json": lambda q: text(fb.bare_json_text("search_documents", {"query": q})),
    "json fence": lambda q: text(fb.fenced_text("search_documents", {"query": q})),
    "hermes tags": lambda q: text(fb.hermes_text("search_documents", {"query": q})),
    "mistral [TOOL_CALLS]": lambda q: text(fb.mistral_text("search_documents", {"query": q})),
    "think block": lambda q: text(fb.think_text(fb.bare_json_text("search_documents", {"query": q}))),
}


def prose_answer(value: str) -> Reply:
    return text(fb.prose_answer_text(value))


def refusal_as_answer() -> Reply:
    return text(fb.REFUSAL_TEXT)


@dataclass
class Check:
    request: int
    rule: str
    ok: bool
    detail: str = ""


class FakeProvider:
    """A provider's fake on a free 127.0.0.1 port; ``with FakeProvider("anthropic") as p:``."""

    def __init__(self, kind: str, replies: list[Reply] | None = None, server: fb.Server | None = None,
                 model: str | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown provider {kind!r}")
        self.kind = kind
        self.model = model or MODELS[kind]
        self.server = server or fb.Server()
        self.shows = 0  # Ollama /api/show requests
        self.replies: list[Reply] = list(replies or [])
        self.requests: list[dict[str, Any]] = []
        self.checks: list[Check] = []
        self.times: list[float] = []
        self._server: ThreadingHTTPServer | None = None
        self._calls = 0

    # --- server ---------------------------------------------------------------------------------

    def __enter__(self) -> FakeProvider:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                status, payload, headers = provider.handle(self.path, dict(self.headers), raw)
                if status == 0:  # a hang that outlived the client: nothing to send
                    return
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                if headers.pop("X-Fake-Truncate", None):
                    data = data[: len(data) // 2]
                cut = headers.pop("X-Fake-Cut", None)  # the full Content-Length, half the body, then closed
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2] if cut else data)
                    if cut:
                        self.wfile.flush()
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        """The ``api_base`` to give litellm for this provider."""
        assert self._server is not None
        base = f"http://127.0.0.1:{self._server.server_address[1]}"
        return base + "/v1" if self.kind == "openai" else base

    def handle(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any, dict[str, str]]:
        if self.kind == "ollama" and path == "/api/show":  # what the model can do (litellm, madqa); not a turn
            self.shows += 1
            return 200, {"capabilities": list(self.server.capabilities), "details": {"family": "qwen25vl"},
                         "model_info": {"general.architecture": "qwen25vl", "qwen25vl.context_length": 128000}}, {}
        self.times.append(time.monotonic())
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        index = len(self.requests)
        self.requests.append({"path": path, "headers": headers, "body": body, "bytes": len(raw)})
        self.checks += [Check(index, rule, ok, detail) for rule, ok, detail in self.check(path, body, len(raw))]
        refused = fb.refusal(self.kind, self.server, body, len(raw), self.model.split("/", 1)[-1]) \
            if isinstance(body, dict) else None
        if refused is not None:  # the server's own refusal; the scripted reply waits for the next request
            return refused[0], refused[1], {}
        reply = self.replies.pop(0) if self.replies else answer([], [])
        if reply.kind == "hang":
            time.sleep(reply.seconds)
            return 0, None, {}
        if reply.kind == "error":
            return reply.status, self.error_body(reply.status, reply.text), reply.headers
        if reply.kind == "raw":
            return reply.status, reply.text, dict(reply.headers)
        self._calls += 1
        more = {"X-Fake-Truncate": "1"} if reply.truncated else {}
        return 200, self.reply_body(reply, body or {}), {**reply.headers, **more}

    # --- replies in each wire format ----------------------------------------------------------------

    def _call(self, reply: Reply) -> tuple[str, Any]:
        if reply.kind == "search":
            return "search_documents", {"query": reply.query}
        if reply.kind == "answer":
            return "submit_answer", {"answer": list(reply.answer), "citations": list(reply.citations)}
        return reply.tool, reply.raw_arguments

    def reply_body(self, reply: Reply, request: dict[str, Any]) -> dict[str, Any]:
        n = self._calls
        text_only = reply.kind == "text"
        name, arguments = (None, None) if text_only else self._call(reply)
        as_object = arguments if isinstance(arguments, dict) else _object_or_text(arguments)
        finish = reply.finish if text_only or reply.finish != "stop" else "tool_calls"
        if self.kind == "openai":
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if not text_only:
                message["tool_calls"] = [{"id": f"call_{n}", "type": "function", "function": {
                    "name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}}]
            body: dict[str, Any] = {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0,
                                    "model": "gpt-4o", "choices": [{"index": 0, "message": message,
                                                                    **fb.finish_fields("openai", finish)}]}
            if reply.usage:
                body["usage"] = {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020}
            return body
        if self.kind == "anthropic":
            content = ([{"type": "text", "text": reply.text}] if text_only
                       else [{"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": as_object}])
            if fb.thinking_enabled(request):  # extended thinking: the reply starts with its signed thinking
                content = [{"type": "thinking", "thinking": f"Step {n}: what do the pages say?",
                            "signature": f"sig-{n}"}, *content]
            stop = fb.finish_fields("anthropic", finish)["stop_reason"] if finish != "tool_calls" else "tool_use"
            body = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": content if reply.text or not text_only else [], "stop_reason": stop,
                    "stop_sequence": None}
            # The Messages API always counts tokens; "no usage" is zeros (as some proxies send)
            body["usage"] = ({"input_tokens": 1000, "output_tokens": 20} if reply.usage
                             else {"input_tokens": 0, "output_tokens": 0})
            return body
        if self.kind == "gemini":
            parts = [{"text": reply.text}] if text_only else [{"functionCall": {"name": name, "args": as_object}}]
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0,
                                         **fb.finish_fields("gemini", finish)}
            if finish == "content_filter":  # a blocked candidate: no content, the ratings say why
                candidate = {"finishReason": "SAFETY", "index": 0, "safetyRatings": fb.GEMINI_SAFETY}
            body = {"candidates": [candidate], "modelVersion": "gemini-2.5-flash",
                    "usageMetadata": {"promptTokenCount": 1000, "candidatesTokenCount": 20, "totalTokenCount": 1020}
                    if reply.usage else {}}  # (litellm refuses a reply with no usageMetadata at all)
            return body
        message = {"role": "assistant", "content": reply.text or ""}
        if not text_only:
            message["tool_calls"] = [{"function": {"name": name, "arguments": as_object}}]
        body = {"model": self.model.split("/", 1)[-1], "created_at": "2026-01-01T00:00:00Z", "message": message,
                "done": True, **fb.finish_fields("ollama", finish)}
        if reply.usage:
            body.update(prompt_eval_count=1000, eval_count=20)
        return body

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return fb.error_body(self.kind, self.server.flavour, status, message)

    # --- the documented request rules ------------------------------------------------------------

    def check(self, path: str, body: Any, size: int) -> list[tuple[str, bool, str]]:
        if not isinstance(body, dict):
            return [("roles", False, "the body is not a JSON object")]
        checker = {"openai": _check_openai, "anthropic": _check_anthropic, "gemini": _check_gemini,
                   "ollama": _check_ollama}[self.kind]
        return checker(path, body, size)

    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]


def _object_or_text(arguments: Any) -> Any:
    try:
        value = json.loads(arguments)
    except (TypeError, ValueError):
        return {"_unparsable": arguments}
    return value if isinstance(value, dict) else {"_value": value}


def _result(rule: str, problems: list[str]) -> tuple[str, bool, str]:
    return rule, not problems, "; ".join(problems[:3])


def _b64(data: Any) -> bytes | None:
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG, JPEG or WebP header (enough for the providers' pixel limits)."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        if data[12:16] == b"VP8 " and len(data) >= 30:
            w, h = struct.unpack("<HH", data[26:30])
            return w & 0x3FFF, h & 0x3FFF
        if data[12:16] == b"VP8L" and len(data) >= 25:
            b = data[21:25]
            return 1 + (((b[1] & 0x3F) << 8) | b[0]), 1 + (((b[3] & 0xF) << 10) | (b[2] << 2) | ((b[1] & 0xC0) >> 6))
        if data[12:16] == b"VP8X" and len(data) >= 30:
            return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                return None
            marker, length = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
            if marker in (0xC0, 0xC1, 0xC2):
                h, w = struct.unpack(">HH", data[i + 5:i + 9])
                return w, h
            i += 2 + length
    return None


def _schema_object(schema: Any) -> bool:
    return isinstance(schema, dict) and str(schema.get("type", "")).lower() == "object"


# OpenAI Chat Completions ------------------------------------------------------------------------------


def _check_openai(path: str, body: dict[str, Any], size: int) -> list[tuple[str, bool, str]]:
    messages = body.get("messages") or []
    roles, results, images, schema = [], [], [], []
    open_ids: set[str] = set()
    image_bytes = image_count = 0
    if path != "/v1/chat/completions":
        roles.append(f"posted to {path}")
    for n, m in enumerate(messages):
        role = m.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            roles.append(f"message {n}: role {role!r}")
        if role == "tool":
            if m.get("tool_call_id") not in open_ids:
                results.append(f"message {n}: tool result {m.get('tool_call_id')!r} answers no open tool call")
            open_ids.discard(m.get("tool_call_id"))
            continue
        if open_ids:
            results.append(f"message {n}: tool calls {sorted(open_ids)} have no result before a {role} message")
            open_ids.clear()
        if role == "assistant":
            open_ids = {c.get("id") for c in m.get("tool_calls") or []}
        content = m.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") != "image_url":
                continue
            if role != "user":
                images.append(f"message {n}: an image in a {role} message")
            url = (part.get("image_url") or {}).get("url", "")
            match = re.match(r"^data:image/(png|jpeg|webp|gif);base64,(.*)$", url, re.S)
            data = _b64(match.group(2)) if match else None
            if data is None:
                images.append(f"message {n}: image is not a base64 data URL of png/jpeg/webp/gif")
                continue
            if len(data) > 20 * MB:
                images.append(f"message {n}: image of {len(data)} bytes exceeds 20 MB")
            if (part["image_url"].get("detail") or "auto") not in ("low", "high", "auto"):
                images.append(f"message {n}: detail {part['image_url'].get('detail')!r}")
            image_bytes += len(data)
            image_count += 1
    if open_ids:
        results.append(f"tool calls {sorted(open_ids)} are never answered")
    if image_count > 500 or image_bytes > 50 * MB:
        images.append(f"{image_count} images, {image_bytes} bytes in one request (at most 500 and 50 MB)")
    names = set()
    for t in body.get("tools") or []:
        fn = t.get("function") or {}
        names.add(fn.get("name"))
        if t.get("type") != "function" or not NAME.match(str(fn.get("name", ""))) or not _schema_object(
                fn.get("parameters")):
            schema.append(f"tool {fn.get('name')!r}: not type function with a valid name and an object schema")
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and (choice.get("function") or {}).get("name") not in names:
        schema.append(f"tool_choice names {choice} which is not offered")
    elif choice is not None and not isinstance(choice, dict) and choice not in ("none", "auto", "required"):
        schema.append(f"tool_choice {choice!r}")
    return [_result("roles", roles), _result("tool results", results), _result("images", images),
            _result("tool schema", schema)]


# Anthropic Messages ---------------------------------------------------------------------------------------


def _check_anthropic(path: str, body: dict[str, Any], size: int) -> list[tuple[str, bool, str]]:
    messages = body.get("messages") or []
    roles, results, images, schema, tokens, cache = [], [], [], [], [], []
    if path != "/v1/messages":
        roles.append(f"posted to {path}")
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        tokens.append(f"max_tokens is {body.get('max_tokens')!r}; the Messages API requires it")
    if not messages or messages[0].get("role") != "user":
        roles.append("the first message is not a user message")
    previous = None
    pending: list[str] = []
    image_list: list[bytes] = []
    marks = 0
    system = body.get("system")
    for block in system if isinstance(system, list) else []:
        marks += "cache_control" in block
    for n, m in enumerate(messages):
        role = m.get("role")
        if role not in ("user", "assistant"):
            roles.append(f"message {n}: role {role!r} (system goes in the top-level system field)")
        if role == previous:
            roles.append(f"messages {n - 1} and {n}: two {role} messages in a row")
        previous = role
        blocks = m.get("content") if isinstance(m.get("content"), list) else [{"type": "text", "text": m.get("content")}]
        kinds = [b.get("type") for b in blocks]
        marks += sum("cache_control" in b for b in blocks)
        if pending:
            given = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            leading = kinds[:len(given)]
            if role != "user" or sorted(given) != sorted(pending):
                results.append(f"message {n}: tool_use {pending} not answered by tool_result in the next message")
            elif any(k != "tool_result" for k in leading):
                results.append(f"message {n}: tool_result blocks do not come first in the content")
        elif "tool_result" in kinds:
            results.append(f"message {n}: tool_result with no tool_use just before")
        pending = [b.get("id") for b in blocks if b.get("type") == "tool_use"] if role == "assistant" else []
        for b in blocks:
            if b.get("type") != "image":
                continue
            source = b.get("source") or {}
            data = _b64(source.get("data")) if source.get("type") == "base64" else None
            if data is None or source.get("media_type") not in ("image/jpeg", "image/png", "image/gif", "image/webp"):
                images.append(f"message {n}: image source is not base64 jpeg/png/gif/webp")
                continue
            if len(source["data"]) > 5 * MB:
                images.append(f"message {n}: image of {len(source['data'])} base64 bytes exceeds 5 MB")
            if role != "user":
                images.append(f"message {n}: an image in an {role} message")
            image_list.append(data)
    if pending:
        results.append(f"tool_use {pending} never answered")
    limit = 2000 if len(image_list) > 20 else 8000
    for data in image_list:
        dims = _image_size(data)
        if dims is None or max(dims) > limit:
            images.append(f"image of {dims} px (at most {limit} px a side with {len(image_list)} images)")
    if len(image_list) > 100:
        images.append(f"{len(image_list)} images in one request (at most 100)")
    for t in body.get("tools") or []:
        if not NAME.match(str(t.get("name", ""))) or not _schema_object(t.get("input_schema")):
            schema.append(f"tool {t.get('name')!r}: needs a valid name and an object input_schema")
    choice = body.get("tool_choice")
    if choice is not None and (choice.get("type") not in ("auto", "any", "tool", "none") or (
            choice.get("type") == "tool" and choice.get("name") not in {t.get("name") for t in body.get("tools") or []})):
        schema.append(f"tool_choice {choice}")
    if marks > 4:
        cache.append(f"{marks} cache_control breakpoints (at most 4)")
    if size > 32 * MB:
        images.append(f"request of {size} bytes exceeds 32 MB")
    return [_result("roles", roles), _result("tool results", results), _result("images", images),
            _result("tool schema", schema), _result("max_tokens", tokens), _result("cache marks", cache)]


# Gemini generateContent ---------------------------------------------------------------------------------


def _check_gemini(path: str, body: dict[str, Any], size: int) -> list[tuple[str, bool, str]]:
    contents = body.get("contents") or []
    roles, results, images, schema, sizes = [], [], [], [], []
    if not re.match(r"^/(v1beta/)?models/[^/:]+:generateContent", path):
        roles.append(f"posted to {path}")
    if not contents or contents[0].get("role") != "user":
        roles.append("the first content is not a user turn")
    calls_open: list[str] = []
    previous_kind = None
    for n, c in enumerate(contents):
        role = c.get("role")
        parts = c.get("parts") or []
        if role not in ("user", "model"):
            roles.append(f"content {n}: role {role!r} (system goes in systemInstruction)")
        if not parts:
            roles.append(f"content {n}: no parts")
        calls = [(p.get("functionCall") or p.get("function_call") or {}).get("name") for p in parts
                 if "functionCall" in p or "function_call" in p]
        responses = [(p.get("functionResponse") or p.get("function_response") or {}).get("name")
                     for p in parts if "functionResponse" in p or "function_response" in p]
        if calls_open:
            if sorted(responses) != sorted(calls_open):
                results.append(f"content {n}: {len(responses)} function responses for {len(calls_open)} calls")
        elif responses:
            results.append(f"content {n}: a function response with no function call just before")
        if calls and previous_kind not in ("user", "responses"):
            results.append(f"content {n}: a function call turn not right after a user or function response turn")
        calls_open = calls if role == "model" else []
        previous_kind = "responses" if responses else role
        for p in parts:
            inline = p.get("inlineData") or p.get("inline_data")
            if inline is None:
                continue
            mime = inline.get("mimeType") or inline.get("mime_type")
            if mime not in ("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif") or _b64(
                    inline.get("data")) is None:
                images.append(f"content {n}: inline data of {mime!r} is not a base64 image Gemini takes")
            if role != "user":
                images.append(f"content {n}: an image in a {role} turn")
    if calls_open:
        results.append(f"function calls {calls_open} never answered")
    if size > 20 * MB:
        sizes.append(f"request of {size} bytes exceeds the 20 MB inline-data limit")
    system = body.get("systemInstruction") or body.get("system_instruction")
    if system is not None and not (system.get("parts")):
        roles.append("systemInstruction has no parts")
    declared = []
    for tool in body.get("tools") or []:
        for fn in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            declared.append(fn.get("name"))
            if not GEMINI_NAME.match(str(fn.get("name", ""))) or not _schema_object(fn.get("parameters")):
                schema.append(f"function {fn.get('name')!r}: needs a valid name and object parameters")
            schema += [f"function {fn.get('name')!r}: {p}" for p in _gemini_schema(fn.get("parameters"), "parameters")]
    config = (body.get("toolConfig") or body.get("tool_config") or {})
    calling = config.get("functionCallingConfig") or config.get("function_calling_config") or {}
    allowed = calling.get("allowedFunctionNames") or calling.get("allowed_function_names") or []
    if calling and (str(calling.get("mode", "AUTO")).upper() not in ("AUTO", "ANY", "NONE", "VALIDATED")
                    or any(a not in declared for a in allowed)):
        schema.append(f"function calling config {calling}")
    return [_result("roles", roles), _result("tool results", results), _result("images", images),
            _result("tool schema", schema), _result("request size", sizes)]


def _gemini_schema(schema: Any, where: str) -> list[str]:
    """What Gemini's OpenAPI subset refuses in a function's parameters: an OBJECT with no properties
    ("should be non-empty for OBJECT type"), an enum of anything but strings, an array without items."""
    if not isinstance(schema, dict):
        return []
    kind = str(schema.get("type", "")).lower()
    problems = []
    if kind == "object" and not schema.get("properties"):
        problems.append(f"{where}.properties: should be non-empty for OBJECT type")
    if "enum" in schema and not all(isinstance(v, str) for v in schema["enum"]):
        problems.append(f"{where}.enum: only strings")
    if kind == "array" and not isinstance(schema.get("items"), dict):
        problems.append(f"{where}.items: missing field")
    for name, sub in (schema.get("properties") or {}).items():
        problems += _gemini_schema(sub, f"{where}.properties[{name}]")
    problems += _gemini_schema(schema.get("items"), f"{where}.items")
    return problems


# Ollama /api/chat -----------------------------------------------------------------------------------------


def _check_ollama(path: str, body: dict[str, Any], size: int) -> list[tuple[str, bool, str]]:
    messages = body.get("messages") or []
    roles, results, images, schema = [], [], [], []
    if path != "/api/chat":
        roles.append(f"posted to {path}")
    if body.get("stream") is not False:
        roles.append("stream is not false (the reply would be a stream of JSON lines)")
    open_calls = 0
    for n, m in enumerate(messages):
        role = m.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            roles.append(f"message {n}: role {role!r}")
        if not isinstance(m.get("content", ""), str):
            roles.append(f"message {n}: content is not a string")
        if role == "tool":
            if open_calls <= 0:
                results.append(f"message {n}: a tool message with no assistant tool call before it")
            open_calls -= 1
        else:
            if open_calls > 0:
                results.append(f"message {n}: {open_calls} tool calls with no tool message")
            open_calls = len(m.get("tool_calls") or []) if role == "assistant" else 0
        for image in m.get("images") or []:
            if not isinstance(image, str) or image.startswith("data:") or _b64(image) is None:
                images.append(f"message {n}: an image is not plain base64")
            elif _image_size(_b64(image) or b"") is None:
                images.append(f"message {n}: an image is not png/jpeg/webp")
    for t in body.get("tools") or []:
        fn = t.get("function") or {}
        if t.get("type") != "function" or not fn.get("name") or not _schema_object(fn.get("parameters")):
            schema.append(f"tool {fn.get('name')!r}: not type function with an object schema")
    return [_result("roles", roles), _result("tool results", results), _result("images", images),
            _result("tool schema", schema)]


# --- the scenario both tests/test_providers.py and bench/conformance.py play -----------------------

QUESTION = "What was revenue per employee in 2024?"


def full_question() -> list[Reply]:
    """Three searches, a show_pages and a cited answer: every request shape of a multi-step question.
    ``revenue AND 2024`` finds only the page holding both words (a plain query also shows the memo)."""
    return [search("revenue AND 2024"), search("headcount"), search("budget approval"),
            show([{"file": "report.pdf", "page": 1}]),
            answer(["62,500"], [{"file": "report.pdf", "page": 1}, {"file": "report.pdf", "page": 2}])]


def corpus_env(tmp: Any) -> tuple[Any, Any, Any]:
    """(corpus, settings, registry) of the two small PDFs the scenario's answer cites, under ``tmp``."""
    from pathlib import Path

    from madqa.corpus import Corpus
    from madqa.index import ingest
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings
    from tests.conftest import make_pdf

    tmp = Path(tmp)
    settings = Settings(home=tmp / "home")
    registry = collect(get_plugin_manager())
    root = tmp / "docs"
    # the scenario's answer (62,500 per employee) is written on page 1, as MADQA's extractive answers are:
    # checked on its pages, it needs no repair turn
    make_pdf(root / "report.pdf", ["Revenue in 2024 was 7.5 million euros, EUR 62,500 per employee.",
                                   "Headcount was 120 employees."])
    make_pdf(root / "memo.pdf", ["Memo: the board approved the budget on 3 May 2024."])
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir), settings, registry


def ask(env: tuple[Any, Any, Any], provider: FakeProvider, api_key: str = "sk-test-SECRET123",
        tools: tuple[str, ...] | None = None, max_steps_: int = 6, **backend: Any) -> dict[str, Any]:
    """The prediction row of ``QUESTION`` asked through litellm's real client against ``provider``
    (``max_steps_`` steps; ``backend``: the backend's options)."""
    from madqa.agent import Agent
    from madqa.settings import load_config
    from madqa.trace import Trace

    corpus, settings, registry = env
    options = {"api_base": provider.url, "retry_base_delay": 0.01, "retry_max_delay": 0.05, **backend}
    config = load_config("offline").with_overrides(backend="litellm", model=provider.model, max_steps=max_steps_,
                                                   tools=tools, options={"backend": options})
    agent = Agent(corpus, config, registry, settings, {"api_key": api_key})
    return Trace(QUESTION, config, "q").consume(agent.run(QUESTION)).row()
