"""SessionTree (roots, order, orphans, cycles, duplicates, labels, name) and Pi's /tree layout."""

from __future__ import annotations

import pytest
from pitree.session.layout import FILTERS, build_layout, visible_indices
from pitree.session.load import SessionBuilder, load_bytes

from tests.sessions import assistant, chain, entry, fork_session, to_bytes, tool_result, user


def ids(nodes) -> list[str]:  # type: ignore[no-untyped-def]
    return [n.id for n in nodes]


def test_roots_children_leaf_and_branch() -> None:
    tree = load_bytes(to_bytes(fork_session()))
    assert ids(tree.roots) == ["u1"]
    assert ids(tree.get("a1").children) == ["u3", "u2"]  # by timestamp
    assert tree.leaf.id == "a2"  # the last line, whatever the timestamps
    assert ids(tree.active_path()) == ["u1", "a1", "u2", "a2"]
    assert tree.common_ancestor(tree.get("a2"), tree.get("a3")).id == "a1"
    assert ids(tree.leaves()) == ["a3", "a2"]


@pytest.mark.parametrize(
    ("timestamps", "order"),
    [
        (["2026-01-01T00:00:02Z", "2026-01-01T00:00:01Z"], ["c2", "c1"]),
        (["2026-01-01T00:00:01Z", "2026-01-01T00:00:01Z"], ["c1", "c2"]),  # ties: file order
        (["garbage", "2026-01-01T00:00:01Z"], ["c2", "c1"]),  # invalid timestamps sort last
        ([1000, 500], ["c2", "c1"]),  # numbers are milliseconds, as JavaScript reads them
    ],
)
def test_children_sorted_by_timestamp(timestamps: list, order: list[str]) -> None:
    entries = [
        user("p", None),
        {**user("c1", "p"), "timestamp": timestamps[0]},
        {**user("c2", "p"), "timestamp": timestamps[1]},
    ]
    tree = load_bytes(to_bytes(entries))
    assert ids(tree.get("p").children) == order


def test_orphan_adopted_when_parent_comes_later() -> None:
    tree = load_bytes(to_bytes([user("kid", "late"), user("late", None)]))
    assert ids(tree.roots) == ["late"] and ids(tree.get("late").children) == ["kid"]
    assert not tree.problems


@pytest.mark.parametrize(
    ("entries", "roots", "problem"),
    [
        ([user("a", "a")], ["a"], "own parent"),
        ([user("a", "missing")], ["a"], "not in the file"),
        ([user("a", "b"), user("b", "a")], ["a"], "cycle"),
        ([user("a", "c"), user("b", "a"), user("c", "b")], ["a"], "cycle"),
        ([user("r", None), user("a", "c"), user("b", "a"), user("c", "b"), user("t", "c")], ["r", "a"], "cycle"),
    ],
)
def test_roots_orphans_cycles(entries: list[dict], roots: list[str], problem: str) -> None:
    tree = load_bytes(to_bytes(entries))
    assert ids(tree.roots) == roots
    assert any(problem in p.message for p in tree.problems)
    assert sum(1 for _ in tree.iter_tree()) == len(entries)  # everything reachable, nothing twice
    for node in tree.nodes:
        assert len(tree.branch(node)) <= len(entries)


def test_duplicate_id_later_line_wins() -> None:
    tree = load_bytes(to_bytes([user("r", None), user("d", "r", "old"), user("k", "d"), user("d", "r", "new")]))
    assert tree.get("d").text == "user: new"
    assert ids(tree.get("d").children) == ["k"]
    assert sum(1 for _ in tree.iter_tree()) == 3
    assert any("duplicate id d" in p.message and p.line == 5 for p in tree.problems)


def test_labels_and_name_replay_in_file_order() -> None:
    entries = [
        user("a", None),
        entry("label", "l1", "a", targetId="a", label="one"),
        entry("label", "l2", "l1", targetId="a", label="two"),
        entry("label", "l3", "l2", targetId="b", label="x"),
        entry("label", "l4", "l3", targetId="b"),
        entry("session_info", "s1", "l4", name="  First  "),
    ]
    tree = load_bytes(to_bytes(entries))
    assert tree.labels == {"a": "two"} and tree.name == "First"
    tree2 = load_bytes(to_bytes([*entries, entry("session_info", "s2", "s1", name="")]))
    assert tree2.name is None  # Pi's getSessionName: the latest session_info decides


def test_incremental_feed_matches_full_load() -> None:
    data = to_bytes(fork_session())
    full = load_bytes(data)
    b = SessionBuilder()
    cut = data.index(b"\n", len(data) // 2) + 1
    b.feed(data[:cut], final=False)
    b.feed(data[cut:], final=False)
    assert ids(b.tree.active_path()) == ids(full.active_path()) and b.size == len(data)


def test_deep_chain_has_no_recursion() -> None:
    tree = load_bytes(to_bytes(chain(100_000)))
    assert len(tree.active_path()) == 100_000
    layout = build_layout(tree)
    assert len(layout.rows) == 100_000 and layout.rows[-1].end == 100_000


def render(tree, layout) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        layout.prefix(i) + ("• " if r.node in layout.active else "") + tree.row_text(r.node)
        for i, r in enumerate(layout.rows)
    ]


def test_pi_layout_of_a_fork() -> None:
    tree = load_bytes(to_bytes(fork_session()))
    assert render(tree, build_layout(tree)) == [
        "• user: start",
        "• assistant: first",
        "├⊟ • user: main way",  # the active branch is listed first
        "│     • assistant: main answer",
        "└⊟ user: other way",
        "      assistant: other answer",
    ]


def test_multiple_roots_and_tool_rows() -> None:
    entries = [
        user("r1", None, "one"),
        assistant(
            "c1", "r1", "", calls=[("t1", "read", {"path": "/x/a.py", "offset": 10, "limit": 5})], stop="toolUse"
        ),
        tool_result("tr", "c1", "t1"),
        user("r2", None, "two"),
    ]
    tree = load_bytes(to_bytes(entries))
    rows = render(tree, build_layout(tree))
    # Several roots hang under a virtual root: no connectors at the top, the active root first; the call-only
    # assistant turn is hidden and its tool result shows the call.
    assert rows == ["• user: two", "user: one", "   [read: /x/a.py:10-14]"]


@pytest.mark.parametrize(
    ("mode", "visible"),
    [
        ("default", ["u", "a", "tr", "c"]),  # Pi 1.6 hides session_info here, as Pi 0.73 did
        ("no-tools", ["u", "a", "c"]),
        ("user-only", ["u"]),
        ("labeled-only", ["a"]),
        ("all", ["u", "a", "tr", "m", "th", "l", "cu", "s", "c"]),
    ],
)
def test_filters(mode: str, visible: list[str]) -> None:
    entries = [
        user("u", None),
        assistant("a", "u", "text", calls=[("t", "bash", {"command": "ls"})]),
        tool_result("tr", "a", "t", "bash"),
        entry("model_change", "m", "tr", provider="p", modelId="x"),
        entry("thinking_level_change", "th", "m", thinkingLevel="high"),
        entry("label", "l", "th", targetId="a", label="here"),
        entry("custom", "cu", "l", customType="ext"),
        entry("session_info", "s", "cu", name="n"),
        entry("compaction", "c", "s", summary="sum", firstKeptEntryId="a", tokensBefore=1500),
    ]
    tree = load_bytes(to_bytes(entries))
    assert ids(r.node for r in build_layout(tree, mode).rows) == visible
    assert mode in FILTERS


def test_filtered_entries_hang_under_nearest_visible_ancestor() -> None:
    entries = [user("u1", None), assistant("a1", "u1"), user("u2", "a1"), assistant("a2", "u2"), user("u3", "a1")]
    tree = load_bytes(to_bytes(entries))
    layout = build_layout(tree, "user-only")
    rows = {r.node.id: r for r in layout.rows}
    assert layout.rows[rows["u2"].parent_row].node.id == "u1"
    assert layout.rows[0].nchildren == 2


def test_search_is_and_of_lowercase_tokens() -> None:
    entries = [user("u1", None, "Fix the PARSER bug"), user("u2", "u1", "parser only"), user("u3", "u2", "bug only")]
    tree = load_bytes(to_bytes(entries))
    assert ids(r.node for r in build_layout(tree, "default", "parser BUG").rows) == ["u1"]
    assert ids(r.node for r in build_layout(tree, "default", "  ").rows) == ["u1", "u2", "u3"]


def test_folding_skips_subtrees_and_foldable_rule() -> None:
    tree = load_bytes(to_bytes(fork_session()))
    layout = build_layout(tree)
    by = {r.node.id: i for i, r in enumerate(layout.rows)}
    assert layout.foldable(by["u1"]) and layout.foldable(by["u2"]) and not layout.foldable(by["a1"])
    assert not layout.foldable(by["a2"])
    shown = visible_indices(layout, {"u2"})
    assert [layout.rows[i].node.id for i in shown] == ["u1", "a1", "u2", "u3", "a3"]
    assert [layout.rows[i].node.id for i in visible_indices(layout, {"u1"})] == ["u1"]
    assert layout.prefix(by["u2"], folded=True).startswith("├⊞")
