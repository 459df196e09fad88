"""`pitree.ops`: jump, label and migrate through the operations the CLI and the TUI share. Refusals say why in
one line and leave the file byte for byte as it was; an append adds one whole line; the abandoned branch is
prepared once per summary."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.cli.main import main
from pitree.ops import jump as jump_ops
from pitree.ops.errors import NeedsMigration, OpError
from pitree.ops.jump import marker_entry, offline_summary, plan_jump, prepare_job, summary_entry
from pitree.ops.label import plan_label
from pitree.ops.migrate import migrate
from pitree.ops.write import append_entry, check_writable, resolve
from pitree.store.session_file import EntryReader, load_session

from tests.sessions import assistant, entry, header, to_bytes, user

HEADER = header()

# u1 - a1 - u2 - a2 (leaf), and a side branch a1 - u3
ENTRIES = [
    user("u1", None, "first"),
    assistant("a1", "u1", "one"),
    user("u2", "a1", "second"),
    assistant("a2", "u2", "two"),
    user("u3", "a1", "side"),
    assistant("a3", "u3", "side answer"),
    user("u4", "a3", "back"),
    assistant("a4", "u4", "leaf"),
    entry("label", "l1", "a4", targetId="a1", label="kept"),
]


def session(tmp_path: Path, entries: list[dict[str, Any]] = ENTRIES, header: dict[str, Any] | None = HEADER) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(entries, head=header, with_header=header is not None))
    return path


def loaded(path: Path) -> tuple[Any, int]:
    tree, builder = load_session(path)
    return tree, builder.size


def last_line(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    value: dict[str, Any] = orjson.loads(data.splitlines()[-1])
    return value


# ---- refusals: one line, nothing written ----------------------------------------------------------------------


def _no_header(path: Path) -> None:
    tree, _ = loaded(path)
    check_writable(tree, path)


def _old_version(path: Path) -> None:
    tree, _ = loaded(path)
    check_writable(tree, path)


def _unknown_id(path: Path) -> None:
    tree, _ = loaded(path)
    resolve(tree, "zzzz")


def _clear_unlabelled(path: Path) -> None:
    tree, _ = loaded(path)
    plan_label(tree, path, tree.by_id["u2"], None)


def _empty_label(path: Path) -> None:
    tree, _ = loaded(path)
    plan_label(tree, path, tree.by_id["u2"], "   ")


def _changed_since_read(path: Path) -> None:
    tree, size = loaded(path)
    plan = plan_jump(tree, tree.by_id["a2"])
    entry = marker_entry(tree, plan, plan.marker_reason)
    with open(path, "ab") as fh:  # Pi appends meanwhile
        fh.write(orjson.dumps(assistant("a5", "a4", "pi")) + b"\n")
    append_entry(path, entry, size)


def _migrate_without_header(path: Path) -> None:
    migrate(path)


@pytest.mark.parametrize(
    ("action", "header", "error", "message"),
    [
        (_no_header, None, OpError, "no session header; Pi treats this file as empty"),
        (_old_version, {**HEADER, "version": 2}, NeedsMigration, "is a version 2 session"),
        (_unknown_id, HEADER, OpError, "zzzz"),
        (_clear_unlabelled, HEADER, OpError, "entry u2 has no label to clear; nothing was written"),
        (_empty_label, HEADER, OpError, "the label is empty"),
        (_changed_since_read, HEADER, OpError, "changed on disk since it was read"),
        (_migrate_without_header, None, OpError, "no session header; pitree will not migrate"),
    ],
)
def test_refusals_say_why_and_write_nothing(
    tmp_path: Path, action: Callable[[Path], None], header: dict[str, Any] | None, error: type, message: str
) -> None:
    path = session(tmp_path, header=header)
    before = path.read_bytes()
    with pytest.raises(error) as info:
        action(path)
    assert message in str(info.value) and "\n" not in str(info.value)
    after = path.read_bytes()
    if action is _changed_since_read:
        assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1  # only Pi's line
    else:
        assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]  # no temp file, no backup


# ---- appends: one whole line, where Pi continues ----------------------------------------------------------------


def _jump_marker(tree: Any, reader: EntryReader) -> dict[str, Any]:
    plan = plan_jump(tree, tree.by_id["a2"])
    return marker_entry(tree, plan, plan.marker_reason)


def _jump_summary(tree: Any, reader: EntryReader) -> dict[str, Any]:
    plan = plan_jump(tree, tree.by_id["a2"])
    return summary_entry(tree, plan, offline_summary(prepare_job(tree, reader, plan)))


def _set_label(tree: Any, reader: EntryReader) -> dict[str, Any]:
    return plan_label(tree, reader.path, tree.by_id["u2"], "  important  ")


def _clear_label(tree: Any, reader: EntryReader) -> dict[str, Any]:
    return plan_label(tree, reader.path, tree.by_id["a1"], None)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (_jump_marker, {"type": "custom", "customType": "pitree.jump", "parentId": "a2"}),
        (_jump_summary, {"type": "branch_summary", "parentId": "a2", "fromId": "l1"}),
        (_set_label, {"type": "label", "parentId": "l1", "targetId": "u2", "label": "important"}),
        (_clear_label, {"type": "label", "parentId": "l1", "targetId": "a1"}),
    ],
)
def test_appends_one_whole_line(
    tmp_path: Path, make: Callable[[Any, EntryReader], dict[str, Any]], expected: dict[str, Any]
) -> None:
    path = session(tmp_path)
    before = path.read_bytes()
    tree, size = loaded(path)
    entry = make(tree, EntryReader(path, tree))
    offset = append_entry(path, entry, size)
    after = path.read_bytes()
    assert offset == len(before) and after.startswith(before)
    assert after[len(before) :].count(b"\n") == 1 and after.endswith(b"\n")
    line = last_line(path)
    assert line == entry and expected.items() <= line.items()
    if expected["type"] == "label" and "label" not in expected:
        assert "label" not in line
    tree2, _ = loaded(path)
    assert tree2.leaf is not None and tree2.leaf.id == entry["id"]


def test_append_closes_a_torn_last_line_first(tmp_path: Path) -> None:
    path = session(tmp_path)
    with open(path, "ab") as fh:
        fh.write(b'{"type":"mess')  # a crash mid-write
    size = path.stat().st_size
    tree, _ = loaded(path)
    plan = plan_jump(tree, tree.by_id["a2"])
    offset = append_entry(path, marker_entry(tree, plan, plan.marker_reason), size)
    data = path.read_bytes()
    assert data[offset - 1 : offset] == b"\n" and data[size : size + 1] == b"\n"
    assert last_line(path)["customType"] == "pitree.jump"


# ---- migrate ----------------------------------------------------------------------------------------------------


def test_migrate_rewrites_as_v3_with_a_backup(tmp_path: Path) -> None:
    path = session(tmp_path, header={**HEADER, "version": 2})
    before = path.read_bytes()
    backup = migrate(path)
    assert backup is not None and backup.read_bytes() == before
    tree, size = loaded(path)
    check_writable(tree, path)  # now writable
    assert orjson.loads(path.read_bytes().splitlines()[0])["version"] == 3 and size == path.stat().st_size
    assert [n.id for n in tree.nodes] == [e["id"] for e in ENTRIES]


# ---- the CLI prepares the abandoned branch once -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("summary", "prepared"),
    [("extractive", 1), ("none", 0)],
)
def test_cli_branch_prepares_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, summary: str, prepared: int) -> None:
    path = session(tmp_path)
    calls: list[int] = []
    real = jump_ops.prepare_branch_tail

    def counting(nodes: list[Any], read: Any, budget: int, pi073: bool = False) -> Any:
        calls.append(len(nodes))
        return real(nodes, read, budget, pi073)

    monkeypatch.setattr(jump_ops, "prepare_branch_tail", counting)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["branch", str(path), "--to", "a2", "--summary", summary, "--yes"])
    assert code == 0
    assert calls == [5] * prepared  # l1, a4, u4, a3, u3 left behind: read and budgeted once
    assert last_line(path)["type"] == ("branch_summary" if prepared else "custom")
