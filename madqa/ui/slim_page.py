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
DEFERRED_CLASS = "madqa-deferred-tab"  # madqa.ui.lazy marks the tabs whose contents are sent when first opened
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
        drop_deferred_tabs(config)
    except (ValueError, KeyError, TypeError, AttributeError):
        return raw
    text = json.dumps(config, ensure_ascii=False, separators=(",", ":"))
    # the escaping of Gradio's own ``toorjson``: the JSON can never close the script or start a comment
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("'", "\\u0027")
    return text.encode("utf-8")


def drop_deferred_tabs(config: dict[str, Any]) -> None:
    """Leave the contents of tabs marked ``DEFERRED_CLASS`` out of ``config`` (in place): their layout subtrees and
    their components. The browser then builds its tree of the first tab alone; ``madqa.ui.lazy.send_when_opened``
    sends a tab's subtree when it is first opened. Events stay: they are triggered only from what is drawn."""
    by_id = {c["id"]: c for c in config["components"]}
    left_out: set[int] = set()

    def below(node: dict[str, Any]) -> None:
        for child in node.get("children") or []:
            left_out.add(child["id"])
            below(child)

    def prune(node: dict[str, Any]) -> None:
        props = by_id.get(node["id"], {}).get("props", {})
        if DEFERRED_CLASS in (props.get("elem_classes") or []):
            below(node)
            node["children"] = []
            return
        for child in node.get("children") or []:
            prune(child)

    for layout in (config.get("layout"), *(page.get("layout") for page in (config.get("page") or {}).values())):
        if layout:  # the frontend draws a page's own copy of the layout
            prune(layout)
    if not left_out:
        return
    config["components"] = [c for c in config["components"] if c["id"] not in left_out]
    for page in (config.get("page") or {}).values():
        page["components"] = [i for i in page["components"] if i not in left_out]


def page_key(scope: MutableMapping[str, Any]) -> tuple[Any, ...]:
    """What Gradio's page depends on besides the app's config: the path and query (page, deep link) and what it
    derives the page's root URL from (host, forwarding headers, root path)."""
    headers = tuple(sorted((k.lower(), v) for k, v in scope.get("headers") or []
                           if k.lower() == b"host" or k.lower().startswith(b"x-forwarded-")))
    return (scope.get("path"), scope.get("query_string"), scope.get("root_path"), scope.get("scheme"), headers)


class SlimPage:
    """ASGI middleware: an uncompressed ``text/html`` answer to a GET of a page (not an API route, not a file) is
    buffered and passed through ``slim_page``, its content-length fixed; everything else streams through as it comes.

    With ``cache_pages`` (an app without logins: its page is the same for every visitor), the finished page is kept
    per ``page_key`` and served again without asking Gradio, which deep-copies and walks its whole config for every
    page request (60-120 ms here, far more while the demo corpus is indexed beside it)."""

    def __init__(self, app: Callable[..., Awaitable[None]], cache_pages: bool = False) -> None:
        self.app = app
        self.cache_pages = cache_pages
        self.pages: dict[tuple[Any, ...], tuple[Message, bytes]] = {}

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        path = str(scope.get("path", ""))
        if scope.get("type") != "http" or scope.get("method") != "GET" or "/gradio_api/" in path or "file=" in path:
            # the page is served at the root; API answers and files (a stored HTML file too) stream as they are
            await self.app(scope, receive, send)
            return
        key = page_key(scope) if self.cache_pages else None
        if key is not None and key in self.pages:
            start, body = self.pages[key]
            await send(start)
            await send({"type": "http.response.body", "body": body})
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
                kept = [(k, v) for k, v in start.get("headers") or [] if k.lower() != b"content-length"]
                start = {**start, "headers": [*kept, (b"content-length", str(len(body)).encode())]}
                if key is not None and start.get("status") == 200 and not any(k.lower() == b"set-cookie"
                                                                                for k, _ in kept):
                    if len(self.pages) >= CACHED:  # forwarded hosts are the client's to choose: keep a few
                        self.pages.pop(next(iter(self.pages)))
                    self.pages[key] = (start, body)
                await send(start)
                await send({"type": "http.response.body", "body": body})
                return
            await send(message)

        await self.app(scope, receive, rewrite)
