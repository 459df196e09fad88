"""pitree's settings (`Config`), where they come from (`load_config`), and the backend they pick
(`make_backend`).

Precedence, highest first: overrides (CLI flags), environment, the config file, defaults. The file is
`config.toml` in `platformdirs.user_config_path("pitree")` (on Linux `~/.config/pitree/config.toml`), or the
file named by `PITREE_CONFIG`:

    summarizer = "openai"          # auto (default) | pi | extractive | openai | anthropic | none
    model = "llama3.1"             # for whichever summarizer is used; else the provider's model below
    timeout = 60                   # seconds to wait for the connection and for each piece of the answer
    context_window = 128000
    reserve_tokens = 16384

    [openai]                       # any OpenAI-compatible server: OpenAI, Ollama, llama.cpp, vLLM, LM Studio
    base_url = "http://localhost:11434/v1"
    api_key = "..."                # not needed when base_url names a local server
    model = "llama3.1"

    [anthropic]
    api_key = "..."
    model = "claude-3-5-haiku-latest"

Environment: OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, PITREE_SUMMARIZER,
PITREE_MODEL, PITREE_TIMEOUT (an empty variable counts as unset). Bad values raise `ConfigError`, one line
naming the file or variable.
"""

from __future__ import annotations

import math
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pitree.summary.backends.base import Backend, BackendError

SUMMARIZERS = ("auto", "pi", "extractive", "openai", "anthropic", "none")
MODEL_SUMMARIZERS = ("openai", "anthropic")
DEFAULT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-3-5-haiku-latest"}
_SECRETS = ("openai_api_key", "anthropic_api_key")


class ConfigError(Exception):
    """A setting is invalid; the message is one line naming where it came from."""


@dataclass
class Config:
    summarizer: str = "auto"
    model: str | None = None
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    openai_model: str | None = None
    anthropic_base_url: str | None = None
    anthropic_api_key: str | None = None
    anthropic_model: str | None = None
    timeout: float = 60.0
    context_window: int = 128000
    reserve_tokens: int = 16384
    path: Path | None = None
    """The config file that was read, if there was one."""
    warnings: list[str] = field(default_factory=list)
    """Things the user should know that did not stop loading (a readable file holding a key)."""
    sources: dict[str, str] = field(default_factory=dict)
    """Where each set field came from: the config file's path, the variable, or the flag."""

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            shown = ("'<hidden>'" if value else "None") if f.name in _SECRETS else repr(value)
            parts.append(f"{f.name}={shown}")
        return f"Config({', '.join(parts)})"

    __str__ = __repr__

    def model_for(self, summarizer: str | None = None) -> str:
        """The model a summarizer uses: `model`, else the provider's own `model`, else its default."""
        name = summarizer or self.summarizer
        own = {"openai": self.openai_model, "anthropic": self.anthropic_model}.get(name)
        return self.model or own or DEFAULT_MODELS.get(name, "")


# Where each setting lives in the file: top-level key or (table, key).
_FILE_KEYS: dict[str, tuple[str, ...]] = {
    "summarizer": ("summarizer",),
    "model": ("model",),
    "timeout": ("timeout",),
    "context_window": ("context_window",),
    "reserve_tokens": ("reserve_tokens",),
    "openai_base_url": ("openai", "base_url"),
    "openai_api_key": ("openai", "api_key"),
    "openai_model": ("openai", "model"),
    "anthropic_base_url": ("anthropic", "base_url"),
    "anthropic_api_key": ("anthropic", "api_key"),
    "anthropic_model": ("anthropic", "model"),
}
_ENV_KEYS = {
    "OPENAI_API_KEY": "openai_api_key",
    "OPENAI_BASE_URL": "openai_base_url",
    "ANTHROPIC_API_KEY": "anthropic_api_key",
    "ANTHROPIC_BASE_URL": "anthropic_base_url",
    "PITREE_SUMMARIZER": "summarizer",
    "PITREE_MODEL": "model",
    "PITREE_TIMEOUT": "timeout",
}
_SETTINGS = frozenset(_FILE_KEYS)
_NUMBERS = frozenset({"timeout", "context_window", "reserve_tokens"})


def default_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("PITREE_CONFIG"):
        return Path(env["PITREE_CONFIG"]).expanduser()
    import platformdirs

    return platformdirs.user_config_path("pitree") / "config.toml"


def parse_config_file(data: bytes, source: str) -> dict[str, Any]:
    """The settings in a config file's bytes, by Config field name, checked; `source` names it in errors."""
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from None
    tables = {"openai", "anthropic"}
    top = {k for k, *rest in _FILE_KEYS.values() if not rest}
    for key, value in doc.items():
        if key in tables:
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: [{key}] must be a table")
            allowed = {p[1] for p in _FILE_KEYS.values() if p[0] == key and len(p) == 2}
            for sub in value:
                if sub not in allowed:
                    known = ", ".join(sorted(allowed))
                    raise ConfigError(f"{source}: unknown setting {key}.{sub} (known: {known})")
        elif key not in top:
            raise ConfigError(f"{source}: unknown setting {key!r} (known: {', '.join(sorted(top | tables))})")
    out: dict[str, Any] = {}
    for name, where in _FILE_KEYS.items():
        node: Any = doc
        for part in where:
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None:
            out[name] = _check(name, node, f"{source}: {'.'.join(where)}")
    return out


def _check(name: str, value: object, where: str) -> Any:
    """`value` as the type of setting `name`, or ConfigError naming `where`."""
    if name == "timeout":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}: must be a number of seconds, not {value!r}")
        if not math.isfinite(value) or value <= 0:
            raise ConfigError(f"{where}: must be a positive number of seconds, not {value!r}")
        return float(value)
    if name in ("context_window", "reserve_tokens"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: must be a whole number of tokens, not {value!r}")
        if value < (1 if name == "context_window" else 0):
            raise ConfigError(
                f"{where}: must be {'positive' if name == 'context_window' else '0 or more'}, not {value}"
            )
        return value
    if not isinstance(value, str):
        raise ConfigError(f"{where}: must be a string, not {type(value).__name__}")
    if name == "summarizer":
        if value not in SUMMARIZERS:
            raise ConfigError(f"{where}: unknown summarizer {value!r} (use {', '.join(SUMMARIZERS)})")
        return value
    if name.endswith("_base_url"):
        if not value.startswith(("http://", "https://")):
            raise ConfigError(f"{where}: must be an http:// or https:// URL, not {value!r}")
        return value
    if not value.strip():
        raise ConfigError(f"{where}: must not be empty")
    return value


def _number(name: str, raw: str, where: str) -> float | int:
    try:
        return float(raw) if name == "timeout" else int(raw)
    except ValueError:
        unit = "seconds" if name == "timeout" else "tokens"
        raise ConfigError(f"{where}: must be a number of {unit}, not {raw!r}") from None


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for var, name in _ENV_KEYS.items():
        raw = env.get(var)
        if not raw:
            continue
        out[name] = _check(name, _number(name, raw, var) if name in _NUMBERS else raw, var)
    return out


def _read_file(path: Path) -> tuple[bytes | None, os.stat_result | None]:
    # Reading here, not in store/: the one small read of the user's own settings file.
    try:
        st = path.stat()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path}: not a regular file")
    try:
        return path.read_bytes(), st
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None


def load_config(
    path: Path | None = None, env: Mapping[str, str] | None = None, overrides: Mapping[str, object] | None = None
) -> Config:
    """The settings from defaults, the file, the environment and `overrides` (highest), checked.

    `path` defaults to `default_config_path(env)`; a missing file is fine. `env` defaults to os.environ.
    `overrides` uses Config field names; a None value means "not given" (an unset CLI flag).
    """
    env = os.environ if env is None else env
    path = default_config_path(env) if path is None else path
    settings: dict[str, Any] = {}
    sources: dict[str, str] = {}
    warnings: list[str] = []
    data, st = _read_file(path)
    found = data is not None
    if data is not None:
        from_file = parse_config_file(data, str(path))
        settings.update(from_file)
        sources.update(dict.fromkeys(from_file, str(path)))
        readable = st is not None and st.st_mode & (stat.S_IRGRP | stat.S_IROTH)
        if readable and any(from_file.get(k) for k in _SECRETS):
            warnings.append(f"{path} holds an API key and other users can read it: chmod 600 {path}")
    from_env = _from_env(env)
    settings.update(from_env)
    sources.update({name: var for var, name in _ENV_KEYS.items() if name in from_env and env.get(var)})
    for name, value in (overrides or {}).items():
        if value is None:
            continue
        if name not in _SETTINGS:
            raise ConfigError(f"unknown setting {name!r}")
        if isinstance(value, str) and name in _NUMBERS:
            value = _number(name, value, f"--{name.replace('_', '-')}")
        settings[name] = _check(name, value, f"--{name.replace('_', '-')}")
        sources[name] = f"--{name.replace('_', '-')}"
    config = Config(**settings, path=path if found else None, warnings=warnings, sources=sources)
    if config.reserve_tokens >= config.context_window:
        raise ConfigError(
            f"reserve_tokens ({config.reserve_tokens}) must be smaller than context_window ({config.context_window})"
        )
    return config


def configured_provider(config: Config) -> str | None:
    """The model summarizer pitree's config file sets up (a key or server in its table), if any. A key only in
    the environment does not count: Pi's own resolution finds it for the session's provider anyway."""
    where = str(config.path) if config.path else None
    for name in MODEL_SUMMARIZERS:
        if where and where in (config.sources.get(f"{name}_api_key"), config.sources.get(f"{name}_base_url")):
            return name
    return None


def make_backend(config: Config) -> Backend:
    """The model backend `config.summarizer` names; BackendError if it has none or lacks what it needs."""
    name = config.summarizer
    if name not in MODEL_SUMMARIZERS:
        raise BackendError(f"the {name} summarizer does not use a model")
    key = config.openai_api_key if name == "openai" else config.anthropic_api_key
    base_url = config.openai_base_url if name == "openai" else config.anthropic_base_url
    if not key:
        if not base_url:
            var = "OPENAI_API_KEY" if name == "openai" else "ANTHROPIC_API_KEY"
            raise BackendError(
                f"{name}: no API key: set {var}, or api_key in the [{name}] table of "
                f"{config.path or default_config_path()}"
            )
        key = "not-needed"  # a local OpenAI- or Anthropic-compatible server that takes no key
    model = config.model_for(name)
    if name == "openai":
        from pitree.summary.backends.openai_backend import OpenAIBackend

        return OpenAIBackend(key, base_url, model, config.timeout)
    from pitree.summary.backends.anthropic_backend import AnthropicBackend

    return AnthropicBackend(key, base_url, model, config.timeout)
