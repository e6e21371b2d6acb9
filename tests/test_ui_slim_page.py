"""The app's page carries no per-component API schemas (``madqa.ui.slim_page``): the browser never reads
them, and the endpoints' schemas stay where clients and the "Use via API" page read them.

The page as a visitor's browser uses it (the API page, every tab) is in test_ui_visitor.py.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from madqa.settings import Settings
from madqa.ui import build_app
from madqa.ui.slim_page import DEFERRED_CLASS, UNREAD_KEYS, SlimPage, slim_page
from tests.browser_support import GRADIO_QUIRKS, close_app, served

pytestmark = GRADIO_QUIRKS
CONFIG = re.compile(rb"window\.gradio_config = (.*?);</script>", re.S)


def page_of(config: dict, escape: bool = True) -> bytes:
    text = json.dumps(config)
    if escape:  # as Gradio's toorjson writes it
        text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("'", "\\u0027")
    return f"<html><script>window.gradio_config = {text};</script><p>after</p></html>".encode()


def test_the_unread_schemas_go_and_everything_else_stays() -> None:
    component = {"id": 3, "type": "textbox", "props": {"label": "</script><script>window.x=1</script> & 'q'"},
                 "api_info": {"type": "string"}, "api_info_as_input": {"type": "string"},
                 "api_info_as_output": {"type": "string"}, "example_inputs": "Hello!!"}
    config = {"components": [component, {"id": 4, "type": "row", "props": {}}], "dependencies": [{"id": 0}]}
    slimmed = slim_page(page_of(config))
    assert slimmed.endswith(b";</script><p>after</p></html>") and slimmed.count(b"</script>") == 1  # still inert
    kept = json.loads(CONFIG.search(slimmed).group(1))
    assert kept["components"][0] == {"id": 3, "type": "textbox", "props": component["props"]}
    assert kept["components"][1] == config["components"][1] and kept["dependencies"] == config["dependencies"]


def test_pages_without_a_readable_config_pass_unchanged() -> None:
    for html in (b"<html><p>no config here</p></html>", b"<script>window.gradio_config = {broken;</script>",
                 b"<script>window.gradio_config = {\"components\": 3};</script>",
                 b"<script>window.gradio_config = {\"components\": []}"):  # never closed
        assert slim_page(html) == html


def test_the_served_page_is_slim_and_the_api_schemas_stay(tmp_path: Path) -> None:
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    with served(settings) as url:
        page = httpx.get(url, timeout=30)
        full = httpx.get(url + "config", timeout=30).json()  # what gradio_client reads: untouched
        info = httpx.get(url + "gradio_api/info", timeout=30).json()
    assert page.status_code == 200 and int(page.headers["content-length"]) == len(page.content)
    shown = json.loads(CONFIG.search(page.content).group(1))
    assert not [c["id"] for c in shown["components"] if set(UNREAD_KEYS) & set(c)]
    by_id = {f["id"]: f for f in full["components"]}
    assert all(c["props"] == by_id[c["id"]]["props"] for c in shown["components"])
    assert shown["dependencies"] == full["dependencies"]
    # the tabs not opened yet are their buttons alone: their contents come on the first opening
    deferred = [c for c in shown["components"] if DEFERRED_CLASS in (c["props"].get("elem_classes") or [])]
    assert [c["props"]["label"] for c in deferred if c["type"] == "tabitem"] == [
        "Compare", "Corpus", "Evaluate", "You search", "Plugins"]
    assert {c["props"].get("elem_id") for c in deferred if c["type"] == "column"} >= {"ask-hints"}  # sent on load
    assert all(tab_node(shown["layout"], c["id"])["children"] == [] for c in deferred)
    assert all(tab_node(full["layout"], c["id"])["children"] for c in deferred)
    assert len(shown["components"]) < len(full["components"]) / 2
    assert any("api_info" in c for c in full["components"])
    assert "question" in {p["parameter_name"] for p in info["named_endpoints"]["/ask"]["parameters"]}
    assert b"window.gradio_api_info = " in page.content  # the "Use via API" page's schemas stay in the page
    assert len(page.content) < 0.8 * len(json.dumps(full))  # a fifth or more of the page was those schemas


def tab_node(layout: dict, node_id: int) -> dict:
    """The layout node ``node_id`` (KeyError when absent)."""
    if layout["id"] == node_id:
        return layout
    for child in layout.get("children", []):
        try:
            return tab_node(child, node_id)
        except KeyError:
            continue
    raise KeyError(node_id)


def test_the_config_copies_in_one_pass(tmp_path: Path, registry) -> None:
    """Gradio deep-copies the config for every page request; a value that cannot be copied (a bound method
    holding a lock) makes it start again item by item, about twice the time."""
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    app = build_app(settings, registry)
    try:
        config = app.get_config_file()
        copy.deepcopy(config["components"])  # raises TypeError (cannot pickle '_thread.lock') if one holds a lock
    finally:
        close_app(app)
        gc.collect()


def test_the_middleware_slims_pages_only() -> None:
    """A page sent in pieces is rewritten whole with its length; a file or API answer, HTML or not, is not."""
    html = page_of({"components": [{"id": 1, "type": "textbox", "props": {}, "api_info": {"type": "string"}}]})

    async def gradio(scope: dict, receive: object, send: object) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", b"%d" % len(html))]})
        await send({"type": "http.response.body", "body": html[:40], "more_body": True})
        await send({"type": "http.response.body", "body": html[40:]})

    def get(path: str) -> tuple[dict, bytes]:
        sent: list[dict] = []

        async def send(message: dict) -> None:
            sent.append(message)

        # in a thread of its own: the main thread may hold a running loop (Playwright's sync API, left by an
        # earlier browser test in the same session), and asyncio.run there would also drop the loop Gradio set
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, SlimPage(gradio)({"type": "http", "method": "GET", "path": path}, None, send)).result()
        return dict(sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:])

    headers, body = get("/")
    assert b"api_info" not in body and b'"textbox"' in body and headers[b"content-length"] == b"%d" % len(body)
    for path in ("/gradio_api/file=/tmp/x.html", "/gradio_api/info"):
        assert get(path)[1] == html


def test_a_page_is_made_once_per_root_url_when_cached() -> None:
    """With ``cache_pages`` Gradio makes the page once per path, query and root URL (host and forwarding headers);
    another host or path asks Gradio again, and without ``cache_pages`` every request does."""
    calls: list[str] = []

    async def gradio(scope: dict, receive: object, send: object) -> None:
        host = dict(scope["headers"]).get(b"x-forwarded-host", b"local").decode()
        calls.append(host)
        html = page_of({"components": [], "root": f"http://{host}"})
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": html})

    def get(middleware: SlimPage, path: str = "/", host: bytes | None = None) -> bytes:
        sent: list[dict] = []

        async def send(message: dict) -> None:
            sent.append(message)

        headers = [(b"host", b"127.0.0.1:7860")] + ([(b"x-forwarded-host", host)] if host else [])
        scope = {"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": headers}
        with ThreadPoolExecutor(1) as pool:  # see test_the_middleware_slims_pages_only
            pool.submit(asyncio.run, middleware(scope, None, send)).result()
        assert sent[0]["status"] == 200
        return b"".join(m.get("body", b"") for m in sent[1:])

    cached = SlimPage(gradio, cache_pages=True)
    first = get(cached)
    assert get(cached) == first and calls == ["local"]
    assert b"example.org" in get(cached, host=b"example.org") and calls == ["local", "example.org"]
    get(cached, path="/other")
    assert len(calls) == 3
    plain = SlimPage(gradio)
    get(plain), get(plain)
    assert len(calls) == 5
