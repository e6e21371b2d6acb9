"""How a failed litellm call is told: the kind of failure, the provider, and whether to retry.

Only the exception's type, status code and ``retry-after`` header are used; its text (which may
echo the API key) is inspected for a few phrases and never shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Failure:
    """What went wrong in one call, without the exception (its text may echo the key)."""

    kind: str
    retryable: bool
    provider: str
    retry_after: float | None = None



def classify(exc: Exception, default_provider: str, litellm: Any, trust_exception: bool = True) -> Failure:
    """The kind of failure and whether to retry, from the exception type and status code.

    The provider named is the exception's own (litellm's ``llm_provider``) when ``trust_exception``,
    else ``default_provider``.
    """
    provider = getattr(exc, "llm_provider", None) if trust_exception else None
    provider = provider if isinstance(provider, str) and provider else default_provider
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    text = str(getattr(exc, "message", None) or exc).lower()  # only inspected, never shown

    def failure(kind: str, retryable: bool, retry_after: float | None = None) -> Failure:
        return Failure(kind, retryable, provider, retry_after)

    if "missing credentials" in text or (("api key" in text or "api_key" in text)
                                         and any(w in text for w in ("missing", "not set", "no key", "not found"))):
        return failure("found no API key (missing credentials)", False)
    if isinstance(exc, litellm.Timeout):
        return failure("did not answer in time (timeout)", True)
    if isinstance(exc, litellm.AuthenticationError) or status == 401:
        return failure("rejected the API key (authentication error)", False)
    if isinstance(exc, litellm.PermissionDeniedError) or status == 403:
        return failure("refused access to the model (permission denied)", False)
    if isinstance(exc, litellm.NotFoundError) or status == 404:
        return failure("does not know the model or endpoint (not found)", False)
    if isinstance(exc, litellm.ContextWindowExceededError):
        return failure("rejected the request as too long for the model (context window exceeded)", False)
    if isinstance(exc, litellm.ContentPolicyViolationError):
        return failure("refused the request (content policy violation)", False)
    if isinstance(exc, (litellm.BadRequestError, litellm.UnprocessableEntityError)) or status in (400, 413, 422):
        return failure("rejected the request (bad request)", False)
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return failure("rate-limited the request (rate limit error)", True, retry_after(exc))
    if isinstance(exc, litellm.APIConnectionError) or any(
            w in text for w in ("connection error", "connecterror", "connection refused")):
        return failure("could not be reached (connection error)", True)
    if status == 408:
        return failure("did not answer in time (timeout)", True)
    if status is not None and status >= 500 or isinstance(
            exc, (litellm.InternalServerError, litellm.ServiceUnavailableError, litellm.BadGatewayError)):
        return failure(f"failed with a server error (HTTP {status or 500})", True, retry_after(exc))
    return failure(f"call failed ({type(exc).__name__})", False)


def retry_after(exc: Exception) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")  # type: ignore[attr-defined]
        return max(0.0, float(value)) if value is not None else None
    except Exception:
        return None
