"""`pitree ls`, `pitree search` and `resolve_session_arg` on a generated store (through a parser built here with
`add_browse_commands`, as cli.py will): JSON schemas, scopes, forks, hostile text printed safely, errors."""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pitree.cli.index_refresh as index_refresh
import pytest
from pitree.cli.browse import add_browse_commands
from pitree.cli.common import CliError
from pitree.cli.resolve_id import resolve_session_arg

from tests.sessions import assistant, entry, user
from tests.unit.test_session_index import ID_A1, ID_A2, ID_B1, ID_B2, write
from tests.unit.test_session_index import store as store  # noqa: F401 - the fixture

HOSTILE = "\x1b[31mred\x1b[0m [bold]x[/bold] \u202eevil\x07"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pitree")
    add_browse_commands(p.add_subparsers(dest="command"))
    return p


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    args = parser().parse_args(argv)
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Any:
    code, out, _ = run([*argv, "--json"], capsys)
    assert code == 0
    return json.loads(out)


@pytest.fixture
def in_a(store: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:  # noqa: F811
    Path(store["cwd_a"]).mkdir()
    monkeypatch.chdir(store["cwd_a"])
    return store


@pytest.mark.parametrize("command", ["ls", "search"])
def test_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parser().parse_args([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--all" in out and "--json" in out and "--session-dir" in out


def test_ls_json_of_the_current_folder(in_a: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(["ls"], capsys)
    assert data["scope"] == "cwd" and data["cwd"] == in_a["cwd_a"] and data["root"] == str(in_a["root"])
    assert [(s["id"], s["depth"]) for s in data["sessions"]] == [(ID_A1, 0), (ID_A2, 1)]  # the fork under its parent
    first = data["sessions"][0]
    assert set(first) == {
        "path",
        "id",
        "cwd",
        "name",
        "title",
        "firstMessage",
        "entries",
        "branches",
        "compactions",
        "lastActivity",
        "created",
        "size",
        "mtime",
        "parentSession",
        "agent",
        "depth",
    }
    assert (first["name"], first["entries"], first["branches"], first["compactions"]) == ("Refactor manager", 13, 2, 1)
    assert data["sessions"][1]["parentSession"] == first["path"]
    assert data["errors"] == []  # the broken files are in the other folder, which was not scanned


def test_ls_all(in_a: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(["ls", "--all"], capsys)
    assert [(s["id"], s["depth"]) for s in data["sessions"]] == [(ID_B2, 0), (ID_A1, 0), (ID_A2, 1), (ID_B1, 0)]
    assert sorted(Path(e["path"]).name for e in data["errors"]) == ["empty.jsonl", "garbage.jsonl"]
    code, out, err = run(["ls", "--all"], capsys)
    assert code == 0 and "2 files could not be read" in err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["last", "activity", "session"]
    assert "└ forked question" in out and "Refactor manager" in out and "real first" in out
    assert "3000" in lines[1] and "/elsewhere/b" in lines[1]


def test_ls_session_dir_is_scanned_flat_and_filtered_by_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    flat = tmp_path / "flat"
    write(flat, ID_A1, str(here), [user("u", None, "mine", t=1)], when=1)
    write(flat, ID_B1, "/other", [user("u", None, "theirs", t=2)], when=2)
    write(flat / "sub", ID_B2, str(here), [user("u", None, "mine too", t=3)], when=3)
    data = run_json(["ls", "--session-dir", str(flat)], capsys)
    assert [s["title"] for s in data["sessions"]] == ["mine too", "mine"]
    data = run_json(["ls", "--session-dir", str(flat), "--all"], capsys)
    assert [s["title"] for s in data["sessions"]] == ["mine too", "theirs", "mine"]
    assert data["root"] == str(flat)


def test_ls_with_no_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "nothing"))
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(["ls"], capsys)
    assert code == 0 and "no sessions in" in out and "try --all" in out
    assert run_json(["ls", "--all"], capsys)["sessions"] == []


def test_hostile_text_is_printed_safely(in_a: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    write(
        in_a["fa"],
        "0f0f0f0f-0000-7000-8000-000000000000",
        in_a["cwd_a"],
        [
            entry("session_info", "n", None, t=1, name=HOSTILE),
            user("u", "n", f"look {HOSTILE} here", t=2),
            assistant("a", "u", "fine", t=3),
        ],
        when=50,
    )
    _, out, _ = run(["ls"], capsys)
    _, found, _ = run(["search", "evil"], capsys)
    for text in (out, found):
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
        assert "␛[31mred␛[0m [bold]x[/bold] <U+202E>evil␇" in text
    data = run_json(["search", "evil"], capsys)  # JSON keeps the text as it is (escaped by JSON itself)
    assert data["hits"][0]["title"] == HOSTILE


def test_search_json(in_a: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(["search", "answer"], capsys)
    assert data["scope"] == "cwd" and data["limit"] == 200 and data["truncated"] is False
    assert [(h["sessionId"], h["entryId"], h["kind"]) for h in data["hits"]] == [
        (ID_A2, "f2", "assistant"),
        (ID_A1, "a3", "assistant"),
    ]
    assert set(data["hits"][0]) == {"path", "sessionId", "title", "entryId", "kind", "snippet"}
    assert data["hits"][0]["title"] == "forked question"
    assert run_json(["search", "real first"], capsys)["hits"] == []  # another cwd
    assert [h["sessionId"] for h in run_json(["search", "real first", "--all"], capsys)["hits"]] == [ID_B1]
    data = run_json(["search", "re:^u\\d+$", "--all", "--limit", "3"], capsys)
    assert len(data["hits"]) == 3 and data["truncated"] is True


def test_search_text(in_a: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["search", "tree-view"], capsys)
    assert code == 0
    head, hit = out.splitlines()
    assert head.startswith("Refactor manager") and str(in_a["a1"]) in head
    assert hit == "  a1 tool: read src/core/tree-view.ts"
    code, out, _ = run(["search", "zzzz-nothing"], capsys)
    assert code == 0 and "no matches" in out
    _, _, err = run(["search", "re:^u\\d+$", "--all", "--limit", "2"], capsys)
    assert "showing the first 2" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "re:("], "bad regex"),
        (["search", "  "], "empty search query"),
        (["search", "x", "--limit", "0"], "--limit"),
    ],
)
def test_search_errors(in_a: dict[str, Any], argv: list[str], message: str) -> None:
    args = parser().parse_args(argv)
    with pytest.raises(CliError, match=message):
        args.func(args)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal(
    in_a: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = _Tty()
    monkeypatch.setattr(index_refresh, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr("sys.stderr", fake)
    run_json(["ls", "--all"], capsys)
    shown = fake.getvalue()
    assert "indexing sessions: 6/6 files" in shown and shown.endswith("\r\x1b[K")
    fake.truncate(0)
    fake.seek(0)
    run_json(["ls", "--all"], capsys)  # warm: nothing to index, nothing shown
    assert fake.getvalue() == ""


def test_resolve_session_arg(in_a: dict[str, Any]) -> None:
    assert resolve_session_arg("0a1") == in_a["a1"]
    assert resolve_session_arg("0A1A1A1A") == in_a["a1"]
    assert resolve_session_arg("0b1") == in_a["b1"]  # not in this folder: found across all
    assert resolve_session_arg(ID_B2) == in_a["b2"]
    with pytest.raises(ValueError, match=r"ambiguous \(2 sessions\)") as exc:
        resolve_session_arg("0a")  # both are this folder's
    assert ID_A1 in str(exc.value) and str(in_a["a2"]) in str(exc.value)
    with pytest.raises(ValueError, match="ambiguous"):
        resolve_session_arg("0b")
    assert resolve_session_arg("0e") is None
    for not_an_id in ("hello", "./x.jsonl", "", "0a1/x", "0a1 "):
        assert resolve_session_arg(not_an_id) is None


def test_resolve_finds_a_session_whose_file_name_is_not_its_id(in_a: dict[str, Any], tmp_path: Path) -> None:
    other = in_a["fb"] / "renamed-by-hand.jsonl"
    shutil.copyfile(in_a["b1"], other)
    data = other.read_bytes().replace(ID_B1.encode(), b"0c0ffee0-0000-7000-8000-000000000000")
    other.write_bytes(data)
    assert resolve_session_arg("0c0ffee") == other  # through the index
    assert resolve_session_arg("0c0ffee", session_dir=str(tmp_path / "nowhere")) is None


def test_json_output_does_not_load_rich(in_a: dict[str, Any], tmp_path: Path) -> None:
    code = (
        "import argparse, sys\n"
        "from pitree.cli.browse import add_browse_commands\n"
        "p = argparse.ArgumentParser(); add_browse_commands(p.add_subparsers())\n"
        "a = p.parse_args(['ls', '--all', '--json']); a.func(a)\n"
        "a = p.parse_args(['search', 'answer', '--json']); a.func(a)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'textual')))\n"
    )
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(in_a["agent"]), "PITREE_CACHE_DIR": str(tmp_path / "c2")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    first, second, modules = out.stdout.splitlines()
    assert len(json.loads(first)["sessions"]) == 4 and json.loads(second)["hits"]
    assert modules == "[]"
