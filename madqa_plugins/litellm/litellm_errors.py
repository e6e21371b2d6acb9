"""How a failed litellm call is told: the kind of failure, the provider, whether to retry, and the
provider's own reason.

The kind comes from the exception's type, status code and ``retry-after`` header. The provider's
message (e.g. "At most 1 image(s) may be provided in one request.") is kept as ``detail`` with
anything that looks like a key redacted, and never for authentication errors (their text
echoes the key). A refusal that names a server limit carries it (``limit``, see litellm_limits.py);
one that says the server takes no ``tools`` parameter says so (``tools_refused``). litellm's own
names (class names, "litellm.InternalServerError: AnthropicException -") never reach the message.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from madqa_plugins.litellm.litellm_limits import Limit, server_limit, tools_refused

DETAIL_CHARS = 300
_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*)+(?:\w+:\s*)?(?:\w+(?:Exception|Error)(?: \w+)?\s*-\s*)?")
_LITELLM_NOISE = re.compile(r"\.?\s*Handle with `litellm\.\w+`\.?|,?\s*Received response - .*$|"
                            r"\s*File an issue if litellm error.*$|\s*Original Response: .*$", re.S)
# A reply whose body is not JSON: the decoder's own words, as litellm passes them on (any provider)
_UNREADABLE = re.compile(r"(?:unterminated string|expecting (?:value|property name|',' delimiter|':' delimiter)|"
                         r"invalid control character|extra data|unable to get json response|invalid json)"
                         r".{0,40}?line \d+ column \d+|unable to get json response|error converting to valid "
                         r"response block=(?:unterminated|expecting)", re.S)
_DECODER = re.compile(r"((?:Unterminated string|Expecting [^:]+|Invalid control character|Extra data)[^.,]*?"
                      r"line \d+ column \d+(?: \(char \d+\))?)")
_CODE = re.compile(r'"code":\s*(\d{3})')
# litellm's OpenAI client, for a 200 whose body is no chat completion: "Empty or invalid response from LLM
# endpoint. Received: '<!doctype html>...'" (a web UI or proxy page at api_base; a server that streams anyway)
_NOT_A_REPLY = re.compile(r"empty or invalid response from llm endpoint\. received: (?:'|\")?\s*(.{0,12})", re.S)
_SECRETS = (
    re.compile(r"\b(?:sk|rk|pk|sess)-[A-Za-z0-9_\-*]{6,}"),  # OpenAI / Anthropic style keys
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),  # Google API keys
    re.compile(r"""(?i)\b(bearer|api[_-]?key|x-api-key|x-goog-api-key|key|token|authorization)([\s:="']{1,3})"""
               r"""(?!<redacted>)[^\s"'&,;]{6,}"""),
)


@dataclass(frozen=True)
class Failure:
    """What went wrong in one call, without the exception (its text may echo the key)."""

    kind: str
    retryable: bool
    provider: str
    retry_after: float | None = None
    detail: str | None = None  # the provider's own message, keys redacted
    limit: Limit | None = None  # a server limit the loop can work around (madqa.ServerLimitError)
    tools_refused: bool = False  # the server takes no ``tools``: retry in the JSON-in-text protocol
    overloaded: bool = False  # 529 / 503: wait longer between attempts
    choice_refused: bool = False  # a forced tool_choice refused (Anthropic with extended thinking): send none
    status: int | None = None  # the HTTP status, where the kind depends on it (an HTML page's 413)


def classify(exc: Exception, default_provider: str, litellm: Any, trust_exception: bool = True,
             secrets: tuple[str, ...] = ()) -> Failure:
    """The kind of failure and whether to retry, from the exception type and status code.

    The provider named is the exception's own (litellm's ``llm_provider``) when ``trust_exception``,
    else ``default_provider``.
    """
    provider = getattr(exc, "llm_provider", None) if trust_exception else None
    provider = provider if isinstance(provider, str) and provider else default_provider
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    if _in_chain(exc, 413):
        status = 413  # litellm's OpenAI client calls a 413 a RateLimitError (429)
    text = str(getattr(exc, "message", None) or exc).lower()  # only inspected, never shown

    def failure(kind: str, retryable: bool, retry_after: float | None = None, **more: Any) -> Failure:
        detail = provider_message(exc, secrets) or body_message(exc, secrets)
        return Failure(kind, retryable, provider, retry_after, detail, **more)

    seen = what_was_sent(exc, status)
    if seen is not None:
        return Failure(seen[0], seen[1], provider, status=status)
    if "missing credentials" in text or (("api key" in text or "api_key" in text)
                                         and any(w in text for w in ("missing", "not set", "no key", "not found"))):
        return Failure("found no API key (missing credentials)", False, provider)
    if isinstance(exc, litellm.Timeout):
        return failure("did not answer in time (timeout)", True)
    if isinstance(exc, litellm.AuthenticationError) or status == 401:  # no detail: it echoes the key
        return Failure("rejected the API key (authentication error)", False, provider)
    if isinstance(exc, litellm.PermissionDeniedError) or status == 403:
        return failure("refused access to the model (permission denied)", False)
    if isinstance(exc, litellm.NotFoundError) or status == 404:
        return failure("does not know the model or endpoint (not found)", False)
    not_a_reply = _NOT_A_REPLY.search(text)
    if not_a_reply:  # it would send the same page again: not retried, and said what it was
        start = not_a_reply.group(1)
        if start.startswith("<"):
            return Failure("sent a web page (HTML), not a model's reply: api_base should be the model server's "
                           "API (vLLM, llama.cpp, LM Studio: the address ending in /v1)", False, provider)
        if start.startswith(("data:", "event:")):
            return Failure("sent a streamed reply (server-sent events) although one JSON reply was asked for "
                           "(stream: false): a proxy in between may be forcing streaming", False, provider)
        return Failure("sent an empty reply body", True, provider)
    if _UNREADABLE.search(text):  # a 200 cut off, or not JSON: litellm calls it anything from 422 to 500
        found = _DECODER.search(str(getattr(exc, "message", None) or exc))
        return Failure("sent an unreadable reply body (cut off or not JSON)", True, provider,
                       detail=found.group(1) if found else None)
    refused = status == 413 or status != 429 and not isinstance(exc, litellm.RateLimitError)
    if refused and tools_refused(text):
        return failure("refused the tools parameter (no tool calling on this server or model)", False,
                       tools_refused=True)
    if refused and "tool_choice forces tool use" in text:  # Anthropic: thinking takes tool_choice auto only
        return failure("refused a forced tool choice (extended thinking takes only tool_choice auto)", False,
                       choice_refused=True)
    if refused and "tool_choice" in text and (status is None or 400 <= status < 500):
        # vLLM, llama.cpp's server, proxies: "Only 'auto' and 'none' tool_choice are supported by this server"
        # (the backend takes it as such only for a request that forced a tool)
        return failure("refused a forced tool choice (tool_choice naming a tool)", False, choice_refused=True)
    if status == 402 or "insufficient credits" in text or "insufficient_quota" in text:
        # OpenRouter's 402 "Insufficient credits"; OpenAI's 429 insufficient_quota ("You exceeded your current
        # quota"): waiting does not help
        return failure("refused the request: the account has no credits or quota left (HTTP "
                       f"{status or 402}; add credits or use another key)", False)
    limit = server_limit(text, status, isinstance(exc, litellm.ContextWindowExceededError)) if refused else None
    if limit is not None:
        return failure(LIMIT_KINDS[limit.limit], False, limit=limit)
    if isinstance(exc, litellm.ContentPolicyViolationError):
        return failure("refused the request (content policy violation)", False)
    if isinstance(exc, (litellm.BadRequestError, litellm.UnprocessableEntityError)) or status in (400, 413, 422):
        return failure("rejected the request (bad request)", False)
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return failure("rate-limited the request (rate limit error)", True, retry_after(exc))
    connection = any(w in text for w in ("connection error", "connecterror", "connection refused"))
    if isinstance(exc, litellm.APIConnectionError) and not connection and _ERROR_OBJECT.search(text):
        # a 200 whose body is an error object (OpenRouter's upstream failures), which litellm calls a connection error
        return failure("sent an error object in place of a reply (HTTP 200 with an `error` body)", True)
    if isinstance(exc, litellm.APIConnectionError) and not connection and "traceback" in text:
        return Failure("sent a reply that is not a chat completion (litellm could not read it; not a connection "
                       "failure)", True, provider, detail=_first_line(exc))
    if isinstance(exc, litellm.APIConnectionError) or connection:
        return failure("could not be reached (connection error)", True)
    if status == 408:
        return failure("did not answer in time (timeout)", True)
    if status is not None and status >= 500 or isinstance(
            exc, (litellm.InternalServerError, litellm.ServiceUnavailableError, litellm.BadGatewayError)):
        real = _real_status(exc, status, text)
        if real == 529 or "overloaded_error" in text:
            return failure("is overloaded (529)", True, retry_after(exc), overloaded=True)
        if real == 503 or "overloaded" in text:
            return failure(f"is overloaded or unavailable (HTTP {real or 503})", True, retry_after(exc),
                           overloaded=True)
        return failure(f"failed with a server error (HTTP {real or 500})", True, retry_after(exc))
    return failure(f"call failed ({type(exc).__name__})", False)


LIMIT_KINDS = {
    "images_per_request": "refused the number of images in one request (server limit)",
    "vision": "refused the page images (the model takes no image input)",
    "image_size": "refused an image as too large (server limit)",
    "context_length": "rejected the request as too long for the model (context window exceeded)",
}


def _real_status(exc: Exception, status: int | None, text: str) -> int | None:
    """The provider's own status when litellm mapped it to another (Anthropic's 529 kept in
    ``provider_status_code``; Gemini's 503 only in the body)."""
    kept = getattr(exc, "provider_status_code", None)
    if isinstance(kept, int):
        return kept
    code = _CODE.search(text)
    if code and int(code.group(1)) >= 500:
        return int(code.group(1))
    return status


# Gemini's 429 RESOURCE_EXHAUSTED: {"error": {..., "details": [{"@type": "...google.rpc.RetryInfo",
# "retryDelay": "3s"}]}} (a protobuf Duration: seconds with up to 9 decimals and an "s")
_RETRY_DELAY = re.compile(r"""["']?retrydelay["']?\s*:\s*["'](\d+(?:\.\d+)?)s["']""")
_CUT_BODY = re.compile(r"peer closed connection without sending complete message body(?: \(([^)]*)\))?|"
                       r"incomplete chunked read|incompleteread|remoteprotocolerror")
_HTML = re.compile(r"<!doctype html|<html[\s>]", re.I)
_TITLE = re.compile(r"<title[^>]*>\s*([^<]{1,120}?)\s*</title>", re.I | re.S)
_CHAIN_DEPTH = 8


def chain_text(exc: BaseException) -> str:
    """The text of an exception and the ones it came from (litellm's OpenAI client says only "Connection
    error." where httpx said why), with the body of the HTTP response when litellm kept it. Inspected
    only, never shown."""
    parts: list[str] = []
    seen: BaseException | None = exc
    for _ in range(_CHAIN_DEPTH):
        if seen is None:
            break
        parts.append(str(getattr(seen, "message", None) or seen))
        body = getattr(getattr(seen, "response", None), "text", None)
        if isinstance(body, str) and body:
            parts.append(body[:4000])
        seen = seen.__cause__ or seen.__context__
    return "\n".join(parts)


def _in_chain(exc: BaseException, status: int) -> bool:
    """Whether the exception or one it came from carries HTTP ``status`` (litellm may have mapped it)."""
    seen: BaseException | None = exc
    for _ in range(_CHAIN_DEPTH):
        if seen is None:
            return False
        if getattr(seen, "status_code", None) == status:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def what_was_sent(exc: BaseException, status: int | None) -> tuple[str, bool] | None:
    """(kind, retryable) of a reply that was no server's answer: an HTML error page from a proxy in front of
    the server, or a body cut off mid-reply; None for any other failure."""
    text = chain_text(exc)  # (a str() that fails: the backend's classifying falls back to the type's name)
    cut = _CUT_BODY.search(text.lower())
    if cut:
        said = cut.group(1) if cut.lastindex and cut.group(1) else "the connection closed before the end"
        return (f"sent a reply that was cut off: the reply was cut off mid-body ({said}); the server or a proxy "
                "in between closed the connection early", True)
    if status is not None and status >= 400 and _HTML.search(text) and not _NOT_A_REPLY.search(text.lower()):
        # (a 200 page litellm calls "Empty or invalid response": a web UI at api_base, told by classify)
        title = _TITLE.search(text)
        named = f', "{" ".join(title.group(1).split())}"' if title else ""
        return (f"sent an HTML page (HTTP {status}{named}) from something in front of the model server (a "
                "proxy, gateway or load balancer), not the server's own reply", status >= 500 or status == 429)
    return None


# An error object in a body, as litellm quotes it: {'message': 'Provider returned error', 'code': 502}
_ERROR_OBJECT = re.compile(r"""\{\s*['"]message['"]\s*:\s*['"]([^'"]{1,300})['"]""")


def body_message(exc: BaseException, secrets: tuple[str, ...] = ()) -> str | None:
    """The message of an error object somewhere in the exception's chain (litellm's own message can be empty:
    "OpenAIException - "), redacted as ``provider_message``."""
    found = _ERROR_OBJECT.search(chain_text(exc))
    if found:
        return provider_message(Exception(found.group(1)), secrets)
    return provider_message(Exception(chain_text(exc)), secrets)


def _first_line(exc: BaseException) -> str | None:
    line = str(getattr(exc, "message", None) or exc).strip().splitlines()
    return provider_message(Exception(line[0])) if line else None


def retry_delay(exc: BaseException) -> float | None:
    """The delay a provider asked for in its error body (Gemini's ``RetryInfo.retryDelay``), in seconds."""
    found = _RETRY_DELAY.search(chain_text(exc).lower())
    return float(found.group(1)) if found else None


def retry_after(exc: Exception) -> float | None:
    """The provider's Retry-After (seconds), wherever litellm kept the headers for this provider; else the
    ``retryDelay`` of its error body (Gemini)."""
    for source in (getattr(getattr(exc, "response", None), "headers", None), getattr(exc, "headers", None),
                   getattr(exc, "litellm_response_headers", None)):
        try:
            value = source.get("retry-after") or source.get("Retry-After")  # type: ignore[union-attr]
        except (AttributeError, TypeError):  # no headers kept there (None), or not a mapping
            continue
        try:
            if value is not None:
                return max(0.0, float(value))
        except (TypeError, ValueError):
            continue
    return retry_delay(exc)


def provider_message(exc: Exception, secrets: tuple[str, ...] = ()) -> str | None:
    """The provider's own reason from a litellm exception, keys redacted, at most DETAIL_CHARS long."""
    raw = str(getattr(exc, "message", None) or exc or "").strip()
    text = _LITELLM_NOISE.sub("", _PREFIX.sub("", raw)).strip()
    start = text.find("{")
    if start >= 0:  # a JSON error body: {"error": {"message": ...}}, {"error": "..."}, {"message": ...}
        try:
            body = json.loads(text[start:])
        except ValueError:
            body = None
        found = _message_in(body)
        if found:
            text = found
    text = " ".join(text.split())
    if not text or text.lower() in ("none", "null"):
        return None
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "<redacted>")
    for pattern in _SECRETS:
        text = pattern.sub(lambda m: (m.group(1) + m.group(2) if m.lastindex else "") + "<redacted>", text)
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 1] + "…"


def _message_in(body: Any) -> str | None:
    if isinstance(body, list) and body:
        return _message_in(body[0])
    if not isinstance(body, dict):
        return None
    error = body.get("error", body)
    if isinstance(error, str):
        return error
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    return None
