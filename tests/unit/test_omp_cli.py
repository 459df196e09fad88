"""oh-my-pi sessions from the command line: where they are found (omp's folders, env, XDG, profiles), `pitree ls`
with the agent column and subagents under their session, and info/usage/context/tree/branch/label on one."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.cli.main import main
from pitree.store import omp_paths
from pitree.store.catalog import find_session_paths, read_header, session_roots

from tests.omp_files import (
    SESSION_ID,
    SLOT_BYTES,
    assistant,
    case16,
    entry,
    header,
    model_usage,
    tool_result,
    usage,
    user,
    write_omp,
)
from tests.sessions import header as pi_header
from tests.sessions import to_bytes
from tests.sessions import user as pi_user

SUB_ID = "019a0000-0000-7000-8000-0000000000b1"


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


@pytest.mark.parametrize(
    ("extra", "agent"),
    [
        ({}, ".omp/agent"),
        ({"PI_CONFIG_DIR": ".other"}, ".other/agent"),
        ({"OMP_PROFILE": "work"}, ".omp/profiles/work/agent"),
        ({"PI_PROFILE": "p2"}, ".omp/profiles/p2/agent"),
        ({"PI_CODING_AGENT_DIR": "~/custom"}, "custom"),
    ],
)
def test_agent_dir(tmp_path: Path, extra: dict[str, str], agent: str) -> None:
    env = _env(tmp_path, **extra)
    assert omp_paths.agent_dir(env) == tmp_path / agent
    assert omp_paths.sessions_dir(env) == tmp_path / agent / "sessions"
    assert omp_paths.blobs_dir(env) == tmp_path / agent / "blobs"


@pytest.mark.skipif(sys.platform not in ("linux", "darwin"), reason="omp's XDG rule is for Linux and macOS")
def test_xdg_data_home_when_its_omp_folder_exists(tmp_path: Path) -> None:
    env = _env(tmp_path, XDG_DATA_HOME=str(tmp_path / "data"))
    assert omp_paths.sessions_dir(env) == tmp_path / ".omp/agent/sessions"
    (tmp_path / "data" / "omp").mkdir(parents=True)
    assert omp_paths.sessions_dir(env) == tmp_path / "data/omp/sessions"
    assert omp_paths.blobs_dir(env) == tmp_path / "data/omp/blobs"
    env["PI_CODING_AGENT_DIR"] = str(tmp_path / "a")  # not the default agent dir: no move
    assert omp_paths.sessions_dir(env) == tmp_path / "a/sessions"
    assert omp_paths.sessions_dir({**env, "PI_CODING_AGENT_SESSION_DIR": "/s"}) == Path("/s")


def test_cwd_folder_names(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "src" / "proj").mkdir(parents=True)
    env = _env(home)
    assert omp_paths.cwd_folder(str(home), env) == "-"
    assert omp_paths.cwd_folder(str(home / "src" / "proj"), env) == "-src-proj"
    tmp = os.path.realpath(tempfile.gettempdir())
    assert omp_paths.cwd_folder(tmp, env) == "-tmp"
    assert omp_paths.cwd_folder(os.path.join(tmp, "a", "b"), env) == "-tmp-a-b"
    assert omp_paths.cwd_folder("/definitely/elsewhere", env) == "--definitely-elsewhere--"


def test_session_roots_are_pi_and_omp_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # Pi's default root follows the home folder
    env = _env(tmp_path)
    assert session_roots(None, env) == [
        (tmp_path / ".pi/agent/sessions", "pi"),
        (tmp_path / ".omp/agent/sessions", "omp"),
    ]
    shared = _env(tmp_path, PI_CODING_AGENT_DIR=str(tmp_path / "a"))
    assert session_roots(None, shared) == [(tmp_path / "a/sessions", "pi")]
    assert session_roots(str(tmp_path / "x"), env) == [(tmp_path / "x", "pi")]


def _store(home: Path) -> dict[str, Any]:
    """An omp session with two subagents (one nested) in home/.omp, a Pi session in home/.pi, cwd home/proj."""
    cwd = home / "proj"
    cwd.mkdir(parents=True)
    folder = home / ".omp" / "agent" / "sessions" / "-proj"
    name = f"2026-03-01T00-00-00-000Z_{SESSION_ID}"
    calls = (("t1", "task", {"agent": "scout"}),)
    entries = [
        user("u1", None, "investigate", t=1),
        assistant("a1", "u1", "", t=2, calls=calls, stop="toolUse", u=usage(10, 2, cost=0.5)),
        tool_result("r1", "a1", "t1", name="task", t=3, details={"usage": usage(100, 20, cost=2.0)}),
        model_usage("mu", "r1", usage(3, 1, cost=0.25), t=4),
        assistant("a2", "mu", "done", t=5, u=usage(1, 1)),
    ]
    parent = write_omp(folder / f"{name}.jsonl", entries, head=header(cwd=str(cwd)), title="Investigate")
    sub_head = header(id=SUB_ID, cwd=str(cwd))
    init = entry(
        "session_init", "i1", None, t=1, systemPrompt="S", task="task for scout", tools=["read"], agent="scout"
    )
    sub = write_omp(
        folder / name / "scout.jsonl", [init, user("s1", "i1", "task for scout", t=2)], title=None, head=sub_head
    )
    nested = write_omp(
        folder / name / "scout" / "helper.jsonl",
        [user("h1", None, "nested task", t=2)],
        title=None,
        head=header(id="019a0000-0000-7000-8000-0000000000c1", cwd=str(cwd), title="Helper"),
    )
    pi_dir = home / ".pi" / "agent" / "sessions" / ("--" + str(cwd).strip("/").replace("/", "-") + "--")
    pi_dir.mkdir(parents=True)
    pi = pi_dir / "2026-02-01T00-00-00-000Z_aaaaaaaa-0000-0000-0000-000000000000.jsonl"
    pi.write_bytes(
        to_bytes(
            [pi_user("p1", None, "pi question", t=1)],
            head=pi_header(id="aaaaaaaa-0000-0000-0000-000000000000", cwd=str(cwd)),
        )
    )
    return {"cwd": cwd, "parent": parent, "sub": sub, "nested": nested, "pi": pi}


@pytest.fixture
def omp_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    home = tmp_path / "home"
    for var in ("PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "PI_CONFIG_DIR", "OMP_PROFILE", "PI_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "no-xdg"))
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    store = _store(home)
    monkeypatch.chdir(store["cwd"])
    return store


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> Any:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_subagents_are_found_beside_their_session_only(omp_home: dict[str, Any]) -> None:
    folder = omp_home["parent"].parent
    found = find_session_paths(folder.parent)
    assert found == sorted(map(str, [omp_home["parent"], omp_home["sub"], omp_home["nested"]]))
    assert omp_paths.find_subagents(omp_home["parent"]) == sorted([str(omp_home["sub"]), str(omp_home["nested"])])
    assert read_header(omp_home["parent"])["id"] == SESSION_ID  # type: ignore[index]
    # a flat folder: the artifacts folder is not taken for a folder of sessions, its transcripts still listed
    assert find_session_paths(folder) == found


def test_ls_lists_omp_beside_pi_with_subagents_under_their_session(
    omp_home: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json(["ls"], capsys)
    rows = [(Path(s["path"]).name, s["agent"], s["depth"], s["name"]) for s in data["sessions"]]
    assert rows == [
        (omp_home["parent"].name, "omp", 0, "Investigate"),
        ("scout.jsonl", "omp", 1, None),
        ("helper.jsonl", "omp", 2, "Helper"),  # a subagent of the subagent
        (omp_home["pi"].name, "pi", 0, None),
    ]
    assert main(["ls"]) == 0
    out = capsys.readouterr().out
    assert "oh-my-pi subagent" in out and "└ Helper" in out and out.splitlines()[0].split()[-1] == "agent"
    assert _json(["ls", "--all"], capsys)["sessions"] == data["sessions"]


def test_search_and_id_prefix_find_omp_sessions(omp_home: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    hits = _json(["search", "nested task"], capsys)["hits"]
    assert [Path(h["path"]).name for h in hits] == ["helper.jsonl"]
    from pitree.cli.resolve_id import resolve_session_arg

    assert resolve_session_arg(SESSION_ID[:13]) == omp_home["parent"]


def test_info_usage_context_tree_on_an_omp_file(omp_home: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    path = str(omp_home["parent"])
    info = _json(["info", path], capsys)
    assert info["session"]["name"] == "Investigate" and info["skipped"] == 0 and info["lines"] == 7
    total = _json(["usage", path], capsys)["total"]
    assert (total["input"], total["output"]) == (114, 24) and total["cost"] == pytest.approx(2.75)
    ctx = _json(["context", path, "--no-tiktoken"], capsys)
    assert ctx.get("dialect") == "omp"
    rows = _json(["tree", path, "--filter", "all"], capsys)["rows"]
    assert "[model usage: title]" in [r["text"] for r in rows]


@pytest.mark.writes_session
def test_branch_and_label_follow_omp_and_leave_the_slot(
    omp_home: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    path = omp_home["parent"]
    slot = path.read_bytes()[:SLOT_BYTES]
    out = _json(["branch", str(path), "--to", "a1", "--summary", "extractive", "--yes"], capsys)
    appended = out["appended"]
    assert appended["type"] == "branch_summary" and appended["parentId"] == "a1" and appended["fromId"] == "a1"
    last = orjson.loads(path.read_bytes().splitlines()[-1])
    assert last["fromId"] == "a1" and last["parentId"] == "a1"
    _json(["label", str(path), "u1", "start", "--yes"], capsys)
    data = path.read_bytes()
    assert data[:SLOT_BYTES] == slot
    last = orjson.loads(data.splitlines()[-1])
    assert (last["type"], last["targetId"], last["label"]) == ("label", "u1", "start")
    info = _json(["info", str(path)], capsys)
    assert info["skipped"] == 0 and info["session"]["name"] == "Investigate"


def test_case16_on_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = case16(tmp_path)
    info = _json(["info", str(path)], capsys)
    assert info["session"]["name"] == "Fix the parser" and info["skipped"] == 0 and info["problems"] == 0
    ctx = _json(["context", str(path), "--no-tiktoken"], capsys)
    assert ctx["model"] == {"provider": "a", "modelId": "x"} and ctx["dialect"] == "omp"
    assert info["session"]["agent"] == "omp" and info["session"]["titleSlot"]["title"] == "Fix the parser"
