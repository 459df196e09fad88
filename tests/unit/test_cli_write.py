"""`pitree branch` with model summarizers against a real local HTTP server, and the consented migration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from pitree.summary.prepare import BRANCH_SUMMARY_PREAMBLE, SUMMARIZATION_SYSTEM_PROMPT

from tests.llm_server import FakeLLMServer, garbage, hang, ok, status

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo.jsonl"
DATA = Path(__file__).resolve().parents[1] / "data"


def pitree(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pitree.cli.main", *args],
        capture_output=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    os.utime(path, (1, 1))
    return path


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_model_summary_is_wrapped_like_pi(demo: Path, provider: str) -> None:
    with FakeLLMServer() as server:
        server.script(ok("## Goal\nModel summary.", chunks=4))
        url = server.openai_url if provider == "openai" else server.anthropic_url
        env = {f"{provider.upper()}_BASE_URL": url, f"{provider.upper()}_API_KEY": "sk-test-secret"}
        out = pitree("branch", str(demo), "--to", "ae1a42a9", "--summary", provider, "--yes", "--json", env=env)
        assert out.returncode == 0, out.stderr
        body = server.requests[-1].body
    result = orjson.loads(out.stdout)
    summary = result["summary"]
    assert summary.startswith(BRANCH_SUMMARY_PREAMBLE + "## Goal\nModel summary.")
    assert "<modified-files>" in summary and b"sk-test-secret" not in demo.read_bytes()
    sent = orjson.dumps(body).decode()
    assert SUMMARIZATION_SYSTEM_PROMPT[:60] in sent and "<conversation>" in sent and "2048" in sent
    last = orjson.loads(demo.read_bytes().splitlines()[-1])
    assert last["type"] == "branch_summary" and last["summary"] == summary and last["parentId"] == "ae1a42a9"


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        (status(401, "bad key"), "authentication"),
        (status(429, "slow down", retry_after="0"), "rate"),
        (status(500), "HTTP 500"),
        (hang(), "no answer"),
        (garbage(after=1), "not JSON"),  # issue #21.5: was a traceback
        (ok("x" * 80_000, chunks=40), "passed 16,384 tokens"),  # issue #21.8: a server ignoring max_tokens
    ],
)
def test_model_errors_write_nothing(demo: Path, behaviour, message: str) -> None:  # type: ignore[no-untyped-def]
    before = demo.read_bytes()
    with FakeLLMServer() as server:
        server.script(behaviour)
        env = {"OPENAI_BASE_URL": server.openai_url, "OPENAI_API_KEY": "sk-test-secret", "PITREE_TIMEOUT": "1"}
        out = pitree("branch", str(demo), "--to", "ae1a42a9", "--summary", "openai", "--yes", "--json", env=env)
    assert out.returncode == 1 and demo.read_bytes() == before
    err = out.stderr.decode()
    assert message.lower() in err.lower() and "nothing written" in err and "sk-test-secret" not in err
    lines = err.strip().splitlines()
    retries = [ln for ln in lines if "rate limited; retry" in ln]
    assert len(retries) == (3 if message == "rate" else 0) and len(lines) == 1 + len(retries)


def test_v1_file_needs_consent_then_migrates_with_backup(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    original = (DATA / "v1_linear.jsonl").read_bytes()
    path.write_bytes(original)
    os.utime(path, (1, 1))
    tree = orjson.loads(pitree("tree", str(path), "--json", "--filter", "all").stdout)
    target = tree["rows"][1]["id"]
    refused = pitree("branch", str(path), "--to", target, "--summary", "none", "--yes")
    assert refused.returncode == 1 and b"--migrate" in refused.stderr and path.read_bytes() == original
    done = pitree("branch", str(path), "--to", target, "--summary", "none", "--yes", "--migrate", "--json")
    assert done.returncode == 0, done.stderr
    backups = list(tmp_path.glob("old.jsonl.bak-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == original
    migrated = orjson.loads(pitree("tree", str(path), "--json", "--filter", "all").stdout)
    assert migrated["session"]["version"] == 3 and not migrated["skipped"]
    assert migrated["leaf"] == orjson.loads(done.stdout)["appended"]["id"]
    assert {r["id"] for r in tree["rows"]} <= {r["id"] for r in migrated["rows"]}  # pitree's ids survived


# ---- issue #20.1: config file, environment, flags; consent; Pi's agent folder ---------------------------


def _last(path: Path) -> dict:
    return orjson.loads(path.read_bytes().splitlines()[-1])


@pytest.mark.parametrize(
    ("config", "env", "words"),
    [
        ('summarizer = "gpt"\n', {}, "unknown summarizer 'gpt'"),
        ("", {"PITREE_SUMMARIZER": "gpt"}, "PITREE_SUMMARIZER: unknown summarizer 'gpt'"),
        ('colour = "blue"\n', {}, "unknown setting 'colour'"),
    ],
)
def test_bad_settings_stop_branch_before_writing(
    demo: Path, tmp_path: Path, config: str, env: dict, words: str
) -> None:
    conf = tmp_path / "config.toml"
    conf.write_text(config)
    before = demo.read_bytes()
    out = pitree("branch", str(demo), "--to", "ae1a42a9", "--yes", env={"PITREE_CONFIG": str(conf), **env})
    assert out.returncode == 1 and demo.read_bytes() == before
    assert words in out.stderr.decode()


def test_config_file_model_summarizer_is_used_and_flags_win(demo: Path, tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.script(ok("## Goal\nFrom the configured model.", usage=(10, 5)))
        conf = tmp_path / "config.toml"
        conf.write_text(f'summarizer = "openai"\n[openai]\nbase_url = "{server.openai_url}"\napi_key = "sk-file"\n')
        out = pitree("branch", str(demo), "--to", "ae1a42a9", "--yes", "--json", env={"PITREE_CONFIG": str(conf)})
        assert out.returncode == 0, out.stderr
        assert len(server.requests) == 1
        assert "From the configured model." in _last(demo)["summary"]
        assert _last(demo)["usage"]["output"] == 5 and _last(demo)["fromHook"] is False
        # The environment beats the file, and a flag beats both: extractive, nothing sent.
        env = {"PITREE_CONFIG": str(conf), "PITREE_SUMMARIZER": "anthropic"}
        out = pitree("branch", str(demo), "--to", "ae1a42a9", "--summary", "extractive", "--yes", env=env)
        assert out.returncode == 0, out.stderr
        assert len(server.requests) == 1 and "## Goal" in _last(demo)["summary"] and "usage" not in _last(demo)


def test_offline_summary_says_instructions_are_not_used(demo: Path) -> None:
    out = pitree("branch", str(demo), "--to", "ae1a42a9", "--summary", "extractive", "--instructions", "focus", "--yes")
    assert out.returncode == 0 and "cannot follow --instructions" in out.stderr.decode()


def _pi_agent(tmp_path: Path, base_url: str, auth: dict | None = None, key: str = "sk-pi") -> dict[str, str]:
    agent = tmp_path / "agent"
    agent.mkdir()
    models = {"providers": {"anthropic": {"baseUrl": base_url, "apiKey": key}}}
    (agent / "models.json").write_bytes(orjson.dumps(models))
    if auth is not None:
        (agent / "auth.json").write_bytes(orjson.dumps(auth))
    return {"PI_CODING_AGENT_DIR": str(agent)}


def test_auto_uses_the_sessions_model_from_pis_folder_only_with_consent(demo: Path, tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.script(ok("## Goal\nVia Pi's folder."))
        env = _pi_agent(tmp_path, server.anthropic_url)
        out = pitree("branch", str(demo), "--to", "ae1a42a9", "--yes", env=env)
        assert out.returncode == 0 and server.requests == []  # no tty, no --send: offline
        assert "without consent" in out.stderr.decode() and "## Goal" in _last(demo)["summary"]
        out = pitree("branch", str(demo), "--to", "ae1a42a9", "--yes", "--send", env=env)
        assert out.returncode == 0, out.stderr
        [request] = server.requests
    assert request.headers.get("x-api-key") == "sk-pi" or request.headers.get("authorization") == "Bearer sk-pi"
    assert request.body["model"] == "claude-sonnet-4-5"  # the demo session's own model
    assert "Via Pi's folder." in _last(demo)["summary"]


def test_pi_oauth_login_gives_a_clear_message_and_the_offline_summary(demo: Path, tmp_path: Path) -> None:
    env = _pi_agent(
        tmp_path, "http://127.0.0.1:9", auth={"anthropic": {"type": "oauth", "access": "a", "refresh": "r"}}
    )
    out = pitree("branch", str(demo), "--to", "ae1a42a9", "--yes", "--send", env=env)
    assert out.returncode == 0 and "OAuth" in out.stderr.decode() and "offline summary" in out.stderr.decode()
    out = pitree("branch", str(demo), "--to", "ae1a42a9", "--summary", "pi", "--yes", env=env)
    assert out.returncode == 1 and "OAuth" in out.stderr.decode()


def test_key_command_runs_only_when_allowed(demo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with FakeLLMServer() as server:
        server.script(ok("## Goal\nKey from a command."))
        env = _pi_agent(tmp_path, server.anthropic_url, key=f"!touch {marker} && echo sk-cmd")
        out = pitree("branch", str(demo), "--to", "ae1a42a9", "--summary", "pi", "--yes", env=env)
        assert out.returncode == 1 and "--allow-key-command" in out.stderr.decode() and not marker.exists()
        out = pitree(
            "branch", str(demo), "--to", "ae1a42a9", "--summary", "pi", "--allow-key-command", "--yes", env=env
        )
        assert out.returncode == 0, out.stderr
        assert marker.exists() and len(server.requests) == 1


def test_jump_writes_pi16_from_id_and_no_content(tmp_path: Path) -> None:
    from tests.sessions import assistant, entry, tool_result, user, write_session

    # SPEC-pi1 C10: leaf L, jump to user T (parent P) with a summary.
    path = write_session(tmp_path, [user("P", None, "p"), user("T", "P", "t"), assistant("L", "T", "answer")])
    out = pitree("branch", str(path), "--to", "T", "--summary", "extractive", "--yes")
    assert out.returncode == 0, out.stderr
    last = _last(path)
    assert (last["type"], last["parentId"], last["fromId"], last["fromHook"]) == ("branch_summary", "P", "L", False)
    # C11: only a toolResult and a model_change left behind.
    entries = [
        user("u", None, "go"),
        assistant("a", "u", "", calls=(("c", "read", {"path": "f.py"}),)),
        tool_result("r", "a", "c"),
        entry("model_change", "m", "r", provider="p", modelId="x"),
    ]
    path = write_session(tmp_path, entries, name="c11.jsonl")
    out = pitree("branch", str(path), "--to", "a", "--summary", "extractive", "--yes")
    assert out.returncode == 0, out.stderr
    last = _last(path)
    assert last["summary"] == "No content to summarize"
    assert last["details"] == {"readFiles": [], "modifiedFiles": []} and "usage" not in last


def test_pitrees_own_key_wins_over_pis_login(demo: Path, tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.script(ok("## Goal\nWith pitree's key."))
        auth = {"anthropic": {"type": "oauth", "access": "a", "refresh": "r"}}
        env = {**_pi_agent(tmp_path, server.anthropic_url, auth=auth), "ANTHROPIC_API_KEY": "sk-pitree"}
        out = pitree("branch", str(demo), "--to", "ae1a42a9", "--summary", "pi", "--yes", env=env)
        assert out.returncode == 0, out.stderr
        [request] = server.requests
    assert request.headers.get("x-api-key") == "sk-pitree" or request.headers.get("authorization") == "Bearer sk-pitree"


def test_clearing_a_label_that_is_not_there_writes_nothing(demo: Path, tmp_path: Path) -> None:
    original = demo.read_bytes()
    rows = orjson.loads(pitree("tree", str(demo), "--json", "--filter", "all").stdout)
    labelled = set(rows["labels"])
    target = next(r["id"] for r in rows["rows"] if r["id"] not in labelled)
    refused = pitree("label", str(demo), target, "--clear", "--yes")
    assert refused.returncode == 1 and demo.read_bytes() == original
    assert refused.stderr.decode().strip().count("\n") == 0 and b"no label to clear" in refused.stderr
    assert pitree("label", str(demo), target, "start", "--yes").returncode == 0
    cleared = pitree("label", str(demo), target, "--clear", "--yes", "--json")
    assert cleared.returncode == 0, cleared.stderr
    assert _last(demo)["targetId"] == target and _last(demo).get("label") is None


def test_write_commands_read_the_file_as_the_others_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`pitree label` / `branch` read the session through the tree cache and the forked parse, as every other
    command does (the whole file at once took ~2.6 GB at 1M entries), and still take a torn last line whole,
    as Pi reads it: the size an append expects is the file's."""
    from pitree.cli import write
    from pitree.store import tree_cache

    from tests.sessions import chain, to_bytes

    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "s.jsonl"
    data = to_bytes(chain(5))
    path.write_bytes(data[:-1])  # no newline after the last line
    asked: list[Path] = []
    real = tree_cache.read_cache
    monkeypatch.setattr(tree_cache, "read_cache", lambda p, *a, **k: asked.append(p) or real(p, *a, **k))
    tree, size = write._load(path)
    assert asked == [path] and size == len(data) - 1 and tree.leaf is not None and tree.leaf.id == "e0000004"
