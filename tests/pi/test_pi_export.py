"""`pitree export --format jsonl` against the real Pi: the new file loads in Pi with the same context as the
source at that leaf, and holds the same entries as Pi's own fork (`createBranchedSession`) of that leaf,
except for the parent links Pi leaves dangling (see app/export/fork.py), which pitree repairs.

Pi only ever opens copies (it rewrites pre-v3 files in place); PI_CODING_AGENT_DIR points into tmp_path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.ops.export import export_path
from pitree.session.context import build_context
from pitree.store.session_file import EntryReader, load_session

from tests.pi.conftest import node_modules
from tests.sessions import assistant, entry, to_bytes, user

pytestmark = pytest.mark.node
REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"

SCRIPT = r"""
import { pathToFileURL } from "node:url";
import { join } from "node:path";
const [modules, mode, file, dir, leafIndex] = process.argv.slice(2);
const url = pathToFileURL(join(modules, "@mariozechner/pi-coding-agent/dist/core/session-manager.js")).href;
const { SessionManager } = await import(url);
const sm = SessionManager.open(file, dir);
const entries = sm.getEntries();
const leafId = leafIndex === undefined || leafIndex === "" ? sm.getLeafId() : entries[Number(leafIndex)].id;
if (mode === "fork") {
    console.log(JSON.stringify({ file: sm.createBranchedSession(leafId) }));
} else {
    if (leafIndex !== undefined && leafIndex !== "") sm.branch(leafId);
    const ctx = sm.buildSessionContext();
    console.log(JSON.stringify({
        leafId: sm.getLeafId(),
        path: sm.getBranch().map((e) => e.id),
        messages: ctx.messages,
        model: ctx.model,
        thinkingLevel: ctx.thinkingLevel,
        labels: Object.fromEntries(entries.filter((e) => sm.getLabel(e.id)).map((e) => [e.id, sm.getLabel(e.id)])),
        header: sm.getHeader(),
    }));
}
"""


@pytest.fixture
def pi_run(tmp_path: Path):  # type: ignore[no-untyped-def]
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    modules = node_modules()
    if modules is None:
        pytest.skip("Pi's npm package is not installed (run bench/setup_node.sh)")
    script = tmp_path / "pi_export.mjs"
    script.write_text(SCRIPT)
    work = tmp_path / "pi-work"
    work.mkdir()
    counter = iter(range(10**6))

    def run(mode: str, file: Path, leaf_index: int | None = None) -> dict[str, Any]:
        # Pi rewrites old files in place: it only ever gets a copy.
        copy = work / f"copy{next(counter)}.jsonl"
        copy.write_bytes(file.read_bytes())
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(work / "agent")}
        args = [
            "node",
            str(script),
            str(modules),
            mode,
            str(copy),
            str(work),
            "" if leaf_index is None else str(leaf_index),
        ]
        out = subprocess.run(args, capture_output=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
        assert out.returncode == 0, out.stderr.decode()
        result: dict[str, Any] = orjson.loads(out.stdout.splitlines()[-1])
        result["copy"] = copy
        return result

    return run


def _label_mid_path() -> bytes:
    """A label entry in the middle of the path (Pi appends labels under the current leaf), then more turns."""
    return to_bytes(
        [
            user("u1", None, "hi", t=1),
            assistant("a1", "u1", "yo", t=2),
            entry("label", "l1", "a1", t=3, targetId="u1", label="start"),
            user("u2", "l1", "more", t=4),
            assistant("a2", "u2", "ok", t=5),
            entry("label", "l2", "a2", t=6, targetId="a1", label="first answer"),
            entry("label", "l3", "l2", t=7, targetId="a1", label=""),  # cleared again
            entry("label", "l4", "l3", t=8, targetId="u2", label="second"),
        ]
    )


CASES = [
    # (name, source bytes, leaf id or None for the file's leaf)
    ("demo-leaf", (REPO / "assets" / "demo.jsonl").read_bytes(), None),
    ("demo-abandoned", (REPO / "assets" / "demo.jsonl").read_bytes(), "c743aed4"),
    ("branched-leaf", (DATA / "branched.jsonl").read_bytes(), None),
    ("branched-side", (DATA / "branched.jsonl").read_bytes(), "b0000011"),
    ("v1", (DATA / "v1_linear.jsonl").read_bytes(), None),
    ("v2", (DATA / "v2_hookmessage.jsonl").read_bytes(), None),
    ("hostile", (DATA / "hostile.jsonl").read_bytes(), None),
    ("label-mid-path", _label_mid_path(), None),
]


def _normalise(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ids replaced by positions (Pi gives v1 entries and fork labels random ids); a parentId naming no entry
    of the file becomes "dangling"."""
    index = {e["id"]: f"#{i}" for i, e in enumerate(entries)}
    out = []
    for e in entries:
        e = dict(e)
        for key in ("id", "targetId", "firstKeptEntryId"):
            if key in e and e[key] is not None:
                e[key] = index.get(e[key], e[key])
        if e.get("parentId") is not None:
            e["parentId"] = index.get(e["parentId"], "dangling")
        out.append(e)
    return out


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@pytest.mark.parametrize(("name", "data", "leaf_id"), CASES, ids=[c[0] for c in CASES])
def test_export_loads_in_pi_with_the_same_context(
    pi_run, tmp_path: Path, name: str, data: bytes, leaf_id: str | None
) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "source.jsonl"
    source.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    tree, _ = load_session(source)
    leaf = tree.resolve(leaf_id) if leaf_id else tree.leaf
    out = export_path(tree, EntryReader(source, tree), leaf, "jsonl", tmp_path / "fork.jsonl")
    assert hashlib.sha256(source.read_bytes()).hexdigest() == digest

    theirs = pi_run("context", source, leaf.idx)  # Pi's context of the source at that leaf
    ours = pi_run("context", out)  # Pi's context of the export at its own (the file's) leaf
    assert ours["copy"].read_bytes() == out.read_bytes(), "Pi rewrote the export: it is not a valid v3 file"
    assert ours["messages"] == theirs["messages"]
    assert ours["model"] == theirs["model"] and ours["thinkingLevel"] == theirs["thinkingLevel"]
    header = ours["header"]
    assert header["version"] == 3 and header["parentSession"] == str(source.resolve())
    assert header["cwd"] == tree.header["cwd"] and header["id"] != tree.header["id"]

    # ... and pitree's own context at that leaf of the source.
    ctx = build_context(tree, leaf)
    assert [m["role"] for m in ours["messages"]] == [m.role for m in ctx.messages]
    reader = EntryReader(source, tree)
    for pi_msg, ctx_msg in zip(ours["messages"], ctx.messages, strict=True):
        if ctx_msg.node.type == "message":
            assert pi_msg == reader.entry(ctx_msg.node)["message"]
    expected_labels = {k: v for k, v in tree.labels.items() if k in {n.id for n in tree.branch(leaf)}}
    assert ours["labels"] == expected_labels


@pytest.mark.parametrize(("name", "data", "leaf_id"), CASES, ids=[c[0] for c in CASES])
def test_export_matches_pis_fork(pi_run, tmp_path: Path, name: str, data: bytes, leaf_id: str | None) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "source.jsonl"
    source.write_bytes(data)
    tree, _ = load_session(source)
    leaf = tree.resolve(leaf_id) if leaf_id else tree.leaf
    out = export_path(tree, EntryReader(source, tree), leaf, "jsonl", tmp_path / "fork.jsonl")
    pi_fork = Path(pi_run("fork", source, leaf.idx)["file"])

    mine, theirs = _lines(out), _lines(pi_fork)
    assert set(mine[0]) == set(theirs[0]) == {"type", "version", "id", "timestamp", "cwd", "parentSession"}
    assert (mine[0]["version"], mine[0]["cwd"]) == (theirs[0]["version"], theirs[0]["cwd"])
    mine_n, theirs_n = _normalise(mine[1:]), _normalise(theirs[1:])
    repaired = 0
    for i, e in enumerate(theirs_n):
        if e.get("parentId") == "dangling":  # Pi's fork cut the path here; pitree links the previous entry
            e["parentId"] = f"#{i - 1}"
            repaired += 1
    assert mine_n == theirs_n
    if name in ("demo-leaf", "label-mid-path", "branched-leaf"):
        assert repaired, "this case has a label entry mid-path, which Pi's fork leaves dangling"
    if tree.version >= 3:  # unchanged entries are the source's own bytes
        raw = {n.id: source.read_bytes()[n.offset : n.offset + n.length] for n in tree.nodes}
        lines = out.read_bytes().splitlines()[1:]
        for line, e in zip(lines, mine[1:], strict=True):
            if e["type"] != "label" and e["id"] in raw and orjson.loads(raw[e["id"]]) == e:
                assert line == raw[e["id"]]


def test_label_mid_path_pi_fork_loses_context_pitree_does_not(pi_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "source.jsonl"
    source.write_bytes(_label_mid_path())
    tree, _ = load_session(source)
    out = export_path(tree, EntryReader(source, tree), None, "jsonl", tmp_path / "fork.jsonl")
    pi_fork = Path(pi_run("fork", source)["file"])
    assert [m["role"] for m in pi_run("context", pi_fork)["messages"]] == ["user", "assistant"]  # Pi's bug
    seen = pi_run("context", out)
    assert [m["role"] for m in seen["messages"]] == ["user", "assistant", "user", "assistant"]
    assert seen["labels"] == {"u1": "start", "u2": "second"}
    assert seen["path"][:4] == ["u1", "a1", "u2", "a2"] and len(seen["path"]) == 6  # + the two new labels
