"""How much one visitor of the public web app may take: jobs at once, requests a minute, model calls,
tokens and dollars on the server's keys, upload bytes an hour, and the uploads' share of the disk.

A visitor is counted twice, by browser session and by client address (``X-Forwarded-For`` behind
``MADQA_PROXY_HOPS`` trusted proxies), since a raw HTTP client can make a new session per request.
``RequestGuard`` applies the request and upload limits before Gradio reads a body; the handlers ask
``Limits`` for a job slot and for the visitor's budgets on the server's keys (``madqa.budget`` budgets,
handed to ``Agent.run``: a spent one forces the answer, never an error mid-question). All numbers come from ``madqa.settings`` (see the README).

How many proxies stand in front of a Hugging Face Space is not documented (its docs say nothing of the
``X-Forwarded-For`` chain it sends), so ``MADQA_PROXY_HOPS`` stays 0 there too, and the guard logs each new
forwarded chain once (``ProxyLog``): the owner reads how many entries the Space's proxies add and sets it.
A refused event is answered in the JSON Gradio's page reads (``{"detail": ...}``), so the page shows the
reason ("too many requests: try again in 40 s") instead of a parse error.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import shutil
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from madqa.budget import Budget
from madqa.errors import MadqaError, SettingsError
from madqa.protocols import retriever_indexing
from madqa.settings import PipelineConfig, Settings
from madqa.types import Step
from madqa.ui.policy import Refused
from madqa.ui.request_size import MAX_EVENT_MB

log = logging.getLogger("madqa.ui")
DAY_S = 86_400.0
USAGE_CACHE_S = 5.0  # how long a measured size of the upload folders is trusted


def client_address(host: str | None, forwarded_for: str | None, proxy_hops: int) -> str:
    """The client's address: the socket's peer, or with ``proxy_hops`` trusted proxies in front, the
    address the outermost of them saw (entries further left can be forged by the client)."""
    if proxy_hops > 0 and forwarded_for:
        hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
        if hops:
            return hops[-min(proxy_hops, len(hops))]
    return host or "unknown"


def request_address(request: Any, proxy_hops: int) -> str:
    """``client_address`` of a gr.Request (None: a call made inside the server)."""
    if request is None:
        return "local"
    client = getattr(request, "client", None)
    headers = getattr(request, "headers", None) or {}
    return client_address(getattr(client, "host", None), headers.get("x-forwarded-for"), proxy_hops)


@dataclass
class ServerKeyBudget(Budget):
    """One visitor's day on the server's keys (per browser session or per client address): a ``Budget`` the
    web app hands ``Agent.run``, so a spent one forces the answer instead of stopping the question. A setting of 0
    means no limit (``Limits.budgets`` passes None); to give visitors nothing on the server's keys, set no keys
    (or ``MADQA_WEB_PROVIDERS=``)."""

    who: str = "you"
    since: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        for key in ("max_tokens", "max_calls", "max_cost_usd"):
            if getattr(self, key) is not None and getattr(self, key) < 0:
                raise SettingsError(f"web budget {key} cannot be negative")

    def _said(self, reason: str | None) -> str | None:
        return None if reason is None else (f"{reason} (the budget on the server's keys for {self.who} today; "
                                            "give your own API key to go on)")

    @property
    def answer_due(self) -> str | None:
        return self._said(super().answer_due)

    @property
    def exhausted(self) -> str | None:
        return self._said(super().exhausted)


class Limits:
    """The per-visitor limits of one running web app (thread-safe)."""

    def __init__(self, settings: Settings, upload_dirs: Iterable[Path]) -> None:
        self.settings = settings
        self.upload_dirs = [Path(d) for d in upload_dirs]
        self._lock = threading.Lock()
        self._jobs: dict[str, int] = {}
        self._requests: dict[str, deque[float]] = {}
        self._uploaded: dict[str, deque[tuple[float, int]]] = {}
        self._budgets: dict[str, ServerKeyBudget] = {}
        self._usage: tuple[float, int] = (0.0, 0)

    # --- jobs at once ------------------------------------------------------------------------------

    @contextmanager
    def job(self, session: str | None, client: str) -> Iterator[None]:
        """Hold a job slot of ``session`` and ``client`` while the block runs; Refused when either has
        its most jobs running already."""
        keys = [(f"client:{client}", self.settings.web_jobs_per_client)]
        if session:
            keys.append((f"session:{session}", self.settings.web_jobs_per_session))
        with self._lock:
            for key, most in keys:
                if self._jobs.get(key, 0) >= most:
                    who = "this browser session" if key.startswith("session:") else "your address"
                    raise Refused(f"{who} already has {most} questions or evaluations running; wait for one "
                                  "to finish (or stop it) and try again")
            for key, _ in keys:
                self._jobs[key] = self._jobs.get(key, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                for key, _ in keys:
                    self._jobs[key] -= 1
                    if not self._jobs[key]:
                        del self._jobs[key]

    # --- requests a minute -------------------------------------------------------------------------

    def allow_request(self, client: str, now: float | None = None) -> bool:
        """Count one queued request of ``client``; False when it made its most this minute."""
        now = time.monotonic() if now is None else now
        with self._lock:
            times = self._requests.setdefault(client, deque())
            while times and now - times[0] > 60.0:
                times.popleft()
            if len(times) >= self.settings.web_requests_per_minute:
                return False
            times.append(now)
            if len(self._requests) > 10_000:  # forget idle clients
                for key in [k for k, v in self._requests.items() if not v or now - v[-1] > 60.0]:
                    del self._requests[key]
            return True

    def request_wait(self, client: str, now: float | None = None) -> int:
        """Whole seconds until ``client`` may start another queued request (1 at least; 0 when it may now)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            times = self._requests.get(client)
            if not times or len(times) < self.settings.web_requests_per_minute:
                return 0
            return max(1, math.ceil(60.0 - (now - times[0])))

    # --- model budgets on the server's keys ----------------------------------------------------------

    def budgets(self, keys: Iterable[str]) -> list[Budget]:
        """The visitor's budgets on the server's keys today, one per key (``client:...``, ``session:...``), for
        ``Agent.run(budget=...)``: shared by every question of that visitor, renewed after a day."""
        s, now = self.settings, time.monotonic()
        with self._lock:
            out: list[Budget] = []
            for key in keys:
                budget = self._budgets.get(key)
                if budget is None or now - budget.since > DAY_S:
                    who = "this browser session" if key.startswith("session:") else "your address"
                    budget = self._budgets[key] = ServerKeyBudget(
                        max_calls=s.web_calls_budget or None, max_tokens=s.web_tokens_budget or None,  # 0: no limit
                        max_cost_usd=s.web_cost_budget_usd or None, name="daily", who=who, since=now)
                out.append(budget)
            return out

    def refuse_if_spent(self, keys: Iterable[str]) -> None:
        """Refused when a visitor (any of ``keys``) has nothing left on the server's keys today: an evaluation
        is not started only to end every question with no model call made."""
        for budget in self.budgets(keys):
            if budget.exhausted:
                raise Refused(budget.exhausted)

    def timed(self, steps: Iterable[Step], started: float | None = None) -> Iterator[Step]:
        """``steps``, stopped with Refused when the question runs longer than ``web_question_timeout_s``.
        (What a question may spend is a budget, passed to ``Agent.run``: spent, it forces the answer.)"""
        started = time.monotonic() if started is None else started
        for step in steps:
            yield step
            if time.monotonic() - started > self.settings.web_question_timeout_s:
                raise Refused(f"the question was stopped after {self.settings.web_question_timeout_s:.0f} s, the "
                              "most one question may run here")

    # --- uploads -----------------------------------------------------------------------------------

    def upload_refusal(self, client: str, size: int | None, now: float | None = None) -> tuple[int, str] | None:
        """(HTTP status, reason) when an upload of ``size`` bytes from ``client`` must be refused, else None
        (and the bytes are counted against the client's hourly allowance)."""
        s = self.settings
        if size is None:
            return 411, "an upload needs a Content-Length"
        now = time.monotonic() if now is None else now
        hourly = s.upload_mb_per_hour * 2**20
        with self._lock:
            sent = self._uploaded.setdefault(client, deque())
            while sent and now - sent[0][0] > 3600.0:
                sent.popleft()
            if sum(n for _, n in sent) + size > hourly:
                return 429, f"you uploaded {s.upload_mb_per_hour} MB in the last hour, the most allowed; try later"
        used = self.upload_bytes()
        if used + size > s.upload_quota_mb * 2**20:
            return 507, "the server's upload space is full; try again later"
        if self.free_bytes() - size < s.min_free_mb * 2**20:
            return 507, "the server's disk is nearly full; try again later"
        with self._lock:
            self._uploaded.setdefault(client, deque()).append((now, size))
            stamp, bytes_ = self._usage
            self._usage = (stamp, bytes_ + size)
        return None

    def upload_bytes(self) -> int:
        """Bytes under the upload folders (Gradio's and the sessions'), measured at most every few seconds."""
        with self._lock:
            stamp, used = self._usage
            if time.monotonic() - stamp < USAGE_CACHE_S:
                return used
        used = sum(folder_bytes(d) for d in self.upload_dirs)
        with self._lock:
            self._usage = (time.monotonic(), used)
        return used

    def free_bytes(self) -> int:
        for folder in self.upload_dirs:
            probe = folder if folder.exists() else folder.parent
            try:
                return shutil.disk_usage(probe).free
            except OSError:
                continue
        return shutil.disk_usage(Path.cwd()).free


def embeds_every_page(registry: Any, retriever: str) -> bool:
    """True for a retriever that embeds every page of a corpus on first use (``dense``, and ``hybrid`` through it):
    about 0.35 CPU-s a page, declared by the plugin as an index too slow to build unless asked."""
    try:
        factory = registry.get("retriever", retriever).factory
    except MadqaError:
        return False
    indexing = retriever_indexing(factory)
    return not indexing.ingest_by_default or "dense" in indexing.index_parts


def within_embedding_cap(config: PipelineConfig, registry: Any, pages: int, most: int
                         ) -> tuple[PipelineConfig, str | None]:
    """``config`` for a session's uploads of ``pages`` pages, and a note when it had to change: a retriever that
    embeds every page is replaced by BM25 (``whoosh``) past ``most`` pages (MADQA_WEB_DENSE_MAX_PAGES), so one
    visitor's large upload cannot take the server's CPU for many minutes. The config's name says it."""
    if pages <= most or not embeds_every_page(registry, config.retriever):
        return config, None
    options = {part: dict(table) for part, table in config.options.items() if part != "retriever"}
    changed = replace(config, retriever="whoosh", options=options, name=f"{config.name}[retriever=whoosh]")
    return changed, (f"{config.retriever} retrieval embeds at most {most:,} pages of your uploads here "
                     f"(MADQA_WEB_DENSE_MAX_PAGES) and they have {pages:,}: BM25 (whoosh) searches them instead")


def folder_bytes(root: Path) -> int:
    """Bytes of the files under ``root`` (0 when it does not exist); files vanishing meanwhile are skipped."""
    total = 0
    for dirpath, _, names in os.walk(root):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total


# POST routes of Gradio that put an event in the queue: its own and its REST twins (/call/NAME, /call/v2/NAME).
# /run/NAME takes only the cheap events outside the queue (api_open is off), which the browser sends itself
QUEUE_ROUTE = re.compile(r"/(queue/join|call/(v2/)?[^/]+)/?$")
# POST routes the app never uses that read a body of up to the upload size before any check: the
# component server (into memory, up to 1,000 files) and the screen-recording converter (ffmpeg)
UNUSED_ROUTE = re.compile(r"/(component_server|process_recording)/?$")


class ProxyLog:
    """Logs the ``X-Forwarded-For`` chain of each new client once (at most ``most`` of them), with the address
    the current ``MADQA_PROXY_HOPS`` makes of it: what an owner behind an undocumented proxy reads to set it."""

    def __init__(self, proxy_hops: int, most: int = 1000) -> None:
        self.proxy_hops, self.most = proxy_hops, most
        self._seen: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def heard(self, peer: str | None, forwarded_for: str | None) -> None:
        if not forwarded_for:
            return
        chain = [h.strip() for h in forwarded_for.split(",") if h.strip()]
        key = (peer or "unknown", chain[0] if chain else "")
        with self._lock:
            if key in self._seen or len(self._seen) >= self.most:
                return
            self._seen.add(key)
            last = len(self._seen) == self.most
        used = client_address(peer, forwarded_for, self.proxy_hops)
        log.info("a new client came through proxies: X-Forwarded-For %r (%d entries) from socket peer %s; with "
                 "MADQA_PROXY_HOPS=%d it counts as %s (%s)%s", forwarded_for[:300], len(chain), peer, self.proxy_hops,
                 used, "the socket's peer" if self.proxy_hops == 0 or not chain
                 else f"X-Forwarded-For entry {len(chain) - min(self.proxy_hops, len(chain)) + 1} of {len(chain)}",
                 " (the last chain logged)" if last else "")


class RequestGuard:
    """ASGI middleware: refuses an event or an upload over its client's limits before Gradio reads it,
    with its reason (429, 507, 411: JSON for an event, as Gradio's page reads it; plain text for an upload),
    so one client cannot fill the queue or the disk; and refuses Gradio routes the app does not use (403)."""

    def __init__(self, app: Any, limits: Limits) -> None:
        self.app = app
        self.limits = limits
        self.proxies = ProxyLog(limits.settings.proxy_hops)

    async def __call__(self, scope: Mapping[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and scope.get("method") == "POST":
            path = str(scope.get("path", ""))
            if UNUSED_ROUTE.search(path):
                await _answer(send, 403, "this route is not offered by this app")
                return
            event = QUEUE_ROUTE.search(path) is not None
            if event or path.endswith("/upload"):
                headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
                peer = scope.get("client")
                self.proxies.heard(peer[0] if peer else None, headers.get("x-forwarded-for"))
                client = client_address(peer[0] if peer else None, headers.get("x-forwarded-for"),
                                        self.limits.settings.proxy_hops)
                if event:
                    length = headers.get("content-length")
                    if length is not None and (not length.isdigit() or int(length) > MAX_EVENT_MB * 2**20):
                        await _answer(send, 413, f"this request is over {MAX_EVENT_MB} MB, the most one event may "
                                      "carry here (a long chat: start a new one)", as_json=True)
                        return
                    receive = capped_receive(receive, MAX_EVENT_MB * 2**20)
                    if not self.limits.allow_request(client):
                        wait = self.limits.request_wait(client)
                        await _answer(send, 429, f"too many requests: try again in {wait} s (at most "
                                      f"{self.limits.settings.web_requests_per_minute} a minute from your address)",
                                      wait, as_json=True)
                        return
                else:
                    length = headers.get("content-length")
                    refusal = self.limits.upload_refusal(client, int(length) if length and length.isdigit() else None)
                    if refusal is not None:
                        await _answer(send, *refusal)
                        return
        await self.app(scope, receive, send)


def capped_receive(receive: Any, most: int) -> Any:
    """``receive`` that ends the request as a disconnect once its body is past ``most`` bytes: a body sent
    without a Content-Length (chunked) is cut off as it arrives, never read whole."""
    got = 0

    async def capped() -> Any:
        nonlocal got
        message = await receive()
        if message.get("type") == "http.request":
            got += len(message.get("body") or b"")
            if got > most:
                return {"type": "http.disconnect"}
        return message

    return capped


async def _answer(send: Any, status: int, text: str, retry_s: int = 60, as_json: bool = False) -> None:
    """A refusal: ``{"detail": text}`` (what Gradio's page and clients read of a refused event: its own
    HTTPExceptions look so) or plain text (what its upload shows after ``HTTP 429:``)."""
    if as_json:
        body, kind = json.dumps({"detail": text, "error": text}).encode("utf-8"), b"application/json"
    else:
        body, kind = text.encode("utf-8"), b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                            (b"retry-after", str(retry_s).encode())]})
    await send({"type": "http.response.body", "body": body})
