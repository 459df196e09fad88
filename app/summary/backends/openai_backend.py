"""`OpenAIBackend`: a branch summary streamed from any OpenAI-compatible chat-completions endpoint.

OpenAI itself, or a local or proxy server that speaks the same protocol: Ollama (`http://localhost:11434/v1`),
llama.cpp, vLLM, LM Studio, OpenRouter. It sends one system and one user message, as Pi does. The `openai`
SDK is an optional extra, imported when a backend is made.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pitree.summary.backends.base import BackendError, SummaryRequest, error_detail, pi_usage
from pitree.summary.backends.sdk import SdkBackend

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "not-needed"
"""Sent to local servers that take no key: the SDK refuses to start without one."""


class OpenAIBackend(SdkBackend):
    """Streams chat completions; errors become `BackendError` subclasses naming the URL, never the key."""

    name = "openai"

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
            import openai
        except ImportError:
            raise BackendError("the openai backend needs the 'llm' extra: pip install 'pitree[llm]'") from None
        super().__init__(openai, api_key or NO_KEY, base_url or DEFAULT_BASE_URL, model, timeout, max_retries, headers)

    async def stream(self, request: SummaryRequest) -> AsyncIterator[str]:
        """Text deltas of the answer. Cancelling the consuming task closes the connection."""
        messages = [
            {"role": "system", "content": request.system_prompt},
            {"role": "user", "content": request.prompt_text},
        ]
        finished = False
        self.usage, self.stop_reason = None, "stop"
        with self._errors():
            async with self._sdk.AsyncOpenAI(**self._client_options()) as client:
                stream = await self._create(client, messages, request.max_tokens)
                async with stream:
                    async for chunk in stream:
                        usage = getattr(chunk, "usage", None)
                        if usage is not None:
                            self.usage = _usage(usage)
                        for choice in chunk.choices or ():
                            delta = choice.delta
                            if delta is not None and delta.content:
                                yield delta.content
                            if choice.finish_reason:
                                finished = True
                                if choice.finish_reason == "length":
                                    self.stop_reason = "length"
        if not finished:
            raise self._stopped_early()

    async def _create(self, client: Any, messages: list[dict[str, str]], max_tokens: int) -> Any:
        create = client.chat.completions.create
        usage = {"stream_options": {"include_usage": True}}
        try:
            return await create(model=self.model, messages=messages, max_tokens=max_tokens, stream=True, **usage)
        except self._sdk.BadRequestError as exc:
            # OpenAI's reasoning models refuse max_tokens and name its replacement; local servers
            # want max_tokens.
            if "max_completion_tokens" not in error_detail(exc.body):
                raise
        return await create(model=self.model, messages=messages, max_completion_tokens=max_tokens, stream=True, **usage)

    def _sdk_error(self) -> type[Exception]:
        return self._sdk.OpenAIError  # type: ignore[no-any-return]


def _usage(usage: Any) -> dict[str, Any]:
    prompt = getattr(usage, "prompt_tokens", 0) or 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return pi_usage(max(0, prompt - cached), getattr(usage, "completion_tokens", 0) or 0, cached)
