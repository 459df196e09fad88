"""After pitree appends, Pi's own SessionManager continues exactly where pitree said it would."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from pitree.cli.report import context_report
from pitree.store.session_file import load_session

pytestmark = pytest.mark.node
DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo.jsonl"


def pitree(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "pitree.cli.main", *args], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    return orjson.loads(out.stdout)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    os.utime(path, (1, 1))  # old mtime: no "written recently" warning
    return path


def test_pi_reads_demo_as_pitree_does(pi, session: Path) -> None:  # type: ignore[no-untyped-def]
    before = session.read_bytes()
    seen = pi(session)
    assert session.read_bytes() == before  # Pi does not rewrite a v3 file
    tree, _ = load_session(session)
    ours = context_report(tree, None, None)
    assert seen["leafId"] == ours["leaf"] and seen["path"] == ours["path"]
    assert seen["roles"] == [m["role"] for m in ours["messages"]]
    assert seen["name"] == tree.name and seen["labels"] == tree.labels
    assert seen["model"] == ours["model"] and seen["thinkingLevel"] == ours["thinkingLevel"]


@pytest.mark.parametrize(
    ("target", "summary", "leaf_is_target"),
    [
        ("ae1a42a9", "extractive", True),  # an assistant entry: it becomes the leaf
        ("20554e43", "extractive", False),  # a user message: its parent becomes the leaf, its text -> editor
        ("c743aed4", "none", True),  # the abandoned branch's error, no summary: a marker entry
    ],
)
def test_branch_then_pi_continues_there(pi, session: Path, target: str, summary: str, leaf_is_target: bool) -> None:  # type: ignore[no-untyped-def]
    prefix = session.read_bytes()
    result = pitree("branch", str(session), "--to", target, "--summary", summary, "--yes", "--json")
    data = session.read_bytes()
    assert (
        data[: len(prefix)] == prefix
        and hashlib.sha256(data[: len(prefix)]).digest() == hashlib.sha256(prefix).digest()
    )
    assert data.count(b"\n") == prefix.count(b"\n") + 1 and data.endswith(b"\n")
    appended = result["appended"]
    seen = pi(session)
    assert seen["leafId"] == appended["id"] == result["leaf"]
    tree, _ = load_session(session)
    target_node = tree.get(target)
    expected_leaf = target_node if leaf_is_target else target_node.parent
    assert appended["parentId"] == expected_leaf.id
    assert seen["path"][:-1] == [n.id for n in tree.branch(expected_leaf)]
    if summary == "none":
        assert appended["type"] == "custom" and seen["summaries"] == []
    else:
        assert appended["type"] == "branch_summary" and appended["fromId"] == "40665560"  # the abandoned old leaf
        assert len(seen["summaries"]) == 1 and "## Goal" in seen["summaries"][0]
        assert seen["roles"][-1] == "branchSummary"
    if not leaf_is_target:
        assert result["editorText"].startswith("Let's build a small weather CLI: `weather now Berlin`")


def test_label_round_trip(pi, session: Path) -> None:  # type: ignore[no-untyped-def]
    pitree("label", str(session), "ae1a42a9", "checkpoint", "--yes", "--json")
    assert pi(session)["labels"]["ae1a42a9"] == "checkpoint"
    pitree("label", str(session), "ae1a42a9", "--clear", "--yes", "--json")
    assert "ae1a42a9" not in pi(session)["labels"]


def test_torn_last_line_is_kept_apart(pi, session: Path) -> None:  # type: ignore[no-untyped-def]
    with open(session, "ab") as fh:
        fh.write(b'{"type":"message","id":"torn0001","parentId":"40665560"')
    prefix = session.read_bytes()
    result = pitree("branch", str(session), "--to", "ae1a42a9", "--summary", "none", "--yes", "--json")
    data = session.read_bytes()
    assert data.startswith(prefix) and data[len(prefix) : len(prefix) + 1] == b"\n"
    assert pi(session)["leafId"] == result["appended"]["id"]
