"""`AnthropicBackend`: a branch summary streamed from Anthropic's Messages API (or a compatible proxy).

The system prompt goes in `system=` and the prompt text in one user message, as Pi's generateBranchSummary
sends them. The `anthropic` SDK is an optional extra, imported when a backend is made.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pitree.summary.backends.base import (
    BackendError,
    BackendUnavailable,
    SummaryRequest,
    display_url,
    error_detail,
    error_kind,
    not_json_error,
    pi_usage,
    rate_limited,
    safe_message,
    status_error,
    transport_error,
)

DEFAULT_MODEL = "claude-3-5-haiku-latest"
DEFAULT_BASE_URL = "https://api.anthropic.com"


class AnthropicBackend:
    """Streams a message; errors become `BackendError` subclasses naming the URL, never the key."""

    name = "anthropic"

    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        model: str = DEFAULT_MODEL,
        timeout: float = 60.0,
        max_retries: int = 0,
        headers: dict[str, str] | None = None,
    ) -> None:
        try:
            import anthropic
        except ImportError:
            raise BackendError("the anthropic backend needs the 'llm' extra: pip install 'pitree[llm]'") from None
        self._sdk: Any = anthropic
        self._api_key = api_key
        # Always explicit, so the SDK never picks ANTHROPIC_BASE_URL or a profile behind the config's back.
        self.base_url = base_url or DEFAULT_BASE_URL
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.headers = dict(headers or {})
        self.usage: dict[str, Any] | None = None
        self.stop_reason = "stop"

    def __repr__(self) -> str:
        url = display_url(self.base_url)
        return f"AnthropicBackend(base_url={url!r}, model={self.model!r}, api_key=<hidden>)"

    async def stream(self, request: SummaryRequest) -> AsyncIterator[str]:
        """Text deltas of the answer. Cancelling the consuming task closes the connection."""
        sdk = self._sdk
        finished = False
        self.usage, self.stop_reason = None, "stop"
        counts = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
        try:
            async with sdk.AsyncAnthropic(
                api_key=self._api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
                default_headers=self.headers or None,
            ) as client:
                stream = await client.messages.create(
                    model=self.model,
                    max_tokens=request.max_tokens,
                    system=request.system_prompt,
                    messages=[{"role": "user", "content": [{"type": "text", "text": request.prompt_text}]}],
                    stream=True,
                )
                async with stream:
                    async for event in stream:
                        if event.type == "content_block_delta":
                            if getattr(event.delta, "type", "") == "text_delta" and event.delta.text:
                                yield event.delta.text
                        elif event.type == "message_start":
                            _count(counts, getattr(event.message, "usage", None))
                        elif event.type == "message_delta":
                            _count(counts, getattr(event, "usage", None))
                            if getattr(event.delta, "stop_reason", None) == "max_tokens":
                                self.stop_reason = "length"
                        elif event.type == "message_stop":
                            finished = True
                            self.usage = pi_usage(
                                counts["input"], counts["output"], counts["cache_read"], counts["cache_write"]
                            )
        except BackendError:
            raise
        except sdk.APIStatusError as exc:
            # An `error` event inside a 200 stream arrives as a status error too; its type says what it was.
            error = status_error(
                self.name,
                exc.status_code,
                self.base_url,
                error_detail(exc.body),
                [self._api_key],
                kind=error_kind(exc.body),
            )
            raise rate_limited(error, getattr(exc.response, "headers", None)) from None
        except ValueError:
            raise not_json_error(self.name, self.base_url, [self._api_key]) from None
        except Exception as exc:
            mapped = self._other_error(exc)
            if mapped is None:
                raise
            raise mapped from None
        if not finished:
            where = display_url(self.base_url)
            raise BackendUnavailable(
                safe_message(f"{self.name}: the answer from {where} stopped before the model finished", [self._api_key])
            )

    def _other_error(self, exc: Exception) -> BackendError | None:
        mapped = transport_error(self.name, exc, self.base_url, self.timeout, [self._api_key])
        if mapped is not None or not isinstance(exc, self._sdk.AnthropicError):
            return mapped
        detail = error_detail(getattr(exc, "body", None)) or str(exc) or type(exc).__name__
        text = f"{self.name}: {detail} (at {display_url(self.base_url)})"
        return BackendError(safe_message(text, [self._api_key]))


def _count(counts: dict[str, int], usage: Any) -> None:
    """Anthropic reports input at message_start and cumulative output at message_delta; keep the latest."""
    if usage is None:
        return
    for key, attr in (
        ("input", "input_tokens"),
        ("output", "output_tokens"),
        ("cache_read", "cache_read_input_tokens"),
        ("cache_write", "cache_creation_input_tokens"),
    ):
        value = getattr(usage, attr, None)
        if isinstance(value, int):
            counts[key] = value
