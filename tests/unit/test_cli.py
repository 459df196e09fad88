"""Every scripting subcommand, text and JSON, and its errors; run as a user would, in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.sessions import assistant, entry, to_bytes, user

PITREE = [sys.executable, "-m", "pitree.cli"]


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*PITREE, *args], capture_output=True, timeout=60)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    entries = [
        user("u1", None, "hello [bold]world[/bold] \x1b[31mred\x1b]52;c;aGk=\x07"),
        assistant("a1", "u1", "answer"),
        user("u2", "a1", "second"),
        assistant("a2", "u2", "more"),
        user("u3", "a1", "other"),
        entry("label", "l1", "u3", targetId="u1", label="start"),
        entry("session_info", "s1", "l1", name="my session"),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(entries) + b"not json\n")
    return path


def test_tree_json_schema(session: Path) -> None:
    out = run("tree", str(session), "--json")
    assert out.returncode == 0, out.stderr
    data = orjson.loads(out.stdout)
    assert {"session", "entries", "skipped", "leaf", "roots", "labels", "rows"} <= set(data)
    assert set(data["session"]) >= {"id", "version", "cwd", "name", "parentSession"}
    assert data["session"]["name"] == "my session" and data["entries"] == 7
    assert data["skipped"] == [{"line": 9, "reason": data["skipped"][0]["reason"]}]
    assert data["leaf"] == "s1" and data["roots"] == ["u1"] and data["labels"] == {"u1": "start"}
    for row in data["rows"]:
        assert set(row) >= {"id", "parentId", "type", "role", "text", "depth", "onActivePath"}
    assert [r["id"] for r in data["rows"]] == ["u1", "a1", "u3", "s1", "u2", "a2"]


@pytest.mark.parametrize(("flt", "ids"), [("user-only", ["u1", "u3", "u2"]), ("labeled-only", ["u1"]),
                                          ("all", ["u1", "a1", "u3", "l1", "s1", "u2", "a2"])])
def test_tree_filters(session: Path, flt: str, ids: list[str]) -> None:
    data = orjson.loads(run("tree", str(session), "--json", "--filter", flt).stdout)
    assert [r["id"] for r in data["rows"]] == ids


def test_tree_search(session: Path) -> None:
    data = orjson.loads(run("tree", str(session), "--json", "--search", "SECOND").stdout)
    assert [r["id"] for r in data["rows"]] == ["u2"]


def test_tree_text_is_literal_and_safe(session: Path) -> None:
    out = run("tree", str(session))
    assert out.returncode == 0
    text = out.stdout.decode()
    assert "[bold]world[/bold]" in text and "␛[31mred" in text and "␛]52" in text
    assert b"\x1b" not in out.stdout and "← leaf" in text and "[start]" in text


def test_context_json(session: Path) -> None:
    data = orjson.loads(run("context", str(session), "--json").stdout)
    assert set(data) >= {"leaf", "path", "model", "thinkingLevel", "messages", "tokens"}
    assert data["path"] == ["u1", "a1", "u3", "l1", "s1"]
    assert [(m["role"], m["entryId"]) for m in data["messages"]] == [("user", "u1"), ("assistant", "a1"), ("user", "u3")]
    assert all(isinstance(m["tokens"], int) for m in data["messages"])
    assert isinstance(data["tokens"]["estimate"], int) and isinstance(data["tokens"]["tiktoken"], int)
    leaf = orjson.loads(run("context", str(session), "--json", "--leaf", "a2").stdout)
    assert leaf["leaf"] == "a2" and leaf["model"] == {"provider": "anthropic", "modelId": "claude"}
    assert orjson.loads(run("context", str(session), "--json", "--no-tiktoken").stdout)["tokens"]["tiktoken"] is None


def test_compactions_and_info(session: Path, demo_copy: Path) -> None:
    comp = orjson.loads(run("compactions", str(demo_copy), "--json").stdout)["compactions"]
    assert len(comp) == 1 and comp[0]["tokensBefore"] == 48213 and comp[0]["firstKeptOnPath"]
    assert comp[0]["kept"]["entries"] > 0 and comp[0]["problems"] == []
    info = orjson.loads(run("info", str(session), "--json").stdout)
    assert info["entries"] == 7 and info["branches"] == 2 and info["usage"]["cost"] == 1.0
    assert info["roles"] == {"assistant": 2, "user": 3}
    for cmd in ("compactions", "info", "context"):
        assert run(cmd, str(demo_copy)).returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tree", "/no/such/file.jsonl"], "no such file"),
        (["tree", "/"], "is a directory"),
        (["context", "{session}", "--leaf", "zzzz"], "no entry with id"),
        (["context", "{session}", "--leaf", "u"], "ambiguous"),
        (["/no/such/file.jsonl"], "no such file"),
    ],
)
def test_bad_input_exits_1_with_one_line(session: Path, args: list[str], message: str) -> None:
    out = run(*[a.replace("{session}", str(session)) for a in args])
    assert out.returncode == 1
    err = out.stderr.decode().strip()
    assert message in err and len(err.splitlines()) == 1


def test_bad_filter_is_a_usage_error(session: Path) -> None:
    out = run("tree", str(session), "--filter", "nope")
    assert out.returncode == 1 and b"invalid choice" in out.stderr and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("cmd", [[], ["tree"], ["context"], ["compactions"], ["info"]])
def test_help(cmd: list[str]) -> None:
    out = run(*cmd, "--help")
    assert out.returncode == 0 and b"usage" in out.stdout.lower()
