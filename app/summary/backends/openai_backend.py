"""`OpenAIBackend`: a branch summary streamed from any OpenAI-compatible chat-completions endpoint.

OpenAI itself, or a local or proxy server that speaks the same protocol: Ollama (`http://localhost:11434/v1`),
llama.cpp, vLLM, LM Studio, OpenRouter. It sends one system and one user message, as Pi does. The `openai`
SDK is an optional extra, imported when a backend is made.
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
    not_json_error,
    pi_usage,
    rate_limited,
    safe_message,
    status_error,
    transport_error,
)

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "not-needed"
"""Sent to local servers that take no key: the SDK refuses to start without one."""


class OpenAIBackend:
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
        self._sdk: Any = openai
        self._api_key = api_key or NO_KEY
        # Always explicit, so the SDK never picks OPENAI_BASE_URL from the environment behind the
        # config's back.
        self.base_url = base_url or DEFAULT_BASE_URL
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.headers = dict(headers or {})
        self.usage: dict[str, Any] | None = None
        self.stop_reason = "stop"

    def __repr__(self) -> str:
        url = display_url(self.base_url)
        return f"OpenAIBackend(base_url={url!r}, model={self.model!r}, api_key=<hidden>)"

    async def stream(self, request: SummaryRequest) -> AsyncIterator[str]:
        """Text deltas of the answer. Cancelling the consuming task closes the connection."""
        sdk = self._sdk
        messages = [
            {"role": "system", "content": request.system_prompt},
            {"role": "user", "content": request.prompt_text},
        ]
        finished = False
        self.usage, self.stop_reason = None, "stop"
        try:
            async with sdk.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
                default_headers=self.headers or None,
            ) as client:
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
        except BackendError:
            raise
        except sdk.APIStatusError as exc:
            error = status_error(self.name, exc.status_code, self.base_url, error_detail(exc.body), [self._api_key])
            raise rate_limited(error, getattr(exc.response, "headers", None)) from None
        except ValueError:
            # A `data:` line that is not JSON (json.JSONDecodeError is a ValueError).
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

    def _other_error(self, exc: Exception) -> BackendError | None:
        mapped = transport_error(self.name, exc, self.base_url, self.timeout, [self._api_key])
        if mapped is not None or not isinstance(exc, self._sdk.OpenAIError):
            return mapped
        detail = error_detail(getattr(exc, "body", None)) or str(exc) or type(exc).__name__
        text = f"{self.name}: {detail} (at {display_url(self.base_url)})"
        return BackendError(safe_message(text, [self._api_key]))


def _usage(usage: Any) -> dict[str, Any]:
    prompt = getattr(usage, "prompt_tokens", 0) or 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return pi_usage(max(0, prompt - cached), getattr(usage, "completion_tokens", 0) or 0, cached)
