"""Pi's own agent folder (`PI_CODING_AGENT_DIR` or `~/.pi/agent`): settings, models and credentials, read the
way Pi 1.6 reads them, so a branch summary can use the session's provider and model with no setup in pitree.

Key resolution is Pi's (`auth-storage`, `model-registry`, `resolve-config-value`): `auth.json` >
`models.json` provider `apiKey` > the provider's environment variable. A value starting with `!` is a shell
command; pitree runs it only when the caller passes `allow_command=True` (the user agreed). `$NAME` and
`${NAME}` interpolate the environment, `$$` is `$`, `$!` is `!`, anything else (a bare `NAME` too) is literal.
Only the APIs pitree speaks are usable: `openai-completions` (and OpenAI's own API through chat
completions) and `anthropic-messages`. OAuth logins and other APIs give a one-line reason instead.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

# Built-in providers whose API pitree speaks, with Pi's base URL (pi-ai 1.6 model catalog).
BUILTIN: dict[str, tuple[str, str]] = {
    "anthropic": ("anthropic-messages", "https://api.anthropic.com"),
    "openai": ("openai-completions", "https://api.openai.com/v1"),
    "deepseek": ("openai-completions", "https://api.deepseek.com"),
    "groq": ("openai-completions", "https://api.groq.com/openai/v1"),
    "cerebras": ("openai-completions", "https://api.cerebras.ai/v1"),
    "openrouter": ("openai-completions", "https://openrouter.ai/api/v1"),
    "together": ("openai-completions", "https://api.together.ai/v1"),
    "huggingface": ("openai-completions", "https://router.huggingface.co/v1"),
    "moonshotai": ("openai-completions", "https://api.moonshot.ai/v1"),
    "nvidia": ("openai-completions", "https://integrate.api.nvidia.com/v1"),
    "zai": ("openai-completions", "https://api.z.ai/api/coding/paas/v4"),
    "fireworks": ("openai-completions", "https://api.fireworks.ai/inference/v1"),
    "minimax": ("anthropic-messages", "https://api.minimax.io/anthropic"),
}
# pi-ai's getApiKeyEnvVars for the providers above (anthropic: ANTHROPIC_AUTH_TOKEN is a bearer token, skipped).
ENV_KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "moonshotai": ("MOONSHOT_API_KEY",),
    "nvidia": ("NVIDIA_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
}
SUPPORTED_APIS = ("openai-completions", "anthropic-messages")
COMMAND_TIMEOUT = 10.0
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class PiAgentError(Exception):
    """Pi's agent folder gives no usable model; the message is one printable line saying why (names in it come
    from the session and Pi's files, so they are made safe here)."""

    def __init__(self, message: str) -> None:
        from pitree.summary.backends.base import safe_message

        super().__init__(safe_message(message))


class NeedsCommand(PiAgentError):
    """The key is a `!command`: run only with the user's consent (`allow_command=True`)."""

    def __init__(self, command: str, where: str) -> None:
        self.command, self.where = command, where
        super().__init__(f"the API key in {where} is a shell command ({command[:80]}); run it only if you trust it")


@dataclass
class PiModel:
    """What pitree needs to ask the model Pi would ask."""

    provider: str
    model: str
    api: str
    base_url: str
    api_key: str
    key_from: str  # where the key came from, for messages (never the key)
    context_window: int | None
    max_tokens: int | None
    reserve_tokens: int
    headers: dict[str, str]

    def __repr__(self) -> str:
        return f"PiModel({self.provider}/{self.model}, {self.api}, {self.base_url}, key from {self.key_from})"


def agent_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    raw = env.get("PI_CODING_AGENT_DIR")
    if raw:
        return Path(raw).expanduser()
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".pi" / "agent"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError as exc:
        raise PiAgentError(f"{path}: {exc.strerror or exc}") from None
    except ValueError:  # a path from a session file holding a NUL
        return {}
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise PiAgentError(f"{path}: not valid JSON") from None
    if not isinstance(doc, dict):
        raise PiAgentError(f"{path}: not a JSON object")
    return doc


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def read_settings(env: Mapping[str, str] | None = None, cwd: str | None = None) -> dict[str, Any]:
    """Global settings.json deep-merged with the project's `<cwd>/.pi/settings.json` (Pi's SettingsManager)."""
    settings = _read_json(agent_dir(env) / "settings.json")
    if cwd and os.path.isabs(cwd):
        settings = _merge(settings, _read_json(Path(cwd) / ".pi" / "settings.json"))
    return settings


def resolve_value(value: str, env: Mapping[str, str], where: str, allow_command: bool = False) -> str | None:
    """Pi's resolveConfigValue: a `!command`'s trimmed stdout (consent needed), or the template resolved;
    None when a named variable is unset or the command fails."""
    if value.startswith("!"):
        command = value[1:]
        if not allow_command:
            raise NeedsCommand(command, where)
        try:
            out = subprocess.run(
                command, shell=True, capture_output=True, timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        text = out.stdout.decode("utf-8", "replace").strip()
        return text if out.returncode == 0 and text else None
    parts: list[str] = []
    i = 0
    while i < len(value):
        j = value.find("$", i)
        if j < 0:
            parts.append(value[i:])
            break
        parts.append(value[i:j])
        nxt = value[j + 1 : j + 2]
        if nxt in ("$", "!"):
            parts.append(nxt)
            i = j + 2
            continue
        if nxt == "{":
            end = value.find("}", j + 2)
            if end < 0:
                parts.append("$")
                i = j + 1
                continue
            name = value[j + 2 : end]
            if _ENV_NAME.fullmatch(name):
                if not env.get(name):
                    return None
                parts.append(env[name])
            else:
                parts.append(value[j : end + 1])
            i = end + 1
            continue
        m = _ENV_NAME.match(value, j + 1)
        if m:
            if not env.get(m.group()):
                return None
            parts.append(env[m.group()])
            i = m.end()
            continue
        parts.append("$")
        i = j + 1
    return "".join(parts)


def _provider_key(
    provider: str, auth: dict[str, Any], custom: dict[str, Any], env: Mapping[str, str], allow_command: bool, adir: Path
) -> tuple[str, str] | None:
    """(key, where it came from) in Pi's order, or None; PiAgentError for an OAuth login."""
    cred = auth.get(provider)
    if isinstance(cred, dict):
        where = f"{adir / 'auth.json'} ({provider})"
        if cred.get("type") == "oauth":
            raise PiAgentError(
                f"{provider}: Pi is logged in with OAuth ({where}); pitree cannot use an OAuth login. "
                "Set an API key in pitree's config or the environment, or use the offline summary"
            )
        if cred.get("type") == "api_key":
            extra = cred.get("env")
            pairs = extra.items() if isinstance(extra, dict) else ()
            scoped = {**env, **{k: v for k, v in pairs if isinstance(v, str)}}
            if isinstance(cred.get("key"), str):
                key = resolve_value(cred["key"], scoped, where, allow_command)
                if key:
                    return key, where
    if isinstance(custom.get("apiKey"), str):
        where = f"{adir / 'models.json'} (providers.{provider}.apiKey)"
        key = resolve_value(custom["apiKey"], env, where, allow_command)
        if key:
            return key, where
    for var in ENV_KEYS.get(provider, ()):
        if env.get(var):
            if var.endswith("_OAUTH_TOKEN") or env[var].startswith("sk-ant-oat"):
                raise PiAgentError(
                    f"{provider}: the key in ${var} is an OAuth token; pitree cannot use an OAuth login. "
                    "Set an API key in pitree's config or the environment, or use the offline summary"
                )
            return env[var], f"${var}"
    return None


def pi_model(
    provider: str | None,
    model: str | None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    allow_command: bool = False,
    own: Mapping[str, tuple[str, str]] | None = None,
) -> PiModel:
    """The model Pi would summarize with: `provider`/`model` (the session's), else settings' defaults.

    `own` maps a provider to pitree's own (API key, where it was set): it wins over Pi's credentials.
    PiAgentError (or NeedsCommand) says why there is none."""
    env = os.environ if env is None else env
    adir = agent_dir(env)
    settings = read_settings(env, cwd)
    if not provider and isinstance(settings.get("defaultProvider"), str):
        provider = settings["defaultProvider"]
    if not model and isinstance(settings.get("defaultModel"), str):
        model = settings["defaultModel"]
    if not provider or not model:
        raise PiAgentError(f"no model: the session names none and {adir / 'settings.json'} has no default")
    providers = _read_json(adir / "models.json").get("providers")
    custom = providers.get(provider) if isinstance(providers, dict) else None
    custom = custom if isinstance(custom, dict) else {}
    api, base_url = BUILTIN.get(provider, (None, None))
    api = custom.get("api") if isinstance(custom.get("api"), str) else api
    base_url = custom.get("baseUrl") if isinstance(custom.get("baseUrl"), str) else base_url
    entry: dict[str, Any] = {}
    models = custom.get("models")
    for m in models if isinstance(models, list) else []:
        if isinstance(m, dict) and m.get("id") == model:
            entry = m
            api = m.get("api") if isinstance(m.get("api"), str) else api
            base_url = m.get("baseUrl") if isinstance(m.get("baseUrl"), str) else base_url
    if api == "openai-responses" and provider == "openai":
        api = "openai-completions"  # OpenAI's own API serves chat completions for the same models
    if api not in SUPPORTED_APIS or not base_url:
        what = f"API {api}" if api else "an API pitree does not know"
        raise PiAgentError(f"{provider}/{model} uses {what}; pitree speaks openai-completions and anthropic-messages")
    found = (own or {}).get(provider) or _provider_key(
        provider, _read_json(adir / "auth.json"), custom, env, allow_command, adir
    )
    if found is None:
        raise PiAgentError(f"{provider}: no API key in {adir} or the environment")
    headers: dict[str, str] = {}
    if isinstance(custom.get("headers"), dict):
        for k, v in custom["headers"].items():
            resolved = resolve_value(v, env, f"models.json headers.{k}", allow_command) if isinstance(v, str) else None
            if resolved:
                headers[str(k)] = resolved
    branch = settings.get("branchSummary")
    reserve = branch.get("reserveTokens") if isinstance(branch, dict) else None
    window = entry.get("contextWindow")
    max_tokens = entry.get("maxTokens")
    if window is None:
        from pitree.store.model_info import context_window

        window = context_window(provider, model)
    return PiModel(
        provider,
        model,
        api,
        base_url,
        found[0],
        found[1],
        window if isinstance(window, int) and window > 0 else None,
        max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else None,
        reserve if isinstance(reserve, int) and not isinstance(reserve, bool) and reserve >= 0 else 16384,
        headers,
    )
