"""What a model-backed summarizer is: `SummaryRequest` in, text deltas out, and `BackendError`s.

A backend streams one answer to one request (Pi's generateBranchSummary: a system prompt, one user message,
2048 output tokens). The caller cancels by cancelling the asyncio task that consumes `stream`; backends hold
their HTTP stream in `async with`, so cancelling closes the connection and `CancelledError` propagates.
A consumer that may stop early (break, or await other things between deltas) should wrap the iterator in
`contextlib.aclosing` so the connection closes at once rather than when the generator is collected.

Error messages are one line for the user and never contain an API key: `safe_message` scrubs them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

MAX_MESSAGE = 300


@dataclass(frozen=True)
class SummaryRequest:
    system_prompt: str
    prompt_text: str
    max_tokens: int = 2048


class BackendError(Exception):
    """A model summary failed; the message is one line for the user and holds no API key."""


class BackendAuthError(BackendError):
    """The provider refused the credentials (HTTP 401 or 403)."""


class BackendRateLimited(BackendError):
    """The provider asked us to slow down (HTTP 429); `retry_after` is its Retry-After in seconds, if given."""

    retry_after: float | None = None


class BackendTimeout(BackendError):
    """No connection, or no next piece of the answer, within the configured timeout."""


class BackendUnavailable(BackendError):
    """The provider cannot be reached (refused, DNS, dropped connection) or failed on its side (5xx)."""


class BackendCancelled(BackendError):
    """The summary was cancelled. Backends let `asyncio.CancelledError` through; callers may raise this."""


class Backend(Protocol):
    """A model summarizer: `name` ("openai", "anthropic") and the `model` it asks. After a stream ends,
    `usage` is the usage the model reported in Pi's form (or None) and `stop_reason` Pi's: "stop" or "length"."""

    name: str
    model: str
    usage: dict[str, Any] | None
    stop_reason: str

    # An async generator: implementations are `async def stream(...)` containing `yield`.
    def stream(self, request: SummaryRequest) -> AsyncIterator[str]: ...


def display_url(url: str) -> str:
    """`url` without user:password, for messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(invalid URL)"
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def safe_message(text: str, secrets: Iterable[str | None] = ()) -> str:
    """One printable line of at most MAX_MESSAGE characters with every secret replaced."""
    for secret in secrets:
        # Short values ("x", "not-needed") are not real keys and would mangle the text.
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[key]")
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def status_error(
    provider: str, status: int, url: str, detail: str, secrets: Iterable[str | None], kind: str = ""
) -> BackendError:
    """The BackendError for an HTTP error status (or, for `kind`, a provider's error type in a stream)."""
    where = display_url(url)
    if status in (401, 403) or kind in ("authentication_error", "permission_error"):
        cls: type[BackendError] = BackendAuthError
        what = "authentication failed"
    elif status == 429 or kind == "rate_limit_error":
        cls, what = BackendRateLimited, "rate limited"
    elif status >= 500 or kind in ("api_error", "overloaded_error"):
        cls, what = BackendUnavailable, "server error"
    else:
        cls, what = BackendError, "request rejected"
    code = f"HTTP {status}" if status >= 400 else (kind or "error")
    text = f"{provider}: {what} ({code}) at {where}"
    if detail:
        text += f": {detail}"
    return cls(safe_message(text, secrets))


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen


def _is(exc: BaseException, name: str) -> bool:
    # httpx or httpx2, depending on the SDK release: match by class name instead of importing either.
    return any(c.__name__ == name and c.__module__.startswith("httpx") for c in type(exc).__mro__)


def transport_error(
    provider: str, exc: BaseException, url: str, timeout: float, secrets: Iterable[str | None]
) -> BackendError | None:
    """The BackendError for a timeout or a failed/dropped connection anywhere in `exc`'s chain, else None."""
    where = display_url(url)
    chain = _chain(exc)
    if any(
        _is(e, "TimeoutException") or type(e).__name__ == "APITimeoutError" or isinstance(e, TimeoutError)
        for e in chain
    ):
        text = f"{provider}: no answer from {where} within {timeout:g} s"
        return BackendTimeout(safe_message(text, secrets))
    if not any(_is(e, "TransportError") or type(e).__name__ == "APIConnectionError" for e in chain):
        return None
    import socket

    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        why = "connection refused"
    elif any(isinstance(e, socket.gaierror) for e in chain):
        why = "host not found"
    elif any(_is(e, "RemoteProtocolError") or _is(e, "ReadError") for e in chain):
        text = f"{provider}: the connection to {where} dropped mid-answer"
        return BackendUnavailable(safe_message(text, secrets))
    else:
        why = next((str(e) for e in reversed(chain) if str(e)), type(exc).__name__)
    return BackendUnavailable(safe_message(f"{provider}: cannot reach {where} ({why})", secrets))


def error_detail(body: object) -> str:
    """The provider's own message from an error body (OpenAI's `error.message`, Anthropic's too), or ''."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
        if isinstance(body.get("message"), str):
            return body["message"]
        return ""
    return body if isinstance(body, str) else ""


def error_kind(body: object) -> str:
    """Anthropic's error type (`rate_limit_error`, `overloaded_error`, ...) from an error body, or ''."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("type"), str):
            return inner["type"]
    return ""


def retry_after_seconds(headers: Any) -> float | None:
    """A Retry-After (or retry-after-ms) header in seconds, when it is a number; None otherwise."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        raw = headers.get("retry-after")
        return max(0.0, float(raw)) if raw is not None else None
    except (TypeError, ValueError):
        return None


def rate_limited(exc: BackendError, headers: Any) -> BackendError:
    if isinstance(exc, BackendRateLimited):
        exc.retry_after = retry_after_seconds(headers)
    return exc


def pi_usage(input_tokens: int, output_tokens: int, cache_read: int = 0, cache_write: int = 0) -> dict[str, Any]:
    """Pi's Usage shape. pitree knows no prices, so the cost is 0 (Pi computes it from its model catalog)."""
    total = input_tokens + output_tokens + cache_read + cache_write
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {
        "input": input_tokens,
        "output": output_tokens,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": total,
        "cost": zero,
    }


def not_json_error(provider: str, url: str, secrets: Iterable[str | None]) -> BackendError:
    return BackendError(safe_message(f"{provider}: {display_url(url)} streamed a line that is not JSON", secrets))
