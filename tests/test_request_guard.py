"""The request guard's answers (issue 25, item 7): a refused event in the JSON Gradio's page reads, with the wait;
and each new forwarded chain logged once, so a Space's owner can tell how many proxies stand in front."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from madqa.settings import Settings
from madqa.ui.limits import Limits, ProxyLog, RequestGuard


def limits(tmp_path: Path, **kw: object) -> Limits:
    return Limits(Settings.from_env(env={}, home=tmp_path / "home", **kw), [tmp_path / "uploads"])


def post(guard: RequestGuard, path: str, forwarded: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """One POST through the guard; (status, headers, body) of its answer (the app behind answers 200 ``ok``)."""
    sent: list[dict[str, Any]] = []
    headers = [(b"content-length", b"2")] + ([(b"x-forwarded-for", forwarded.encode())] if forwarded else [])
    scope = {"type": "http", "method": "POST", "path": path, "headers": headers, "client": ("10.0.0.7", 5000)}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    call = guard(scope, receive, send)  # it awaits only the callables above: run without an event loop
    try:
        call.send(None)
    except StopIteration:
        pass
    else:
        raise AssertionError("the guard waited for something else")
    start, body = sent[0], sent[1]
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body["body"]


async def ok(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


def test_a_refused_event_says_when_to_try_again_in_json(tmp_path: Path) -> None:
    """The page showed "Could not parse server response: SyntaxError: Unexpected token 'o'" for a plain 429."""
    guard = RequestGuard(ok, limits(tmp_path, web_requests_per_minute=2))
    assert [post(guard, "/gradio_api/queue/join")[0] for _ in range(2)] == [200, 200]
    status, headers, body = post(guard, "/gradio_api/queue/join")
    detail = json.loads(body)["detail"]  # what Gradio's page shows of a refused event: e.detail
    assert status == 429 and headers["content-type"] == "application/json"
    assert detail.startswith("too many requests: try again in ") and " s " in detail
    wait = int(detail.split("try again in ")[1].split(" s")[0])
    assert 1 <= wait <= 60 and headers["retry-after"] == str(wait)


def test_a_refused_upload_stays_plain_text(tmp_path: Path) -> None:
    """Gradio's upload shows "HTTP 507: <body>": the reason itself, not JSON around it."""
    guard = RequestGuard(ok, limits(tmp_path, upload_quota_mb=1))
    (tmp_path / "uploads").mkdir()
    (tmp_path / "uploads" / "big.bin").write_bytes(b"x" * 2**20)
    status, headers, body = post(guard, "/gradio_api/upload")
    assert status == 507 and headers["content-type"].startswith("text/plain") and b"upload space" in body


def test_each_new_forwarded_chain_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    proxies = ProxyLog(proxy_hops=0, most=2)
    with caplog.at_level(logging.INFO, logger="madqa.ui"):
        proxies.heard("10.16.3.80", "203.0.113.5, 10.0.0.1")
        proxies.heard("10.16.3.80", "203.0.113.5, 10.0.0.1")  # the same visitor again: not logged again
        proxies.heard("10.16.3.80", None)  # no chain: nothing to say
        proxies.heard("10.16.3.80", "198.51.100.9, 10.0.0.1")
        proxies.heard("10.16.3.80", "192.0.2.1, 10.0.0.1")  # past the most logged
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and "(2 entries)" in lines[0] and "MADQA_PROXY_HOPS=0 it counts as 10.16.3.80" in lines[0]
    assert "the last chain logged" in lines[1]
