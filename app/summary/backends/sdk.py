"""`SdkBackend`: what the backends built on a provider's SDK (openai, anthropic) share.

Their settings, a repr that hides the key, and the mapping of the SDK's errors to `BackendError`s that name
the URL and never the key. A subclass sends the request and reads the stream inside `with self._errors():`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from pitree.summary.backends.base import (
    BackendError,
    BackendUnavailable,
    display_url,
    error_detail,
    not_json_error,
    rate_limited,
    safe_message,
    status_error,
    transport_error,
)


class SdkBackend:
    """Settings and error mapping for a backend over an SDK module (`self._sdk`)."""

    name = ""

    def __init__(
        self,
        sdk: Any,
        api_key: str,
        base_url: str,
        model: str,
        timeout: float,
        max_retries: int,
        headers: dict[str, str] | None,
    ) -> None:
        self._sdk = sdk
        self._api_key = api_key
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.headers = dict(headers or {})
        self.usage: dict[str, Any] | None = None
        self.stop_reason = "stop"

    def __repr__(self) -> str:
        url = display_url(self.base_url)
        return f"{type(self).__name__}(base_url={url!r}, model={self.model!r}, api_key=<hidden>)"

    def _client_options(self) -> dict[str, Any]:
        """What both SDKs' async clients take, always explicit so that neither picks a URL or a key from the
        environment behind the config's back."""
        return {
            "api_key": self._api_key,
            "base_url": self.base_url,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
            "default_headers": self.headers or None,
        }

    def _status_error(self, exc: Any) -> BackendError:
        """The error for an HTTP status the SDK raised (`APIStatusError`)."""
        return status_error(self.name, exc.status_code, self.base_url, error_detail(exc.body), [self._api_key])

    def _sdk_error(self) -> type[Exception]:
        """The SDK's own base exception class."""
        raise NotImplementedError

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """Turn what the SDK or the transport raises into one-line `BackendError`s without the key."""
        sdk = self._sdk
        try:
            yield
        except BackendError:
            raise
        except sdk.APIStatusError as exc:
            raise rate_limited(self._status_error(exc), getattr(exc.response, "headers", None)) from None
        except ValueError:
            # A `data:` line that is not JSON (json.JSONDecodeError is a ValueError).
            raise not_json_error(self.name, self.base_url, [self._api_key]) from None
        except Exception as exc:
            mapped = self._other_error(exc)
            if mapped is None:
                raise
            raise mapped from None

    def _other_error(self, exc: Exception) -> BackendError | None:
        mapped = transport_error(self.name, exc, self.base_url, self.timeout, [self._api_key])
        if mapped is not None or not isinstance(exc, self._sdk_error()):
            return mapped
        detail = error_detail(getattr(exc, "body", None)) or str(exc) or type(exc).__name__
        text = f"{self.name}: {detail} (at {display_url(self.base_url)})"
        return BackendError(safe_message(text, [self._api_key]))

    def _stopped_early(self) -> BackendUnavailable:
        where = display_url(self.base_url)
        text = f"{self.name}: the answer from {where} stopped before the model finished"
        return BackendUnavailable(safe_message(text, [self._api_key]))
