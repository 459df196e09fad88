"""SessionTree: roots, child order, orphans, self-parents, cycles, duplicates, labels, name, paths."""

from __future__ import annotations

import time
from typing import Any

import pytest
from pitree.session.context import build_context
from pitree.session.layout import build_layout, visible_indices
from pitree.session.load import load_bytes
from pitree.session.tree import SessionTree

from tests.sessions import assistant, chain, entry, fork_session, to_bytes, tool_result, ts, user


def ids(nodes: Any) -> list[str]:
    return [n.id for n in nodes]


def tree_of(entries: list[dict[str, Any]]) -> SessionTree:
    return load_bytes(to_bytes(entries))


def check_invariants(tree: SessionTree) -> None:
    """Every entry that is in the tree is reachable once, and every path ends at a root."""
    seen = ids(tree.iter_tree())
    assert len(seen) == len(set(seen))
    live = [n for n in tree.nodes if not tree.is_dropped(n)]
    assert sorted(seen) == sorted(n.id for n in live)
    for node in live:
        path = tree.branch(node)
        assert path[0] in tree.roots and path[-1] is node and len(path) <= len(live)
        for parent, child in zip(path, path[1:], strict=False):
            assert child in parent.children and child.parent is parent
    assert tree.leaf_count() == len(tree.leaves())


def test_fork_roots_children_leaf_branch() -> None:
    tree = tree_of(fork_session())
    check_invariants(tree)
    assert ids(tree.roots) == ["u1"]
    assert ids(tree.get("a1").children) == ["u3", "u2"]
    assert tree.leaf is not None and tree.leaf.id == "a2"
    assert ids(tree.active_path()) == ["u1", "a1", "u2", "a2"]
    assert tree.active_ids() == {"u1", "a1", "u2", "a2"}
    assert ids(tree.leaves()) == ["a3", "a2"]
    assert [tree.depth(tree.get(i)) for i in ("u1", "a1", "u3", "a2")] == [0, 1, 2, 3]
    assert ids(tree.iter_tree()) == ["u1", "a1", "u3", "a3", "u2", "a2"]


def test_leaf_is_the_last_line_not_the_newest_timestamp() -> None:
    entries = [user("r", None, t=1), user("new", "r", t=50), user("old", "r", t=2)]
    tree = tree_of(entries)
    assert tree.leaf is not None and tree.leaf.id == "old"
    assert ids(tree.get("r").children) == ["old", "new"]


def test_several_roots_stay_in_file_order() -> None:
    tree = tree_of([user("b", None, t=9), user("a", None, t=1), user("c", "gone", t=0)])
    assert ids(tree.roots) == ["b", "a", "c"]


@pytest.mark.parametrize(
    ("stamps", "order"),
    [
        ([ts(2), ts(1)], ["c2", "c1"]),
        ([ts(1), ts(1)], ["c1", "c2"]),  # ties: file order
        (["garbage", ts(1)], ["c2", "c1"]),  # invalid timestamps sort after valid ones
        ([ts(1), None], ["c1", "c2"]),
        (["garbage", "also bad"], ["c1", "c2"]),  # among invalid ones: file order
        ([1000, 500], ["c2", "c1"]),  # numbers are milliseconds, as Date() reads them
        (["2026-01-01T01:00:00+01:00", "2026-01-01T00:30:00Z"], ["c1", "c2"]),  # offsets are honoured
    ],
)
def test_children_sort_by_timestamp(stamps: list[Any], order: list[str]) -> None:
    kids = [{**user(f"c{i + 1}", "p"), "timestamp": s} for i, s in enumerate(stamps)]
    tree = tree_of([user("p", None), *kids])
    assert ids(tree.get("p").children) == order


def test_sorting_holds_when_children_arrive_out_of_order() -> None:
    kids = [user(f"c{i}", "p", t=t) for i, t in enumerate((5, 3, 9, 1, 3))]
    tree = tree_of([user("p", None, t=0), *kids])
    assert ids(tree.get("p").children) == ["c3", "c1", "c4", "c0", "c2"]  # t 1, 3, 3 (file order), 5, 9


def test_orphans_are_adopted_when_the_parent_comes_later() -> None:
    tree = tree_of([user("kid", "late", t=5), user("kid2", "late", t=4), user("late", None, t=1)])
    check_invariants(tree)
    assert ids(tree.roots) == ["late"]
    assert ids(tree.get("late").children) == ["kid2", "kid"]  # sorted once adopted
    assert not tree.problems


def test_missing_parent_makes_a_root_and_is_reported() -> None:
    tree = tree_of([user("r", None), user("a", "nowhere")])
    assert ids(tree.roots) == ["r", "a"]
    assert any("nowhere" in p.message and "not in the file" in p.message for p in tree.problems)


def test_self_parent_is_a_root() -> None:
    tree = tree_of([user("r", None), user("s", "s"), user("k", "s")])
    check_invariants(tree)
    assert ids(tree.roots) == ["r", "s"] and ids(tree.get("s").children) == ["k"]
    assert any("own parent" in p.message for p in tree.problems)


@pytest.mark.parametrize(
    ("entries", "roots", "children"),
    [
        # a <-> b: broken at a, the earliest line
        ([user("a", "b"), user("b", "a")], ["a"], {"a": ["b"]}),
        # the earliest line is b here
        ([user("b", "a"), user("a", "b")], ["b"], {"b": ["a"]}),
        # a -> c -> b -> a
        ([user("a", "c"), user("b", "a"), user("c", "b")], ["a"], {"a": ["b"], "b": ["c"]}),
        # a cycle with a tail hanging off it, after an ordinary root
        (
            [user("r", None), user("a", "c"), user("b", "a"), user("c", "b"), user("t", "c")],
            ["r", "a"],
            {"a": ["b"], "b": ["c"], "c": ["t"]},
        ),
        # a cycle whose members also lead into an ordinary chain
        (
            [user("r", None), user("x", "y"), user("y", "x"), user("z", "y"), user("w", "r")],
            ["r", "x"],
            {"r": ["w"], "x": ["y"], "y": ["z"]},
        ),
    ],
)
def test_cycles_are_broken_at_the_earliest_entry(
    entries: list[dict[str, Any]], roots: list[str], children: dict[str, list[str]]
) -> None:
    tree = tree_of(entries)
    check_invariants(tree)
    assert ids(tree.roots) == roots
    for parent, kids in children.items():
        assert ids(tree.get(parent).children) == kids
    assert any("cycle" in p.message for p in tree.problems)
    ctx = build_context(tree, None)  # Pi loops forever here; pitree ends
    assert ctx.path[0] in tree.roots
    assert build_layout(tree, "all").rows


def test_duplicate_id_later_line_wins() -> None:
    tree = tree_of([user("r", None), user("d", "r", "old"), user("k", "d"), user("d", "r", "new")])
    check_invariants(tree)
    assert tree.get("d").text == "user: new"
    assert ids(tree.get("d").children) == ["k"]  # the children named the id, which now means the later line
    assert tree.entry_count == 4 and sum(1 for _ in tree.iter_tree()) == 3
    old = tree.nodes[1]
    assert tree.is_dropped(old) and old not in tree.get("r").children
    assert any("duplicate id d" in p.message for p in tree.problems)


def test_an_only_child_costs_no_list_and_a_second_one_makes_one() -> None:
    tree = tree_of([user("r", None), user("a", "r", t=5), user("b", "a"), user("c", "r", t=3), user("a", "r", t=9)])
    check_invariants(tree)
    # "a" is a duplicate: its first line left "r" with one child ("c"), its second makes two again
    assert ids(tree.get("r").children) == ["c", "a"] and type(tree.get("r")._kids) is list
    assert ids(tree.get("a").children) == ["b"] and tree.get("a")._kids is tree.get("b")  # the child itself
    assert tree.get("b").children == () and tree.get("b")._kids is None
    first_a = tree.nodes[1]
    assert first_a.children == () and tree.get("b").parent is tree.get("a")
    once = tree_of([user("r", None), user("a", "r"), user("c", "r"), user("a", "r", "again")])
    assert ids(once.get("r").children) == ["c", "a"]
    gone = tree_of([user("r", None), user("a", "r"), user("c", "r"), user("c", None, "a root now")])
    assert gone.get("r")._kids is gone.get("a")  # back from a list of two to the one child left


@pytest.mark.parametrize(
    "entries",
    [
        [user("d", None, "old"), user("x", None), user("d", "x", "new")],  # a duplicate root
        [user("r", None), user("d", "missing", "old"), user("d", "r", "new")],  # the earlier was an orphan
        [user("r", None), user("d", "r", "old"), user("d", "r", "new"), user("k", "d")],
    ],
)
def test_duplicates_leave_a_consistent_tree(entries: list[dict[str, Any]]) -> None:
    tree = tree_of(entries)
    check_invariants(tree)
    assert tree.get("d").text == "user: new"


def test_a_duplicate_last_line_is_the_leaf() -> None:
    tree = tree_of([user("r", None), user("d", "r", "old"), user("o", "r"), user("d", "r", "new")])
    assert tree.leaf is tree.get("d") and tree.leaf is not None and tree.leaf.text == "user: new"


def test_labels_replay_in_file_order() -> None:
    tree = tree_of(
        [
            user("u1", None),
            user("u2", "u1"),
            entry("label", "l1", "u2", targetId="u1", label="first", t=5),
            entry("label", "l2", "l1", targetId="u2", label="two"),
            entry("label", "l3", "l2", targetId="u1", label="renamed", t=7),
            entry("label", "l4", "l3", targetId="u2", label=""),  # empty clears
            entry("label", "l5", "l4", targetId="later", label="ahead"),  # target appears later
            user("later", "l5"),
            entry("label", "l6", "later", targetId="u2", label="back"),
            entry("label", "l7", "l6", targetId="u2"),  # absent clears too
            entry("label", "l8", "l7", targetId=5, label="bad"),
        ]
    )
    assert tree.labels == {"u1": "renamed", "later": "ahead"}
    assert tree.label_times["u1"] == tree.get("l3").ts
    assert any("targetId" in p.message for p in tree.problems)
    assert tree.get("l4").text == "[label: ]" and tree.get("l7").text == "[label: (cleared)]"


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ([], None),
        (["first"], "first"),
        (["first", "second"], "second"),
        (["first", ""], None),  # the latest decides: an empty name clears (Pi's getSessionName)
        (["first", "   "], None),
        (["  padded  "], "padded"),
        (["first", None], None),
        (["first", 7], None),
    ],
)
def test_session_name_is_the_latest_session_info(names: list[Any], expected: str | None) -> None:
    entries: list[dict[str, Any]] = [user("u1", None)]
    for i, name in enumerate(names):
        fields = {} if name is None else {"name": name}
        entries.append(entry("session_info", f"s{i}", entries[-1]["id"], **fields))
    assert tree_of(entries).name == expected


def test_branch_and_common_ancestor() -> None:
    tree = tree_of(fork_session())
    get = tree.get
    assert ids(tree.branch(get("a3"))) == ["u1", "a1", "u3", "a3"]
    assert tree.branch(None) == []
    assert ids(tree.branch(get("a3"), after=get("a1"))) == ["u3", "a3"]
    assert tree.branch(get("a3"), after=get("a3")) == []
    assert tree.common_ancestor(get("a2"), get("a3")) is get("a1")
    assert tree.common_ancestor(get("a2"), get("a2")) is get("a2")
    assert tree.common_ancestor(get("a2"), get("u1")) is get("u1")  # one is an ancestor of the other
    assert tree.common_ancestor(get("u1"), get("a3")) is get("u1")
    assert tree.common_ancestor(None, get("a3")) is None
    two_roots = tree_of([user("x", None), user("y", None)])
    assert two_roots.common_ancestor(two_roots.get("x"), two_roots.get("y")) is None


@pytest.mark.parametrize(
    ("query", "result"),
    [
        ("abc12345", "abc12345"),
        ("abd", "abd00000"),
        ("abc", "ambiguous"),
        ("zzz", "no entry"),
        ("", "no entry"),
    ],
)
def test_resolve_ids_and_prefixes(query: str, result: str) -> None:
    tree = tree_of([user("abc12345", None), user("abc99999", "abc12345"), user("abd00000", "abc99999")])
    if result in ("ambiguous", "no entry"):
        with pytest.raises(ValueError, match=result):
            tree.resolve(query)
    else:
        assert tree.resolve(query).id == result


def test_tool_result_rows_show_their_call_and_search_sees_it() -> None:
    tree = tree_of(
        [
            user("u1", None),
            assistant("a1", "u1", "", calls=(("c1", "read", {"path": "/src/app.py", "offset": 10, "limit": 5}),)),
            tool_result("r1", "a1", "c1", "read"),
            tool_result("r2", "r1", "unknown-call", "bash"),
            entry("label", "l1", "r2", targetId="r1", label="Important"),
            entry("branch_summary", "b1", "l1", fromId="u1", summary="Went to Paris"),
        ]
    )
    assert tree.row_text(tree.get("r1")) == "[read: /src/app.py:10-14]"
    assert tree.row_text(tree.get("r2")) == "[bash]"
    assert "important" in tree.search_text(tree.get("r1")) and "toolresult" in tree.search_text(tree.get("r1"))
    assert "paris" in tree.search_text(tree.get("b1"))
    assert "/src/app.py" in tree.search_text(tree.get("a1"))


def test_a_100000_deep_chain_has_no_recursion() -> None:
    n = 100_000
    entries = chain(n)
    entries.append(user("fork", entries[n // 2]["id"], "side", t=n + 1))
    data = to_bytes(entries)
    start = time.perf_counter()
    tree = load_bytes(data)
    assert tree.entry_count == n + 1 and ids(tree.roots) == [entries[0]["id"]]
    deep = tree.get(entries[-2]["id"])
    assert len(tree.branch(deep)) == n and tree.depth(deep) == n - 1
    assert len(tree.active_path()) == n // 2 + 2
    assert tree.common_ancestor(deep, tree.leaf) is tree.get(entries[n // 2]["id"])
    assert sum(1 for _ in tree.iter_tree()) == n + 1 and len(tree.leaves()) == 2
    layout = build_layout(tree)
    assert len(layout.rows) == n + 1 and layout.rows[-1].node is deep
    fold_at = layout.index_of(entries[n // 2 + 1]["id"])
    assert fold_at is not None and layout.foldable(fold_at)
    shown = visible_indices(layout, {entries[n // 2 + 1]["id"]})
    assert len(shown) == n // 2 + 3
    ctx = build_context(tree, deep)
    assert len(ctx.messages) == n
    assert time.perf_counter() - start < 60  # generous: this guards against quadratic work, not speed
