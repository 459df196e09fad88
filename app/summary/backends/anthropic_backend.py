"""`AnthropicBackend`: a branch summary streamed from Anthropic's Messages API (or a compatible proxy).

The system prompt goes in `system=` and the prompt text in one user message, as Pi's generateBranchSummary
sends them. The `anthropic` SDK is an optional extra, imported when a backend is made.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pitree.summary.backends.base import BackendError, SummaryRequest, error_detail, error_kind, pi_usage, status_error
from pitree.summary.backends.sdk import SdkBackend

DEFAULT_MODEL = "claude-3-5-haiku-latest"
DEFAULT_BASE_URL = "https://api.anthropic.com"


class AnthropicBackend(SdkBackend):
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
        super().__init__(anthropic, api_key, base_url or DEFAULT_BASE_URL, model, timeout, max_retries, headers)

    async def stream(self, request: SummaryRequest) -> AsyncIterator[str]:
        """Text deltas of the answer. Cancelling the consuming task closes the connection."""
        finished = False
        self.usage, self.stop_reason = None, "stop"
        counts = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
        with self._errors():
            async with self._sdk.AsyncAnthropic(**self._client_options()) as client:
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
        if not finished:
            raise self._stopped_early()

    def _status_error(self, exc: Any) -> BackendError:
        # An `error` event inside a 200 stream arrives as a status error too; its type says what it was.
        detail = error_detail(exc.body)
        return status_error(
            self.name, exc.status_code, self.base_url, detail, [self._api_key], kind=error_kind(exc.body)
        )

    def _sdk_error(self) -> type[Exception]:
        return self._sdk.AnthropicError  # type: ignore[no-any-return]


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
