"""pitree's branch-summary preparation against Pi 1.6's own (`prepareBranchEntries`, `serializeConversation`,
`generateBranchSummary`'s "No content" case), on the cases of SPEC-pi1 section C and edits/system messages.

Pi 1.6 is found as by the other Pi 1.x tests (`pi1run.require_pi1`: bench/pi1/node_modules and its Node 22); without
it these tests skip, and fail in CI (PITREE_REQUIRE_PI1)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.store.session_file import EntryReader, load_session
from pitree.summary.prepare import collect_for_summary, convert_to_llm, prepare_branch_entries, serialize_conversation

from tests.pi.pi1run import require_pi1
from tests.sessions import assistant, entry, message, tool_result, user, write_session

SCRIPT = Path(__file__).with_name("pi16_prepare.mjs")


def pi16() -> tuple[str, Path]:
    pi1 = require_pi1()
    return str(pi1.node), pi1.modules


def pi_prepare(path: Path, old: str, target: str, budget: int) -> dict[str, Any]:
    node, modules = pi16()
    before = path.read_bytes()
    out = subprocess.run(
        [node, str(SCRIPT), str(modules), str(path), old, target, str(budget)],
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr.decode()
    assert path.read_bytes() == before
    return orjson.loads(out.stdout.splitlines()[-1])


def pitree_prepare(path: Path, old: str, target: str, budget: int) -> dict[str, Any]:
    tree, _ = load_session(path)
    nodes, _common = collect_for_summary(tree, tree.get(old), tree.get(target))
    prepared = prepare_branch_entries(EntryReader(path, tree).entries(nodes), budget)
    return {
        "collected": [n.id for n in nodes],
        "roles": [m["role"] for m in prepared.messages],
        "totalTokens": prepared.total_tokens,
        "read": sorted(prepared.file_ops.read),
        "written": sorted(prepared.file_ops.written),
        "edited": sorted(prepared.file_ops.edited),
        "serialized": serialize_conversation(convert_to_llm(prepared.messages)),
    }


def system(eid: str, parent: str | None, content: Any = "", **fields: Any) -> dict[str, Any]:
    return message(eid, parent, "system", content=content, **fields)


def case12() -> list[dict[str, Any]]:
    """SPEC-pi1 C12: thinking left out, an edited-away user message, a 400-char system message."""
    return [
        user("root", None, "start"),
        assistant("a0", "root", "base"),
        user("u1", "a0", "omitted by the edit"),
        system("s1", "u1", "x" * 400),
        message(
            "a1",
            "s1",
            "assistant",
            content=[
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "t1"},
                {"type": "text", "text": "t2"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "f.py"}},
            ],
            provider="p",
            model="m",
            stopReason="toolUse",
        ),
        entry("context_edit", "e1", "a1", targetId="u1", replacement=None),
        user("other", "a0", "elsewhere"),
    ]


def test_case_12_serialization_and_budget(tmp_path: Path) -> None:
    path = write_session(tmp_path, case12())
    ours = pitree_prepare(path, "e1", "other", 0)
    assert ours["serialized"] == '[Assistant]: t1\nt2\n\n[Assistant tool calls]: read(path="f.py")'
    assert ours["roles"] == ["system", "assistant"]
    assert ours["totalTokens"] == 100 + 7
    assert ours["read"] == ["f.py"]
    pi = pi_prepare(path, "e1", "other", 0)
    assert pi.pop("noContent") is None
    assert ours == pi


def test_replacement_edits_and_latest_edit_win(tmp_path: Path) -> None:
    entries = [
        user("root", None, "start"),
        user("u1", "root", "original request"),
        assistant("a1", "u1", "first answer"),
        tool_result("r1", "a1", "c0", text="out"),
        entry("context_edit", "e1", "r1", targetId="a1", replacement={"content": "v1"}),
        entry("context_edit", "e2", "e1", targetId="a1", replacement={"content": "v2"}),
        entry("context_edit", "e3", "e2", targetId="u1", replacement={"content": "edited request"}),
        entry("custom_message", "cm", "e3", customType="x", content="note", display=True),
        entry("context_edit", "e4", "cm", targetId="cm", replacement={"content": [{"type": "text", "text": "n2"}]}),
        entry("usage", "us", "e4", kind="cache_warm", provider="p", model="m", usage={"input": 1}),
        user("other", "root", "elsewhere"),
    ]
    path = write_session(tmp_path, entries)
    ours = pitree_prepare(path, "us", "other", 0)
    assert ours["serialized"] == "[User]: edited request\n\n[Assistant]: v2\n\n[User]: n2"
    pi = pi_prepare(path, "us", "other", 0)
    pi.pop("noContent")
    assert ours == pi


@pytest.mark.parametrize("budget", [0, 10, 105, 110])
def test_budget_with_system_messages_matches_pi(tmp_path: Path, budget: int) -> None:
    entries = [
        *case12()[:-1],
        entry("branch_summary", "b1", "e1", fromId="zz", summary="s" * 200, details={"readFiles": ["g.py"]}),
        message(
            "u9",
            "b1",
            "user",
            content=[{"type": "image", "data": "x", "mimeType": "image/png"}, {"type": "text", "text": "see"}],
        ),
        user("other", "a0", "elsewhere"),
    ]
    path = write_session(tmp_path, entries)
    ours = pitree_prepare(path, "u9", "other", budget)
    pi = pi_prepare(path, "u9", "other", budget)
    pi.pop("noContent")
    assert ours == pi


def test_case_11_no_content(tmp_path: Path) -> None:
    entries = [
        user("root", None, "start"),
        assistant("a0", "root", "base", calls=(("c1", "read", {"path": "f.py"}),)),
        tool_result("r1", "a0", "c1", text="out"),
        entry("model_change", "m1", "r1", provider="p", modelId="m"),
        user("other", "a0", "elsewhere"),
    ]
    path = write_session(tmp_path, entries)
    ours = pitree_prepare(path, "m1", "other", 0)
    assert ours["roles"] == [] and ours["collected"] == ["r1", "m1"]
    pi = pi_prepare(path, "m1", "other", 0)
    assert pi["noContent"] == {"summary": "No content to summarize"}


def pi_branch(path: Path, *args: str) -> dict[str, Any]:
    node, modules = pi16()
    out = subprocess.run(
        [node, str(SCRIPT.with_name("pi16_branch.mjs")), str(modules), str(path), *args],
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr.decode()
    return orjson.loads(out.stdout.splitlines()[-1])


@pytest.mark.parametrize(("target", "new_leaf"), [("T", "P"), ("R", None), ("A0", "A0")])
def test_pitree_branch_writes_the_entry_pi16_writes_and_pi_continues_there(
    tmp_path: Path, target: str, new_leaf: str | None
) -> None:
    """SPEC-pi1 C10 and the root case: the same keys, in Pi's order, and the same values but id and time."""
    from tests.unit.test_cli_write import pitree

    entries = [
        user("R", None, "root request"),
        assistant("A0", "R", "first answer", calls=(("c1", "read", {"path": "f.py"}),)),
        tool_result("r1", "A0", "c1", text="content"),
        user("P", "r1", "p"),
        user("T", "P", "t"),
        assistant("L", "T", "answer", calls=(("c2", "edit", {"path": "g.py"}),)),
    ]
    path = write_session(tmp_path, entries)
    out = pitree("branch", str(path), "--to", target, "--summary", "extractive", "--yes")
    assert out.returncode == 0, out.stderr
    ours = orjson.loads(path.read_bytes().splitlines()[-1])
    before = tmp_path / "before.jsonl"
    before.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-1]))
    pis = pi_branch(
        before,
        "write",
        "null" if new_leaf is None else new_leaf,
        ours["summary"],
        orjson.dumps(ours["details"]).decode(),
    )["line"]
    assert list(ours) == list(pis)
    assert {k: v for k, v in ours.items() if k not in ("id", "timestamp")} == {
        k: v for k, v in pis.items() if k not in ("id", "timestamp")
    }
    assert ours["parentId"] == new_leaf and ours["fromId"] == "L"
    seen = pi_branch(path, "open")
    assert seen == {"leafId": ours["id"], "lastRole": "branchSummary", "lastSummary": ours["summary"]}
