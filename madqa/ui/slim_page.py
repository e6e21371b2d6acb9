"""The app's page without the API schemas Gradio writes into it for every component.

Gradio embeds its whole config in the page (``window.gradio_config``), and with each component the
JSON schema of its API three times over (``api_info``, ``api_info_as_input``, ``api_info_as_output``)
and ``example_inputs``: here about 150 KB of a 400 KB page, parsed and copied before the first paint,
and never read by the page's scripts (the "Use via API" page and the clients read the endpoints'
schemas from ``window.gradio_api_info`` and ``/gradio_api/info``, which stay as they are). ``SlimPage``
drops those four keys from the config inside HTML responses; every other response passes untouched.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

MARK = b"window.gradio_config = "
END = b";</script>"  # Gradio escapes "<" inside the JSON, so this cannot occur within it
UNREAD_KEYS = ("api_info", "api_info_as_input", "api_info_as_output", "example_inputs")
Message = MutableMapping[str, Any]
CACHED = 8  # slimmed configs kept: one per root URL the page is served under, in practice one or two
_slimmed: dict[bytes, bytes] = {}


def slim_page(html: bytes) -> bytes:
    """``html`` with the unread per-component API schemas dropped from its Gradio config; unchanged when it
    carries no config or one this code cannot read (a Gradio upgrade must not break the page)."""
    start = html.find(MARK)
    if start < 0:
        return html
    start += len(MARK)
    end = html.find(END, start)
    if end < 0:
        return html
    key = hashlib.blake2b(html[start:end], digest_size=16).digest()  # the same config is slimmed once
    if key not in _slimmed:
        if len(_slimmed) >= CACHED:
            _slimmed.pop(next(iter(_slimmed)))
        _slimmed[key] = slim_config(html[start:end])
    return html[:start] + _slimmed[key] + html[end:]


def slim_config(raw: bytes) -> bytes:
    """The config JSON ``raw`` without ``UNREAD_KEYS`` in its components, escaped for a script element;
    ``raw`` itself when it is not a config this code can read."""
    try:
        config = json.loads(raw)
        components = config["components"]
        for component in components:
            for key in UNREAD_KEYS:
                component.pop(key, None)
    except (ValueError, KeyError, TypeError, AttributeError):
        return raw
    text = json.dumps(config, ensure_ascii=False, separators=(",", ":"))
    # the escaping of Gradio's own ``toorjson``: the JSON can never close the script or start a comment
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("'", "\\u0027")
    return text.encode("utf-8")


class SlimPage:
    """ASGI middleware: an uncompressed ``text/html`` answer to a GET of a page (not an API route, not a file) is
    buffered and passed through
    ``slim_page``, its content-length fixed; everything else streams through as it comes."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        path = str(scope.get("path", ""))
        if scope.get("type") != "http" or scope.get("method") != "GET" or "/gradio_api/" in path or "file=" in path:
            # the page is served at the root; API answers and files (a stored HTML file too) stream as they are
            await self.app(scope, receive, send)
            return
        held: list[Message] = []  # the response start of an HTML page, sent with its rewritten body
        chunks: list[bytes] = []

        async def rewrite(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers") or []}
                if headers.get(b"content-type", b"").startswith(b"text/html") and b"content-encoding" not in headers:
                    held.append(message)
                    return
            elif message["type"] == "http.response.body" and held:
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                body = slim_page(b"".join(chunks))
                start = held[0]
                headers = [(k, v) for k, v in start.get("headers") or [] if k.lower() != b"content-length"]
                await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
            await send(message)

        await self.app(scope, receive, rewrite)
