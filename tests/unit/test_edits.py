"""pitree.session.edits: which context_edit is in effect per target on the active path (SPEC-pi1 A3/A4, C2-C8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pitree.session.edits import Edit, PathEdits, edit_effect, leaf_edits, path_edits, selected_flags
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader, load_session

from tests.sessions import assistant, entry, user, write_session_file


def sys_msg(eid: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return entry("message", eid, parent, message={"role": "system", "content": "", **fields})


def edit(eid: str, parent: str, target: Any, replacement: Any = None, **fields: Any) -> dict[str, Any]:
    return entry("context_edit", eid, parent, targetId=target, replacement=replacement, **fields)


def compaction(eid: str, parent: str, first_kept: Any) -> dict[str, Any]:
    return entry("compaction", eid, parent, summary="s", firstKeptEntryId=first_kept, tokensBefore=1)


def edits_of(tmp_path: Path, entries: list[dict[str, Any]]) -> tuple[PathEdits, SessionTree]:
    path = write_session_file(tmp_path / "s.jsonl", entries)
    tree, _ = load_session(path)
    got = path_edits(tree.active_path(), EntryReader(path, tree).entries)
    assert leaf_edits(tree, EntryReader(path, tree).entries) == got  # the explorer's way, the same
    return got, tree


def effects(pe: PathEdits) -> dict[str, tuple[str, str, bool]]:
    return {t: (te.edit.id, te.edit.kind, te.selected) for t, te in pe.by_target.items()}


CASES: list[tuple[str, list[dict[str, Any]], dict[str, tuple[str, str, bool]], dict[str, tuple[str, Any]]]] = [
    ("no edits", [user("u1", None), assistant("a1", "u1")], {}, {}),
    (
        "C2 omit on the path",
        [user("u1", None), assistant("a1", "u1"), edit("e1", "a1", "u1")],
        {"u1": ("e1", "omit", True)},
        {"e1": ("effect", None)},
    ),
    (
        "C2 the edit on a sibling branch does not apply at the leaf",
        [user("u1", None), assistant("a1", "u1"), edit("e1", "a1", "u1"), user("u3", "a1", t=5)],
        {},
        {},
    ),
    (
        "C3 two edits: the last wins, the first is superseded",
        [
            user("u1", None),
            assistant("a1", "u1"),
            edit("e1", "a1", "a1", {"content": "v1"}),
            edit("e2", "e1", "a1", {"content": "v2"}),
        ],
        {"a1": ("e2", "replace", True)},
        {"e1": ("superseded", "e2"), "e2": ("effect", None)},
    ),
    (
        "target not on the path",
        [user("u1", None), assistant("a1", "u1"), edit("e1", "a1", "zz")],
        {},
        {"e1": ("no-target", None)},
    ),
    (
        "edit before the kept range does not apply; one after it does",
        [
            user("u1", None),
            edit("e1", "u1", "u1"),
            user("u2", "e1"),
            compaction("c1", "u2", "u2"),
            edit("e2", "c1", "u2", {"content": "x"}),
        ],
        {"u2": ("e2", "replace", True)},
        {"e1": ("unselected", "c1"), "e2": ("effect", None)},
    ),
    (
        "an edit after a compaction on a summarized entry: the target is not in the context",
        [user("u1", None), user("u2", "u1"), compaction("c1", "u2", "u2"), edit("e1", "c1", "u1")],
        {"u1": ("e1", "omit", False)},
        {"e1": ("no-target", None)},
    ),
    (
        "C7 retain-none: nothing before the compaction is selected",
        [user("u1", None), edit("e1", "u1", "u1"), compaction("c1", "e1", "c1"), user("u9", "c1")],
        {},
        {"e1": ("unselected", "c1")},
    ),
    (
        "a missing replacement is invalid, a string one too",
        [
            user("u1", None),
            user("u2", "u1"),
            entry("context_edit", "e1", "u2", targetId="u1"),
            edit("e2", "e1", "u2", "s"),
        ],
        {"u1": ("e1", "invalid", True), "u2": ("e2", "invalid", True)},
        {"e1": ("effect", None), "e2": ("effect", None)},
    ),
    (
        "a non-string target matches nothing",
        [user("u1", None), edit("e1", "u1", 5)],
        {},
        {"e1": ("no-target", None)},
    ),
]


@pytest.mark.parametrize(("name", "entries", "by_target", "status"), CASES, ids=[c[0] for c in CASES])
def test_path_edits(
    tmp_path: Path,
    name: str,
    entries: list[dict[str, Any]],
    by_target: dict[str, tuple[str, str, bool]],
    status: dict[str, tuple[str, Any]],
) -> None:
    pe, _ = edits_of(tmp_path, entries)
    assert effects(pe) == by_target
    assert pe.status == status


def test_only_the_last_compaction_and_edit_entries_are_read(tmp_path: Path) -> None:
    entries = [user("u1", None), compaction("c0", "u1", "u1"), user("u2", "c0"), compaction("c1", "u2", "u2")]
    entries.append(edit("e1", "c1", "u2"))
    path = write_session_file(tmp_path / "s.jsonl", entries)
    tree, _ = load_session(path)
    asked: list[str] = []

    def read(nodes: list[Any]) -> list[dict[str, Any]]:
        asked.extend(n.id for n in nodes)
        return EntryReader(path, tree).entries(nodes)

    path_edits(tree.active_path(), read)
    assert asked == ["c1", "e1"]
    asked.clear()
    path_edits(tree.branch(tree.get("u2")), read)  # no edit on this path: nothing is read
    assert asked == []
    assert leaf_edits(tree, read) == path_edits(tree.active_path(), read) and asked == ["c1", "e1"] * 2
    without = write_session_file(tmp_path / "no-edit.jsonl", entries[:4])
    plain, _ = load_session(without)
    asked.clear()
    assert leaf_edits(plain, read) == PathEdits(leaf_id="c1") and asked == []


@pytest.mark.parametrize(
    ("entries", "first_kept", "flags"),
    [
        ([user("u1", None), user("u2", "u1")], None, [True, True]),
        # C6: the system message before the compaction is dropped, those after it stay
        (
            [
                sys_msg("s1", None),
                user("u1", "s1"),
                sys_msg("s2", "u1"),
                compaction("c", "s2", "s1"),
                sys_msg("s3", "c"),
            ],
            "s1",
            [False, True, False, True, True],
        ),
        # C8: an older compaction in the kept range stays selected
        (
            [user("u1", None), compaction("c1", "u1", "u1"), user("u2", "c1"), compaction("c2", "u2", "u1")],
            "u1",
            [True] * 4,
        ),
        ([user("u1", None), compaction("c1", "u1", "nope")], "nope", [False, True]),
    ],
)
def test_selected_flags(tmp_path: Path, entries: list[dict[str, Any]], first_kept: Any, flags: list[bool]) -> None:
    path = write_session_file(tmp_path / "s.jsonl", entries)
    tree, _ = load_session(path)
    assert selected_flags(tree.active_path(), first_kept) == flags


def test_edit_effect_in_words(tmp_path: Path) -> None:
    entries = [
        user("u1", None),
        entry("custom_message", "m1", "u1", customType="x", content="c"),
        entry("branch_summary", "b1", "m1", fromId="u1", summary="s"),
    ]
    _, tree = edits_of(tmp_path, entries)
    u1, m1, b1 = (tree.get(i) for i in ("u1", "m1", "b1"))
    assert u1 is not None and m1 is not None and b1 is not None
    assert edit_effect(Edit("e", "u1", None), u1) == "omitted from context by edit"
    assert edit_effect(Edit("e", "u1", {"content": "x"}), u1) == "content replaced by edit"
    assert edit_effect(Edit("e", "m1", {"content": "x"}), m1) == "content replaced by edit"
    assert "unchanged" in edit_effect(Edit("e", "b1", {"content": "x"}), b1)
    assert "malformed" in edit_effect(Edit("e", "u1", 3), u1)
