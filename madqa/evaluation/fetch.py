"""One PDF over HTTP, the way a long download of 800 of them needs it: resumed, retried, checked.

A partial file (``NAME.part`` beside the PDF) continues with an HTTP ``Range`` request; a server that
ignores the range (200 instead of 206) or refuses it (416) gets a fresh start. Timeouts, cut bodies,
429 and 5xx are retried with exponential backoff (429's ``Retry-After`` honoured, up to a cap); any
other refusal (404, 403, ...) fails at once. A body that is not a PDF fails too, so a web page served
instead of the document never becomes a corpus file. What comes back is a :class:`Fetched`, never an
exception: the caller reports every failure with its reason.
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

USER_AGENT = "madqa-dataset-download (+https://huggingface.co/datasets/OxRML/MADQA)"
CHUNK = 16384


@dataclass(frozen=True)
class FetchOptions:
    """How hard to try: the per-request timeout, the retries and their delays (seconds)."""

    timeout: float = 60.0
    retries: int = 4  # after the first attempt
    retry_delay: float = 2.0  # the first backoff; doubled each retry
    max_delay: float = 120.0  # no wait is longer, Retry-After included
    workers: int = 4


@dataclass(frozen=True)
class Fetched:
    """What became of one document: ``status`` is downloaded, present or failed (then ``reason`` says why)."""

    document: str
    status: str
    reason: str = ""
    size: int = 0
    sha256: str = ""
    resumed_from: int = 0  # bytes already on disk when the last attempt began


class Retry(Exception):
    """A failure worth another attempt: a timeout, a cut body, 429, 5xx."""

    def __init__(self, reason: str, after: float | None = None) -> None:
        super().__init__(reason)
        self.after = after


class Refused(Exception):
    """A failure no retry would mend: 404, 403, a body that is not a PDF."""


def retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds (a number or an HTTP date), or None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_pdf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(1024).lstrip().startswith(b"%PDF-")


def fetch(document: str, url: str, dest: Path, options: FetchOptions,
          progress: Callable[[int], None] = lambda n: None,
          sleep: Callable[[float], None] = time.sleep) -> Fetched:
    """Download ``url`` to ``dest`` (through ``dest.part``), retrying as ``options`` say."""
    part = dest.with_name(dest.name + ".part")
    last = ""
    attempts = options.retries + 1
    for attempt in range(attempts):
        resumed = part.stat().st_size if part.exists() else 0
        try:
            _attempt(url, part, resumed, options.timeout, progress)
            if not is_pdf(part):
                part.unlink()
                raise Refused("the server sent something that is not a PDF")
            size, digest = part.stat().st_size, sha256_of(part)
            os.replace(part, dest)
            return Fetched(document, "downloaded", "", size, digest, resumed)
        except Refused as exc:
            return Fetched(document, "failed", str(exc), resumed_from=resumed)
        except Retry as exc:
            last = str(exc)
            if attempt + 1 < attempts:
                delay = exc.after if exc.after is not None else options.retry_delay * 2 ** attempt
                sleep(min(delay, options.max_delay))
    tries = f"{attempts} attempt" + ("s" if attempts != 1 else "")
    return Fetched(document, "failed", f"{last} (gave up after {tries})")


def _attempt(url: str, part: Path, have: int, timeout: float, progress: Callable[[int], None]) -> None:
    """One request: append to ``part`` when the server honours the range, else start it over."""
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 and have:  # the range is past what the server has: start over
            part.unlink()
            raise Retry("the server refused to resume (416); starting over", after=0.0) from None
        if exc.code in (408, 429) or exc.code >= 500:
            raise Retry(f"HTTP {exc.code} {exc.reason}", retry_after(exc.headers.get("Retry-After"))) from None
        raise Refused(f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:  # TimeoutError is an OSError
        raise Retry(_describe(exc, timeout)) from None
    with response:
        resuming = have and response.status == 206 and \
            (response.headers.get("Content-Range") or "").startswith(f"bytes {have}-")
        start = have if resuming else 0
        length = response.headers.get("Content-Length")
        expected = start + int(length) if length and length.isdigit() else None
        written = _copy(response, part, "ab" if resuming else "wb", timeout, progress)
    size = start + written
    if expected is not None and size < expected:
        raise Retry(f"the connection was cut at {size:,} of {expected:,} bytes")


def _copy(response: http.client.HTTPResponse, part: Path, mode: str, timeout: float,
          progress: Callable[[int], None]) -> int:
    """Stream the body into ``part``, flushed chunk by chunk so a killed run keeps what it had."""
    written = 0
    with part.open(mode) as out:
        try:
            while chunk := response.read(CHUNK):
                out.write(chunk)
                out.flush()
                written += len(chunk)
                progress(len(chunk))
        except (http.client.HTTPException, OSError) as exc:
            raise Retry(f"{_describe(exc, timeout)} after {written:,} bytes") from None
    return written


def _describe(exc: BaseException, timeout: float) -> str:
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
        return f"timed out after {timeout:g} s"
    return f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
