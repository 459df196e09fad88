"""`read_leaf_branch` finds the last entries of the leaf's path by reading the file backwards, and each says what
the whole tree says of it: the same ids in the same order, row texts, estimates, usage and labels."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from pitree.store import leaf_branch
from pitree.store.leaf_branch import read_leaf_branch
from pitree.store.session_file import load_session_fast

from tests.omp_files import write_omp
from tests.sessions import assistant, chain, entry, header, to_bytes, tool_result, user
from tests.unit.test_gen_session import gen


def whole(path: Path):  # type: ignore[no-untyped-def]
    tree, _ = load_session_fast(path, save_cache=False)
    return tree


def same_as_the_tree(path: Path, entries: int = 400) -> leaf_branch.LeafBranch:
    """The branch read backwards equals the end of the loaded tree's active path, entry for entry."""
    branch = read_leaf_branch(path, entries=entries)
    assert branch is not None
    full = whole(path)
    path_nodes = full.active_path()
    mini = branch.tree
    assert [n.id for n in mini.nodes] == [n.id for n in path_nodes[-len(mini.nodes) :]]
    assert branch.complete == (len(mini.nodes) == len(path_nodes))
    for got, want in zip(mini.nodes, path_nodes[-len(mini.nodes) :], strict=True):
        assert mini.row_text(got) == full.row_text(want), want.id
        assert (got.type, got.role, got.est, got.usage, got.model, got.flags) == (
            want.type,
            want.role,
            want.est,
            want.usage,
            want.model,
            want.flags,
        ), want.id
        assert mini.labels.get(got.id) == full.labels.get(want.id), want.id
    return branch


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_generated_session_with_branches_labels_and_compactions(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "s.jsonl"
    gen.generate(path, 3000, seed=seed, branches=30, labels=40, compactions=6)
    branch = same_as_the_tree(path)
    assert len(branch.tree.nodes) == 400 and not branch.complete
    assert same_as_the_tree(path, entries=10**6).complete, "read to its root, the whole path"


@pytest.mark.parametrize("chunk", [7, 64, 4096])
def test_lines_cut_by_the_reads_are_read_whole(tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leaf_branch, "CHUNK", chunk)
    path = tmp_path / "s.jsonl"
    entries = chain(30)
    entries.append(user("long", entries[-1]["id"], text="x" * 20_000, t=100))
    entries.append(assistant("end", "long", text="é" * 3000, t=101))
    path.write_bytes(to_bytes(entries))
    branch = same_as_the_tree(path)
    assert branch.complete and branch.tree.leaf is not None and branch.tree.leaf.id == "end"


def test_a_parent_far_up_the_file_is_followed(tmp_path: Path) -> None:
    """After a jump the next entry's parent is far above it; the lines between are passed over."""
    entries = chain(200)
    entries += [user("back", "e0000020", text="tried again", t=500), assistant("reply", "back", t=501)]
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(entries))
    branch = same_as_the_tree(path)
    assert [n.id for n in branch.tree.nodes][-3:] == ["e0000020", "back", "reply"] and branch.complete


def test_a_tool_result_shows_its_call_and_a_label_names_its_entry(tmp_path: Path) -> None:
    entries = [
        user("u", None, text="go", t=1),
        assistant("a", "u", text="", t=2, calls=(("call-1", "read", {"path": "src/x.py"}),), stop="toolUse"),
        tool_result("r", "a", "call-1", text="file body", t=3),
        entry("label", "l1", "r", t=4, targetId="a", label="first"),
        entry("label", "l2", "l1", t=5, targetId="u", label="gone"),
        entry("label", "l3", "l2", t=6, targetId="u", label=""),
        entry("label", "l4", "l3", t=7, targetId="a", label="second"),
        assistant("done", "l4", text="all read", t=8),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(entries))
    branch = same_as_the_tree(path)
    mini = branch.tree
    assert mini.row_text(mini.get("r")).startswith("[read") and mini.labels == {"a": "second"}


def test_a_last_line_without_its_newline_is_left_as_the_tail_leaves_it(tmp_path: Path) -> None:
    entries = chain(20)
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(entries) + orjson.dumps(user("torn", "e0000019", t=99)))
    branch = read_leaf_branch(path)
    assert branch is not None and branch.tree.leaf is not None and branch.tree.leaf.id == "e0000019"


def test_the_budget_and_a_cycle_stop_the_walk(tmp_path: Path) -> None:
    entries = chain(100)
    entries += [user(f"pad{i}", "e0000000", text="p" * 500, t=200 + i) for i in range(50)]
    entries.append(user("leaf", "e0000050", t=400))
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(entries))
    short = read_leaf_branch(path, budget=4096)
    assert short is not None and [n.id for n in short.tree.nodes] == ["leaf"] and not short.complete
    assert same_as_the_tree(path).complete
    cyc = tmp_path / "cycle.jsonl"
    cyc.write_bytes(to_bytes([user("a", "c", t=1), user("b", "a", t=2), user("c", "b", t=3)]))
    branch = read_leaf_branch(cyc)
    assert branch is not None and [n.id for n in branch.tree.nodes] == ["a", "b", "c"] and not branch.complete


def test_oh_my_pi_title_slot_before_the_header(tmp_path: Path) -> None:
    path = write_omp(tmp_path / "omp.jsonl", chain(40), title="A title")
    branch = same_as_the_tree(path)
    assert branch.complete


@pytest.mark.parametrize(
    "data",
    [
        b"",
        to_bytes([user(None, None, t=1), user(None, None, t=2)], version=1),
        to_bytes(chain(5), with_header=False),
        b"not json\n" + to_bytes(chain(5)),
        to_bytes([]),
        orjson.dumps(header()) + b"\n" + b"garbage\n" * 5,
    ],
    ids=["empty", "v1", "no header", "junk first", "header only", "no entries"],
)
def test_nothing_to_show_is_none(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    assert read_leaf_branch(path) is None


def test_cancelled_or_missing_is_none(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(10)))
    assert read_leaf_branch(path, cancelled=lambda: True) is None
    assert read_leaf_branch(tmp_path / "missing.jsonl") is None


def test_the_file_is_not_changed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    gen.generate(path, 500, seed=4)
    before = path.read_bytes(), path.stat().st_mtime_ns
    read_leaf_branch(path)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
