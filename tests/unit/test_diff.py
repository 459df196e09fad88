"""`ops.diff`: where two branches split and what each did (table-driven over one forked session), the context size
at each end against `build_context`, and the limits that keep a long side cheap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pitree.ops.diff import compare, context_size, diff_dict
from pitree.ops.diff_markdown import diff_markdown
from pitree.ops.diff_rows import common_root, rows, shortener
from pitree.session.context import build_context
from pitree.session.entries import Node
from pitree.session.load import load_bytes
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader, load_session

from tests.sessions import assistant, chain, entry, to_bytes, tool_result, user, write_session_file

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"


PYTEST, README = {"command": "pytest"}, {"path": "README.md"}


def forked() -> list[dict[str, Any]]:
    """A request, a read, then two attempts: A edits and runs a failing test; B writes, reads, compacts, goes on."""
    return [
        user("u1", None, "fix the parser", t=0),
        assistant("a1", "u1", "looking", t=1, calls=[("c1", "read", {"path": "src/p.py"})]),
        tool_result("r1", "a1", "c1", t=2),
        user("ua", "r1", "try approach A", t=3),
        assistant("aa1", "ua", "", t=4, calls=[("c2", "edit", {"path": "src/p.py"}), ("c3", "bash", PYTEST)]),
        tool_result("ra2", "aa1", "c2", "edit", t=5),
        tool_result("ra3", "ra2", "c3", "bash", "1 failed", t=6, error=True),
        assistant("aa2", "ra3", "A is done\nsecond line", t=7),
        user("ub", "r1", "try approach B", t=8),
        assistant("ab1", "ub", "", t=9, calls=[("c4", "write", {"path": "src/q.py"}), ("c5", "read", README)]),
        tool_result("rb4", "ab1", "c4", "write", t=10),
        tool_result("rb5", "rb4", "c5", t=11),
        entry("compaction", "cb", "rb5", t=12, summary="so far", firstKeptEntryId="ub", tokensBefore=5000),
        user("ub2", "cb", "continue", t=13),
        assistant("ab2", "ub2", "B is done", t=14),
    ]


@pytest.fixture
def session(tmp_path: Path) -> tuple[SessionTree, EntryReader]:
    path = write_session_file(tmp_path / "s.jsonl", forked())
    tree, _ = load_session(path)
    return tree, EntryReader(path, tree)


# a, b -> relation, ancestor, (entries, turns) of A and of B
CASES = [
    ("aa2", "ab2", "siblings", "r1", (5, 1), (7, 2)),
    ("ab2", "aa2", "siblings", "r1", (7, 2), (5, 1)),
    ("a1", "ab2", "a-before-b", "a1", (0, 0), (8, 3)),
    ("ab2", "u1", "b-before-a", "u1", (9, 3), (0, 0)),
    ("ra3", "ra3", "same", "ra3", (0, 0), (0, 0)),
    ("ua", "ub", "siblings", "r1", (1, 1), (1, 1)),
]


@pytest.mark.parametrize(("a", "b", "relation", "ancestor", "side_a", "side_b"), CASES)
def test_split_and_sides(
    session: tuple[SessionTree, EntryReader],
    a: str,
    b: str,
    relation: str,
    ancestor: str,
    side_a: tuple[int, int],
    side_b: tuple[int, int],
) -> None:
    tree, reader = session
    diff = compare(tree, tree.resolve(a), tree.resolve(b), reader.entries)
    assert diff.relation == relation
    assert diff.ancestor is not None and diff.ancestor.id == ancestor
    assert (diff.side_a.entries, diff.side_a.turn_count) == side_a
    assert (diff.side_b.entries, diff.side_b.turn_count) == side_b
    assert len(diff.rows()) == max(side_a[1], side_b[1])
    assert diff.ancestor is tree.common_ancestor(diff.a, diff.b)


def test_no_common_ancestor() -> None:
    tree = load_bytes(to_bytes([user("r1", None, "one"), user("r2", None, "two"), assistant("x", "r2", "three")]))
    diff = compare(tree, tree.resolve("r1"), tree.resolve("x"))
    assert diff.ancestor is None and diff.relation == "unrelated" and diff.side_b.entries == 2
    assert not diff.side_b.files_complete and diff.side_b.last_answer == ("x", "three")  # no reader: row text
    assert diff_dict(diff)["ancestor"] is None


def test_what_each_side_did(session: tuple[SessionTree, EntryReader]) -> None:
    tree, reader = session
    diff = compare(tree, tree.resolve("aa2"), tree.resolve("ab2"), reader.entries)
    a, b = diff.side_a, diff.side_b
    (turn_a,) = a.turns
    assert turn_a.request == "try approach A" and turn_a.request_id == "ua"
    assert [(c.text, c.result_id, c.error) for c in turn_a.calls] == [
        ("[edit: src/p.py]", "ra2", False),
        ("[bash: pytest]", "ra3", True),
    ]
    assert turn_a.answers == [("aa2", "A is done second line")]
    assert (a.calls, a.errors) == (2, 1)
    assert a.files.lists() == ([], ["src/p.py"])
    assert b.files.lists() == (["README.md"], ["src/q.py"])
    assert diff.files_only() == {
        "a": {"read": [], "modified": ["src/p.py"]},
        "b": {"read": ["README.md"], "modified": ["src/q.py"]},
    }
    assert a.last_answer == ("aa2", "A is done\nsecond line")  # read in full from the file
    assert b.last_answer == ("ab2", "B is done")
    assert b.compactions == [("cb", "[compaction: 5k tokens]")] and b.turns[0].events[0][0] == "cb"
    assert a.tokens == 20 and a.cost == 1.0  # two replies of 1 + 2 + 3 + 4 tokens and $0.50
    assert b.tokens == 20 and b.cost == 1.0
    assert a.duration_ms == 4000 and b.duration_ms == 6000
    assert diff.context_a == build_context(tree, diff.a).size
    assert diff.context_b == build_context(tree, diff.b).size


def test_json_markdown_and_rows(session: tuple[SessionTree, EntryReader]) -> None:
    tree, reader = session
    diff = compare(tree, tree.resolve("aa2"), tree.resolve("ab2"), reader.entries)
    data = diff_dict(diff)
    assert data["relation"] == "siblings" and data["ancestor"]["entryId"] == "r1"
    side = data["sides"]["a"]
    assert side["turns"][0]["toolCalls"][1] == {
        "entryId": "aa1",
        "call": "[bash: pytest]",
        "resultId": "ra3",
        "outcome": "error",
    }
    assert side["files"]["only"] == {"read": [], "modified": ["src/p.py"]}
    assert side["context"] == diff.context_a.as_dict() and side["durationMs"] == 4000
    table = rows(diff)
    turn_rows = [r for r in table if r.turn is not None]
    assert [(r.a_id, r.b_id) for r in turn_rows] == [("ua", "ub"), (None, "ub2")]
    assert ("error", "  ✗ [bash: pytest]") in turn_rows[0].a
    md = diff_markdown(diff, "s.jsonl")
    assert "| modified | src/p.py \\* | src/q.py \\* |" in md and "### Turn 2" in md


@pytest.mark.parametrize(
    ("paths", "root"),
    [
        (["/w/p/src/x.py", "/w/p/src/y.py"], "/w/p/src"),
        (["/w/x.py", "/v/y.py"], None),  # only `/` in common
        (["/a/b.py", "/a/c.py"], None),  # one level: nothing to gain
        (["/home/u", "/home/u/p/x.py", "/home/u/p/y/z.py"], "/home/u/p"),  # a folder read does not pull it up
        (["x.py", "/w/p/a.py"], None),
        ([], None),
    ],
)
def test_common_root(paths: list[str], root: str | None) -> None:
    assert common_root(paths) == root
    if root is not None:
        assert shortener(root)(f"[read: {root}/x.py]") == "[read: …/x.py]"


def test_a_long_side_keeps_few_turns_and_reads_only_them(tmp_path: Path) -> None:
    entries = chain(400)  # 200 turns
    entries.append(user("other", entries[9]["id"], "elsewhere", t=500))
    path = write_session_file(tmp_path / "s.jsonl", entries)
    tree, _ = load_session(path)
    reader = EntryReader(path, tree)
    read: list[Node] = []

    def counting(nodes: list[Node]) -> list[dict[str, Any]]:
        read.extend(nodes)
        return reader.entries(nodes)

    diff = compare(tree, tree.leaf, tree.resolve("e0000399"), counting, turns_max=5)
    assert diff.side_b.entries == 390 and diff.side_b.turn_count == 195 and len(diff.side_b.turns) == 5
    assert not diff.side_b.files_complete
    assert [n.id for n in read] == ["e0000399"]  # only the last answer: no reply here made a tool call
    assert "branch B is much longer than A: 390 entries against 1" in diff.notes
    assert "B: the first 5 of 195 turns are shown" in diff.notes


def _edited() -> list[dict[str, Any]]:
    """Context edits, an errored reply and a compaction: the cases where Pi's size is not the plain usage sum."""
    return [
        user("u1", None, "one " * 50, t=0),
        assistant("a1", "u1", "two " * 40, t=1),
        user("u2", "a1", "three " * 30, t=2),
        assistant("a2", "u2", "", t=3, stop="error", errorMessage="boom"),
        entry("context_edit", "e1", "a2", t=4, targetId="u2", replacement=None),
        user("u3", "e1", "four", t=5),
        assistant("a3", "u3", "five", t=6),
        user("u4", "a3", "six " * 20, t=7),
        entry("context_edit", "e2", "a3", t=8, targetId="u4", replacement={"content": "x"}),
        entry("compaction", "c1", "u4", t=9, summary="s " * 30, firstKeptEntryId="u3", tokensBefore=900),
        user("u5", "c1", "seven", t=10),
        assistant("a5", "u5", "eight", t=11, usage={"input": 0, "output": 0, "totalTokens": 0}),
    ]


def _edit_ahead() -> list[dict[str, Any]]:
    """An edit written before the reply whose usage sizes the context, naming an entry after that reply."""
    return [
        user("u1", None, "one", t=0),
        entry("context_edit", "e0", "u1", t=1, targetId="u9", replacement={"content": "short"}),
        user("u2", "e0", "two", t=2),
        assistant("a2", "u2", "three", t=3),
        user("u9", "a2", "a long request " * 40, t=4),
    ]


CONTEXT_CASES = {"forked": forked(), "edited": _edited(), "edit-ahead": _edit_ahead(), "chain": chain(30)}


@pytest.mark.parametrize("entries", CONTEXT_CASES.values(), ids=CONTEXT_CASES.keys())
def test_context_size_is_build_contexts_at_every_entry(entries: list[dict[str, Any]]) -> None:
    tree = load_bytes(to_bytes(entries))
    for node in tree.nodes:
        assert context_size(tree, node).as_dict() == build_context(tree, node).size.as_dict(), node.id


def test_context_size_on_the_corpus() -> None:
    files = sorted(CORPUS.glob("*.jsonl")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip("../shared/corpus is not there")
    for path in files:
        tree, _ = load_session(path)
        for node in tree.nodes[:: max(1, len(tree.nodes) // 200)]:
            assert context_size(tree, node).as_dict() == build_context(tree, node).size.as_dict(), (path, node.id)
