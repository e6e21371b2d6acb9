"""A fake OpenAI-compatible model provider on 127.0.0.1, for the web app's tests.

It answers ``/v1/chat/completions`` from a list of replies, records every request's
``Authorization`` header and body, and, with no reply left, rejects the key and echoes it (as
OpenAI does). ``hang`` makes it accept requests and never answer (a provider that hangs).
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A chat completion whose message calls ``tool`` with ``arguments``."""
    call = {"id": f"call_{uuid.uuid4().hex[:6]}", "type": "function",
            "function": {"name": tool, "arguments": json.dumps(arguments)}}
    return {"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": "local-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                         "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def text_completion(text: str, tokens: int = 15) -> dict[str, Any]:
    """A chat completion whose message is plain text."""
    return {"id": "cmpl-2", "object": "chat.completion", "created": 0, "model": "local-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": tokens - 5, "completion_tokens": 5, "total_tokens": tokens}}


class Provider:
    """The fake provider; ``url`` is its ``api_base``."""

    def __init__(self) -> None:
        self.replies: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.hang = threading.Event()  # set: requests are read, never answered
        self.release = threading.Event()  # set at close: hanging handlers return
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                with provider.lock:
                    provider.auth.append(key)
                    try:
                        provider.bodies.append(json.loads(raw or b"{}"))
                    except ValueError:
                        provider.bodies.append({})
                    reply = None if provider.hang.is_set() else (provider.replies.pop(0) if provider.replies else None)
                if provider.hang.is_set():
                    provider.release.wait(120)
                    return
                status, body = (200, reply) if reply else (401, {"error": {
                    "message": f"Incorrect API key provided: {key}.", "type": "invalid_request_error",
                    "code": "invalid_api_key"}})
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, *replies: dict[str, Any]) -> None:
        with self.lock:
            self.replies[:] = list(replies)

    def requests(self) -> int:
        with self.lock:
            return len(self.auth)

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
