"""A fake Hugging Face Hub and a fake document host on 127.0.0.1, for ``madqa dataset download``.

The Hub serves the routes huggingface_hub 2.x calls (repo info, tree, HEAD/GET resolve with
X-Repo-Commit, ETag and Content-Length, never X-Xet-Hash) and gates ``/resolve`` like the real one:
401 + ``X-Error-Code: GatedRepo`` without a token, 403 for a token whose account did not accept the
terms, a bare 401 for an unknown token. The document host serves PDFs with Range support and can be
told, per path, to time out, 404, 429 with Retry-After, cut the body mid-file, ignore Range or trickle.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

REPO = "OxRML/MADQA"
SHA = "a" * 40
GOOD, NO_ACCESS = "hf_accepted", "hf_not_accepted"


class _Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def send(self, code: int, body: bytes = b"", headers: dict[str, str] | None = None, head: bool = False) -> None:
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)


class Server:
    """A ThreadingHTTPServer on a free loopback port, run in a daemon thread; ``url`` is its base."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]  # a client that left
        self.httpd.owner = self  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class HubHandler(_Quiet):
    def do_HEAD(self) -> None:
        self.answer(head=True)

    def do_GET(self) -> None:
        self.answer(head=False)

    def answer(self, head: bool) -> None:
        hub: FakeHub = self.server.owner  # type: ignore[attr-defined]
        path = unquote(urlparse(self.path).path)
        token = (self.headers.get("authorization") or "").removeprefix("Bearer ").strip()
        hub.requests.append((self.command, path, dict(self.headers)))
        api = f"/api/datasets/{REPO}"
        if path in (api, f"{api}/revision/main", f"{api}/revision/{SHA}"):
            body = json.dumps({"id": REPO, "sha": SHA, "private": False, "gated": "auto",
                               "siblings": [{"rfilename": n} for n in hub.files]}).encode()
            return self.send(200, body, {"Content-Type": "application/json"}, head)
        if path.startswith(f"{api}/tree/"):
            entries = [{"type": "file", "path": n, "size": len(b), "oid": hashlib.sha1(b).hexdigest()}
                       for n, b in sorted(hub.files.items())]
            return self.send(200, json.dumps(entries).encode(), {"Content-Type": "application/json"}, head)
        prefix = f"/datasets/{REPO}/resolve/"
        if not path.startswith(prefix):
            return self.send(404, b'{"error":"not found"}', {"X-Error-Code": "RepoNotFound"}, head)
        name = path[len(prefix):].split("/", 1)[-1]
        if token not in (GOOD, NO_ACCESS, ""):
            return self.send(401, b'{"error":"Invalid credentials in Authorization header"}', {}, head)
        if token != GOOD:
            code = 403 if token else 401
            msg = json.dumps({"error": f"Access to dataset {REPO} is restricted. Visit the page to ask for access."})
            return self.send(code, msg.encode(), {"X-Error-Code": "GatedRepo", "X-Error-Message": "gated"}, head)
        if name not in hub.files:
            return self.send(404, b"", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": SHA}, head)
        body = hub.files[name]
        etag = '"' + hashlib.sha1(body).hexdigest() + '"'
        self.send(200, body, {"X-Repo-Commit": SHA, "ETag": etag, "Content-Type": "application/octet-stream"}, head)


class FakeHub(Server):
    """``files``: repo path -> bytes (Parquet built by the test)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        super().__init__(HubHandler)
        self.files = files


class DocHandler(_Quiet):
    def do_GET(self) -> None:
        host: FakeDocHost = self.server.owner  # type: ignore[attr-defined]
        path = urlparse(self.path).path
        rng = self.headers.get("Range")
        with host.lock:
            host.requests.append((self.command, path, dict(self.headers)))
            host.times.setdefault(path, []).append(time.monotonic())
            count = host.count[path] = host.count.get(path, 0) + 1
        behaviour = host.behaviour.get(path, "")
        body = host.docs.get(path)
        if body is None or behaviour == "404":
            return self.send(404, b"<html>not here</html>", {"Content-Type": "text/html"})
        if behaviour == "html":
            return self.send(200, b"<html>please log in</html>", {"Content-Type": "text/html"})
        if behaviour == "429" and count == 1:
            return self.send(429, b"slow down", {"Retry-After": "1"})
        if behaviour == "500-always":
            return self.send(500, b"broken")
        if behaviour == "timeout" and count == 1:
            time.sleep(host.stall)
            return self.send(200, body, {"Content-Type": "application/pdf"})
        start = int(rng.split("=")[1].split("-")[0]) if rng and behaviour != "ignore-range" else 0
        if behaviour == "ignore-range" and count == 1:
            return self.cut(body, 0)
        chunk = body[start:]
        code = 206 if start else 200
        headers = {"Content-Type": "application/pdf", "Accept-Ranges": "bytes", "Content-Length": str(len(chunk))}
        if start:
            headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
        if behaviour == "cut" and count == 1:
            return self.cut(body, 0)
        self.send_response(code)
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        stream = io.BytesIO(chunk)
        while piece := stream.read(host.trickle_size if behaviour == "trickle" else 1 << 20):
            self.wfile.write(piece)
            self.wfile.flush()
            if behaviour == "trickle":
                time.sleep(host.trickle_pause)

    def cut(self, body: bytes, start: int) -> None:
        """Promise the whole body, send half of it, hang up."""
        self.send_response(200)
        self.send_header("Content-Type", "application/pdf")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(2)


class FakeDocHost(Server):
    """``docs``: path -> PDF bytes; ``behaviour``: path -> 404 | html | 429 | 500-always | timeout |
    cut | ignore-range | trickle (the misbehaviours that apply to the first request only say so in code)."""

    def __init__(self, docs: dict[str, bytes], behaviour: dict[str, str] | None = None, stall: float = 1.0) -> None:
        super().__init__(DocHandler)
        self.docs = docs
        self.behaviour = behaviour or {}
        self.stall = stall
        self.trickle_size, self.trickle_pause = 4096, 0.05
        self.lock = threading.Lock()
        self.count: dict[str, int] = {}
        self.times: dict[str, list[float]] = {}

    def ranges(self, path: str) -> list[str | None]:
        return [h.get("Range") for _, p, h in self.requests if p == path]
