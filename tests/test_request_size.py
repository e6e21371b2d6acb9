"""A cap on what one request carries (issue 39, item 4): a 20 MB chat turn cost 41 s of server work and was
echoed back in full. The guard refuses an event body over ``MAX_EVENT_MB`` before Gradio reads it; Ask refuses
a history past its message count, one message's size or the total before any work."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from madqa.ui import request_size
from madqa.ui.limits import RequestGuard
from madqa.ui.request_size import MAX_EVENT_MB, MAX_HISTORY_MESSAGES, MAX_MESSAGE_CHARS, history_refusal
from tests.test_app_security import app, client, endpoint  # noqa: F401 - the launched app, as a fixture
from tests.test_request_guard import limits, ok


def turn(text: str, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}  # as Gradio 6's Chatbot takes it


def test_a_real_chat_passes_and_each_cap_refuses_with_its_reason(monkeypatch):
    chat = [turn("How many capybaras?"), turn("412 [facts.pdf p. 1]", "assistant")] * 20
    assert history_refusal(chat) is None and history_refusal([]) is None and history_refusal(None) is None
    said = history_refusal([turn("x")] * (MAX_HISTORY_MESSAGES + 1))
    assert said and f"at most {MAX_HISTORY_MESSAGES:,} messages" in said
    said = history_refusal([turn("x" * MAX_MESSAGE_CHARS)])
    assert said and said.startswith("Message 1 of the chat has") and f"at most {MAX_MESSAGE_CHARS:,}" in said
    monkeypatch.setattr(request_size, "MAX_HISTORY_CHARS", 1_000)
    said = history_refusal([turn("y" * 400)] * 3)
    assert said and "more than 1,000 characters together" in said
    assert history_refusal("not a list") == "The chat history must be a list of messages."


def send_body(guard: RequestGuard, length: str | None, chunks: list[bytes]) -> tuple[list[dict[str, Any]],
                                                                                     list[dict[str, Any]]]:
    """One event POST through the guard; (what it sent, what the app behind it received)."""
    sent: list[dict[str, Any]] = []
    received: list[dict[str, Any]] = []
    headers = [(b"content-length", length.encode())] if length is not None else []
    scope = {"type": "http", "method": "POST", "path": "/gradio_api/queue/join", "headers": headers,
             "client": ("10.0.0.7", 5000)}
    queue = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]

    async def receive() -> dict[str, Any]:
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def app_behind(scope: Any, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        await ok(scope, receive, send)

    call = RequestGuard(app_behind, limits_of(guard))(scope, receive, send)
    try:
        call.send(None)
    except StopIteration:
        pass
    return sent, received


def limits_of(guard: RequestGuard) -> Any:
    return guard.limits


def test_the_guard_refuses_an_oversized_event_before_the_app_reads_it(tmp_path):
    guard = RequestGuard(ok, limits(tmp_path))
    sent, received = send_body(guard, str(MAX_EVENT_MB * 2**20 + 1), [b"{}"])
    assert sent[0]["status"] == 413 and not received
    assert f"over {MAX_EVENT_MB} MB" in json.loads(sent[1]["body"])["detail"]
    sent, received = send_body(guard, "2", [b"{}"])
    assert sent[0]["status"] == 200 and received[0]["body"] == b"{}"
    # no Content-Length (chunked): cut off as a disconnect once past the cap, never read whole
    chunk = b"x" * 2**20
    sent, received = send_body(guard, None, [chunk] * (MAX_EVENT_MB + 2))
    assert len(received) == MAX_EVENT_MB + 1 and received[-1] == {"type": "http.disconnect"}


@pytest.mark.slow
def test_an_oversized_history_is_refused_through_the_api(app):  # noqa: F811 - the fixture
    from gradio_client.exceptions import AppError

    big = [turn("Tell me about capybaras?"), turn("z" * MAX_MESSAGE_CHARS, "assistant")]
    with pytest.raises(AppError, match="Message 2 of the chat has 100,0[0-9][0-9] characters"):
        client(app).predict(question="Hi?", history=big, backend="offline", api_name="/ask")
    many = [turn(f"q{i}?") for i in range(MAX_HISTORY_MESSAGES + 1)]
    with pytest.raises(AppError, match="at most 1,000 messages"):
        client(app).predict(question="Hi?", history=many, backend="offline", api_name="/ask")
    # a 20 MB turn, as the red team sent: refused at the door, before Gradio parses it
    fn_index, trigger = endpoint(app, "ask")
    body = json.dumps({"data": ["Hi?", [turn("w" * 20 * 2**20)]], "fn_index": fn_index, "trigger_id": trigger,
                       "session_hash": "sizecheck01"})
    answer = httpx.post(app.url + "gradio_api/queue/join", content=body,
                        headers={"content-type": "application/json"}, timeout=30)
    assert answer.status_code == 413 and f"over {MAX_EVENT_MB} MB" in answer.json()["detail"]
