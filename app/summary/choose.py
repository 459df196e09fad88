"""Which summarizer a jump uses, from pitree's settings (flags > environment > config file) and, for `auto`
and `pi`, Pi's own agent folder (the session's provider and model; see `pi_agent`).

`auto` (the default): a model pitree's config file sets up, else the model Pi would use when Pi's folder
makes it usable, else the offline extractive summary, with the reason. A model chosen by `auto` needs the
user's consent before session text is sent (`Choice.needs_consent`); naming it (`openai`, `anthropic`, `pi`)
is consent. Errors are one line (BackendError).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pitree.summary.backends.base import Backend, BackendError, display_url, safe_message
from pitree.summary.pi_agent import NeedsCommand, PiAgentError, pi_model


@dataclass
class Choice:
    name: str  # extractive | none | openai | anthropic | pi
    backend: Backend | None = None
    where: str = ""  # "provider/model at URL", for the consent question and the status line
    note: str = ""  # why no model is used, when `auto` fell back to extractive
    needs_consent: bool = False
    context_window: int = 128000
    reserve_tokens: int = 16384
    max_tokens: int = 2048
    command: NeedsCommand | None = None  # the key is a `!command` the user has not allowed yet

    @property
    def is_model(self) -> bool:
        return self.backend is not None


def session_model(tree: Any) -> tuple[str | None, str | None]:
    """The session's current provider and model (Pi's buildSessionContext model at the leaf)."""
    from pitree.session.context import build_context

    model = build_context(tree, None).model if tree is not None and tree.leaf is not None else None
    if not isinstance(model, dict):
        return None, None
    provider, model_id = model.get("provider"), model.get("modelId")
    return (provider if isinstance(provider, str) else None), (model_id if isinstance(model_id, str) else None)


def _pi_choice(config: Any, tree: Any, env: Mapping[str, str], allow_command: bool, consent: bool) -> Choice:
    from pitree.config import Config

    assert isinstance(config, Config)
    provider, model = session_model(tree)
    cwd = tree.header.get("cwd") if tree is not None and isinstance(tree.header, dict) else None
    # pitree's own key for the same provider (its config file or OPENAI_API_KEY / ANTHROPIC_API_KEY) wins.
    own = {
        name: (key, config.sources.get(f"{name}_api_key", "pitree's config"))
        for name, key in (("openai", config.openai_api_key), ("anthropic", config.anthropic_api_key))
        if key
    }
    pm = pi_model(provider, config.model or model, env, cwd if isinstance(cwd, str) else None, allow_command, own)
    window = pm.context_window or 128000
    # pitree's own settings win over Pi's where the user set them.
    if "context_window" in config.sources:
        window = config.context_window
    reserve = config.reserve_tokens if "reserve_tokens" in config.sources else pm.reserve_tokens
    if pm.api == "anthropic-messages":
        from pitree.summary.backends.anthropic_backend import AnthropicBackend

        backend: Backend = AnthropicBackend(pm.api_key, pm.base_url, pm.model, config.timeout, headers=pm.headers)
    else:
        from pitree.summary.backends.openai_backend import OpenAIBackend

        backend = OpenAIBackend(pm.api_key, pm.base_url, pm.model, config.timeout, headers=pm.headers)
    max_tokens = min(pm.max_tokens or 2048, 2048)
    where = safe_message(f"{pm.provider}/{pm.model} at {display_url(pm.base_url)} (key from {pm.key_from})")
    return Choice("pi", backend, where, "", not consent, window, reserve, max_tokens)


def choose(config: Any, tree: Any = None, env: Mapping[str, str] | None = None, allow_command: bool = False) -> Choice:
    """The summarizer for `config.summarizer`; BackendError when a named one cannot be used."""
    from pitree.config import ConfigError, configured_provider, make_backend

    env = os.environ if env is None else env
    name = config.summarizer
    window, reserve = _budget(config, tree, env)
    if name in ("extractive", "none"):
        return Choice(name, context_window=window, reserve_tokens=reserve)
    if name == "auto":
        own = configured_provider(config)
        if own is not None:
            backend = make_backend(replace(config, summarizer=own))
            return Choice(
                own, backend, _where(backend), needs_consent=True, context_window=window, reserve_tokens=reserve
            )
        try:
            return _pi_choice(config, tree, env, allow_command, consent=False)
        except NeedsCommand as exc:
            return Choice("extractive", note=str(exc), command=exc, context_window=window, reserve_tokens=reserve)
        except (PiAgentError, BackendError, ConfigError) as exc:
            return Choice("extractive", note=f"no model summary: {exc}", context_window=window, reserve_tokens=reserve)
    if name == "pi":
        try:
            return _pi_choice(config, tree, env, allow_command, consent=True)
        except NeedsCommand as exc:
            return Choice("pi", note=str(exc), command=exc, context_window=window, reserve_tokens=reserve)
        except PiAgentError as exc:
            raise BackendError(f"pi: {exc}") from None
    backend = make_backend(config)
    return Choice(name, backend, _where(backend), context_window=window, reserve_tokens=reserve)


def _budget(config: Any, tree: Any, env: Mapping[str, str]) -> tuple[int, int]:
    """The budget Pi would use for this session (its model's context window, Pi's branchSummary.reserveTokens),
    pitree's own settings winning where the user set them; the offline summary reads the same window."""
    from pitree.store.model_info import context_window
    from pitree.summary.pi_agent import read_settings

    window = config.context_window
    if "context_window" not in config.sources:
        window = context_window(*session_model(tree)) or window
    reserve = config.reserve_tokens
    if "reserve_tokens" not in config.sources:
        cwd = tree.header.get("cwd") if tree is not None and isinstance(tree.header, dict) else None
        try:
            branch = read_settings(env, cwd if isinstance(cwd, str) else None).get("branchSummary")
        except PiAgentError:
            branch = None
        pi_reserve = branch.get("reserveTokens") if isinstance(branch, dict) else None
        if isinstance(pi_reserve, int) and not isinstance(pi_reserve, bool) and pi_reserve >= 0:
            reserve = pi_reserve
    # A reserve as large as the window leaves no budget, which Pi (and prepare) read as "no limit".
    return window, reserve


def _where(backend: Backend) -> str:
    return safe_message(f"{backend.name}/{backend.model} at {display_url(getattr(backend, 'base_url', ''))}")
