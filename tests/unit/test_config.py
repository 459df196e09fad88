"""load_config: defaults, the TOML file, the environment and overrides in that order of precedence, the
one-line errors for bad values, masked keys, the readable-key warning, and make_backend's choices."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from pitree.config import (
    DEFAULT_MODELS,
    Config,
    ConfigError,
    default_config_path,
    load_config,
    make_backend,
)
from pitree.summary.backends.base import BackendError

KEY = "sk-config-SECRET-9876543210"


def write(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def load(
    tmp_path: Path,
    text: str | None = None,
    env: dict[str, str] | None = None,
    overrides: dict[str, object] | None = None,
) -> Config:
    path = write(tmp_path, text) if text is not None else tmp_path / "absent.toml"
    return load_config(path, env or {}, overrides)


def test_defaults_without_file_or_environment(tmp_path: Path) -> None:
    config = load(tmp_path)
    got = (config.summarizer, config.model, config.timeout, config.context_window, config.reserve_tokens)
    assert got == ("auto", None, 60.0, 128000, 16384)
    assert config.openai_api_key is None and config.anthropic_base_url is None
    assert config.path is None and config.warnings == []


def test_a_full_file(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        """
summarizer = "openai"
model = "llama3.1"
timeout = 12
context_window = 32000
reserve_tokens = 4000

[openai]
base_url = "http://localhost:11434/v1"
api_key = "ollama"
model = "qwen"

[anthropic]
base_url = "https://proxy.example"
api_key = "ak"
model = "claude-x"
""",
    )
    assert set(config.sources.values()) == {str(tmp_path / "config.toml")} and len(config.sources) == 11
    assert dataclasses.asdict(config) | {"path": None, "warnings": [], "sources": {}} == {
        "summarizer": "openai",
        "model": "llama3.1",
        "timeout": 12.0,
        "context_window": 32000,
        "reserve_tokens": 4000,
        "openai_base_url": "http://localhost:11434/v1",
        "openai_api_key": "ollama",
        "openai_model": "qwen",
        "anthropic_base_url": "https://proxy.example",
        "anthropic_api_key": "ak",
        "anthropic_model": "claude-x",
        "path": None,
        "warnings": [],
        "sources": {},
    }
    assert config.path == tmp_path / "config.toml" and isinstance(config.timeout, float)


FILE = 'summarizer = "anthropic"\nmodel = "file-model"\ntimeout = 10\n[openai]\napi_key = "file-key"\n'

# (file, env, overrides, expected settings): flags > env > file > defaults, field by field.
PRECEDENCE: list[tuple[str | None, dict[str, str], dict[str, object], dict[str, Any]]] = [
    (None, {}, {}, {"summarizer": "auto", "model": None, "timeout": 60.0, "openai_api_key": None}),
    (FILE, {}, {}, {"summarizer": "anthropic", "model": "file-model", "timeout": 10.0, "openai_api_key": "file-key"}),
    (
        FILE,
        {"PITREE_SUMMARIZER": "openai", "OPENAI_API_KEY": "env-key"},
        {},
        {"summarizer": "openai", "model": "file-model", "timeout": 10.0, "openai_api_key": "env-key"},
    ),
    (
        FILE,
        {"PITREE_MODEL": "env-model", "PITREE_TIMEOUT": "2.5"},
        {"model": "flag-model"},
        {"summarizer": "anthropic", "model": "flag-model", "timeout": 2.5},
    ),
    (
        FILE,
        {"PITREE_SUMMARIZER": "openai"},
        {"summarizer": "none", "timeout": 3},
        {"summarizer": "none", "timeout": 3.0},
    ),
    (
        None,
        {"PITREE_SUMMARIZER": "openai"},
        {"summarizer": None, "model": None},  # unset flags change nothing
        {"summarizer": "openai", "model": None},
    ),
    (
        FILE,
        {"PITREE_MODEL": "", "OPENAI_API_KEY": ""},
        {},  # empty variables count as unset
        {"model": "file-model", "openai_api_key": "file-key"},
    ),
    (
        None,
        {
            "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1",
            "ANTHROPIC_BASE_URL": "https://a.example",
            "ANTHROPIC_API_KEY": "ak",
        },
        {"openai_base_url": "http://flag/v1"},
        {"openai_base_url": "http://flag/v1", "anthropic_base_url": "https://a.example", "anthropic_api_key": "ak"},
    ),
    (
        None,
        {},
        {"context_window": "64000", "reserve_tokens": 1000, "timeout": "7"},
        {"context_window": 64000, "reserve_tokens": 1000, "timeout": 7.0},
    ),
]


@pytest.mark.parametrize(("file", "env", "overrides", "expected"), PRECEDENCE)
def test_precedence(
    tmp_path: Path, file: str | None, env: dict[str, str], overrides: dict[str, object], expected: dict[str, Any]
) -> None:
    config = load(tmp_path, file, env, overrides)
    assert {k: getattr(config, k) for k in expected} == expected


BAD_FILES = [
    ('summarizer = "gpt"', "summarizer: unknown summarizer 'gpt'"),
    ("summarizer = 3", "summarizer: must be a string"),
    ('timeout = "fast"', "timeout: must be a number of seconds"),
    ("timeout = true", "timeout: must be a number of seconds"),
    ("timeout = 0", "timeout: must be a positive number"),
    ("timeout = nan", "timeout: must be a positive number"),
    ("context_window = 1.5", "context_window: must be a whole number"),
    ("reserve_tokens = -1", "reserve_tokens: must be 0 or more"),
    ('model = ""', "model: must not be empty"),
    ('sumarizer = "openai"', "unknown setting 'sumarizer'"),
    ('openai = "x"', "[openai] must be a table"),
    ('[openai]\nkey = "x"', "unknown setting openai.key"),
    ('[openai]\nbase_url = "localhost:11434"', "openai.base_url: must be an http:// or https:// URL"),
    ("[anthropic]\napi_key = 5", "anthropic.api_key: must be a string"),
    ("summarizer = ", "invalid TOML"),
    ("[openai\n", "invalid TOML"),
]


@pytest.mark.parametrize(("text", "words"), BAD_FILES)
def test_bad_files_name_the_file(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, text)
    message = str(info.value)
    assert message.startswith(str(tmp_path / "config.toml") + ": ")
    assert words in message and "\n" not in message


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'model = "\xff"')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path, {})


def test_a_directory_is_not_a_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config(tmp_path, {})


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({"PITREE_TIMEOUT": "soon"}, "PITREE_TIMEOUT: must be a number of seconds, not 'soon'"),
        ({"PITREE_TIMEOUT": "-1"}, "PITREE_TIMEOUT: must be a positive number"),
        ({"PITREE_SUMMARIZER": "gpt4"}, "PITREE_SUMMARIZER: unknown summarizer 'gpt4'"),
        ({"OPENAI_BASE_URL": "ftp://x"}, "OPENAI_BASE_URL: must be an http:// or https:// URL"),
    ],
)
def test_bad_environment_names_the_variable(tmp_path: Path, env: dict[str, str], words: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, env=env)
    assert str(info.value) == words or str(info.value).startswith(words)


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"summarizer": "bogus"}, "--summarizer: unknown summarizer 'bogus'"),
        ({"timeout": "x"}, "--timeout: must be a number of seconds"),
        ({"context_window": True}, "--context-window: must be a whole number"),
        ({"colour": "red"}, "unknown setting 'colour'"),
        ({"context_window": 1000, "reserve_tokens": 1000}, "reserve_tokens (1000) must be smaller than"),
    ],
)
def test_bad_overrides(tmp_path: Path, overrides: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, overrides=overrides)
    assert words in str(info.value)


def test_repr_masks_keys(tmp_path: Path) -> None:
    config = load(tmp_path, f'[openai]\napi_key = "{KEY}"\n', {"ANTHROPIC_API_KEY": KEY + "-2"})
    for text in (repr(config), str(config), f"{config}", repr([config])):
        assert KEY not in text and "<hidden>" in text
    assert "anthropic_api_key='<hidden>'" in repr(config)
    assert "openai_api_key=None" in repr(load(tmp_path))
    assert config.openai_api_key == KEY  # masked in text only


@pytest.mark.parametrize(
    ("text", "mode", "warned"),
    [
        (f'[openai]\napi_key = "{KEY}"\n', 0o644, True),
        (f'[anthropic]\napi_key = "{KEY}"\n', 0o640, True),
        (f'[openai]\napi_key = "{KEY}"\n', 0o600, False),
        ('summarizer = "openai"\n', 0o644, False),
    ],
)
def test_warns_when_a_readable_file_holds_a_key(tmp_path: Path, text: str, mode: int, warned: bool) -> None:
    config = load_config(write(tmp_path, text, mode), {})
    assert bool(config.warnings) is warned
    if warned:
        assert "chmod 600" in config.warnings[0] and KEY not in config.warnings[0]


def test_config_file_location(tmp_path: Path) -> None:
    import platformdirs

    assert default_config_path({}) == platformdirs.user_config_path("pitree") / "config.toml"
    path = write(tmp_path, 'summarizer = "none"')
    assert default_config_path({"PITREE_CONFIG": str(path)}) == path
    assert load_config(env={"PITREE_CONFIG": str(path)}).summarizer == "none"


@pytest.mark.parametrize(
    ("fields", "summarizer", "model"),
    [
        ({}, "openai", DEFAULT_MODELS["openai"]),
        ({}, "anthropic", "claude-3-5-haiku-latest"),
        ({"openai_model": "qwen"}, "openai", "qwen"),
        ({"openai_model": "qwen"}, "anthropic", "claude-3-5-haiku-latest"),
        ({"openai_model": "qwen", "model": "explicit"}, "openai", "explicit"),
    ],
)
def test_model_resolution(fields: dict[str, Any], summarizer: str, model: str) -> None:
    config = Config(summarizer=summarizer, openai_api_key="k", anthropic_api_key="k", **fields)
    assert config.model_for() == model
    pytest.importorskip(summarizer)
    assert make_backend(config).model == model


@pytest.mark.parametrize(
    ("config", "words"),
    [
        (Config(summarizer="extractive"), "the extractive summarizer does not use a model"),
        (Config(summarizer="none"), "the none summarizer does not use a model"),
        (Config(summarizer="openai"), "openai: no API key: set OPENAI_API_KEY"),
        (Config(summarizer="anthropic", openai_api_key=KEY), "anthropic: no API key: set ANTHROPIC_API_KEY"),
    ],
)
def test_make_backend_refuses(config: Config, words: str) -> None:
    with pytest.raises(BackendError) as info:
        make_backend(config)
    assert str(info.value).startswith(words) and KEY not in str(info.value)


@pytest.mark.parametrize("name", ["openai", "anthropic"])
def test_make_backend_allows_no_key_for_a_local_server(name: str) -> None:
    pytest.importorskip(name)
    config = Config(summarizer=name, **{f"{name}_base_url": "http://127.0.0.1:11434/v1"})  # type: ignore[arg-type]
    backend = make_backend(config)
    assert backend.name == name and backend.model == DEFAULT_MODELS[name]


def test_replace_keeps_working(tmp_path: Path) -> None:
    # The jump dialog switches summarizer with dataclasses.replace.
    config = load(tmp_path, env={"OPENAI_API_KEY": KEY})
    assert dataclasses.replace(config, summarizer="openai").openai_api_key == KEY


# ---- Pi's agent folder (app/summary/pi_agent.py) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain-key", "plain-key"),
        ("MY_KEY", "MY_KEY"),  # a bare name is a literal
        ("$MY_KEY", "from-env"),
        ("${MY_KEY}-x", "from-env-x"),
        ("a$$b$!c", "a$b!c"),
        ("$UNSET_VAR", None),
        ("${not a name}", "${not a name}"),
        ("cost $5", "cost $5"),
    ],
)
def test_pi_key_values_resolve_like_pi(value: str, expected: str | None) -> None:
    from pitree.summary.pi_agent import resolve_value

    assert resolve_value(value, {"MY_KEY": "from-env"}, "test") == expected


def test_pi_key_command_needs_consent(tmp_path: Path) -> None:
    from pitree.summary.pi_agent import NeedsCommand, resolve_value

    marker = tmp_path / "ran"
    with pytest.raises(NeedsCommand):
        resolve_value(f"!touch {marker}; echo k", {}, "test")
    assert not marker.exists()
    assert resolve_value(f"!touch {marker}; echo ' k1 '", {}, "test", allow_command=True) == "k1"
    assert marker.exists()
    assert resolve_value("!exit 3", {}, "test", allow_command=True) is None


def test_pi_key_order_auth_then_models_then_env(tmp_path: Path) -> None:
    import orjson
    from pitree.summary.pi_agent import PiAgentError, pi_model

    env = {"PI_CODING_AGENT_DIR": str(tmp_path), "ANTHROPIC_API_KEY": "from-env"}
    assert pi_model("anthropic", "claude-x", env).api_key == "from-env"
    (tmp_path / "models.json").write_bytes(orjson.dumps({"providers": {"anthropic": {"apiKey": "from-models"}}}))
    assert pi_model("anthropic", "claude-x", env).api_key == "from-models"
    (tmp_path / "auth.json").write_bytes(orjson.dumps({"anthropic": {"type": "api_key", "key": "from-auth"}}))
    got = pi_model("anthropic", "claude-x", env)
    assert got.api_key == "from-auth" and "from-auth" not in repr(got) and got.context_window is None
    (tmp_path / "auth.json").write_bytes(orjson.dumps({"anthropic": {"type": "oauth", "access": "t"}}))
    with pytest.raises(PiAgentError, match="OAuth"):
        pi_model("anthropic", "claude-x", env)
    with pytest.raises(PiAgentError, match="google-generative-ai"):
        _google(tmp_path, env)
    (tmp_path / "settings.json").write_bytes(
        orjson.dumps({"defaultProvider": "openai", "defaultModel": "gpt-x", "branchSummary": {"reserveTokens": 999}})
    )
    got = pi_model(None, None, {**env, "OPENAI_API_KEY": "oa"})
    assert (got.provider, got.model, got.api, got.reserve_tokens) == ("openai", "gpt-x", "openai-completions", 999)


def _google(tmp_path: Path, env: dict[str, str]) -> None:
    import orjson
    from pitree.summary.pi_agent import pi_model

    models = {"providers": {"google": {"api": "google-generative-ai", "baseUrl": "https://g", "apiKey": "k"}}}
    (tmp_path / "models.json").write_bytes(orjson.dumps(models))
    pi_model("google", "gemini", env)


def test_pi_anthropic_oauth_token_in_the_environment_is_refused(tmp_path: Path) -> None:
    from pitree.summary.pi_agent import PiAgentError, pi_model

    env = {"PI_CODING_AGENT_DIR": str(tmp_path), "ANTHROPIC_OAUTH_TOKEN": "sk-ant-oat01-x", "ANTHROPIC_API_KEY": "k"}
    with pytest.raises(PiAgentError, match="OAuth token"):
        pi_model("anthropic", "claude-x", env)  # Pi would pick the OAuth token first; pitree cannot use it
    assert pi_model("anthropic", "claude-x", {**env, "ANTHROPIC_OAUTH_TOKEN": ""}).api_key == "k"


def test_pi_names_from_the_session_reach_messages_made_safe(tmp_path: Path) -> None:
    from pitree.summary.pi_agent import PiAgentError, pi_model

    with pytest.raises(PiAgentError) as info:
        pi_model("evil\x1b[2J\u202eprov", "m\x07", {"PI_CODING_AGENT_DIR": str(tmp_path)})
    assert str(info.value).isprintable() and "\x1b" not in str(info.value)


def test_offline_budget_is_pis_for_the_session(tmp_path: Path) -> None:
    import orjson
    from pitree.config import load_config
    from pitree.session.load import load_bytes
    from pitree.summary.choose import choose

    from tests.sessions import assistant, to_bytes, user

    tree = load_bytes(to_bytes([user("u", None, "hi"), assistant("a", "u", "yo", provider="openai", model="gpt-4o")]))
    env = {"PI_CODING_AGENT_DIR": str(tmp_path), "PITREE_CONFIG": str(tmp_path / "none.toml")}
    (tmp_path / "settings.json").write_bytes(orjson.dumps({"branchSummary": {"reserveTokens": 1000}}))
    choice = choose(load_config(overrides={"summarizer": "extractive"}, env=env), tree, env)
    assert (choice.context_window, choice.reserve_tokens) == (128000, 1000)  # gpt-4o's window in Pi's catalog
    flags = {"summarizer": "extractive", "context_window": 5000, "reserve_tokens": 100}
    choice = choose(load_config(overrides=flags, env=env), tree, env)
    assert (choice.context_window, choice.reserve_tokens) == (5000, 100)
