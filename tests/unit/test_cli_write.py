"""`pitree branch` with model summarizers against a real local HTTP server, and the consented migration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from pitree.summary.prepare import BRANCH_SUMMARY_PREAMBLE, SUMMARIZATION_SYSTEM_PROMPT

from tests.llm_server import FakeLLMServer, hang, ok, status

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo.jsonl"
DATA = Path(__file__).resolve().parents[1] / "data"


def pitree(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pitree.cli", *args], capture_output=True, timeout=120, env={**os.environ, **(env or {})}
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
