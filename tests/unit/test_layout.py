"""Pi's /tree layout: indents, connectors, gutters, active branch first, filters, search, re-parenting,
folding.

The expected pictures were checked against Pi's own TreeSelectorComponent (tests/pi runs that comparison
on generated sessions too).
"""

from __future__ import annotations

from typing import Any

import pytest
from pitree.session.layout import FILTERS, Layout, build_layout, passes_filter, tokens_of, visible_indices
from pitree.session.load import load_bytes
from pitree.session.tree import SessionTree

from tests.sessions import assistant, chain, entry, fork_session, to_bytes, tool_result, user


def tree_of(entries: list[dict[str, Any]]) -> SessionTree:
    return load_bytes(to_bytes(entries))


def picture(tree: SessionTree, layout: Layout, folded: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """Pi's row: gutter/connector prefix, `• ` on the active path, `[label] `, the entry text."""
    out = []
    for i in visible_indices(layout, set(folded)):
        row = layout.rows[i]
        dot = "• " if row.node in layout.active else ""
        label = tree.labels.get(row.node.id)
        out.append(
            layout.prefix(i, row.node.id in folded) + dot + (f"[{label}] " if label else "") + tree.row_text(row.node)
        )
    return out


def test_single_child_chain_stays_flat() -> None:
    tree = tree_of(chain(4))
    assert picture(tree, build_layout(tree)) == [
        "• user: u0",
        "• assistant: a1",
        "• user: u2",
        "• assistant: a3",
    ]
    assert [r.indent for r in build_layout(tree).rows] == [0, 0, 0, 0]


def test_fork_active_branch_first_with_connectors_and_gutters() -> None:
    tree = tree_of(fork_session())
    assert picture(tree, build_layout(tree)) == [
        "• user: start",
        "• assistant: first",
        "├⊟ • user: main way",
        "│     • assistant: main answer",
        "└⊟ user: other way",
        "      assistant: other answer",
    ]


def test_the_branch_holding_the_leaf_goes_first() -> None:
    tree = tree_of(fork_session())
    layout = build_layout(tree, leaf=tree.get("a3"))
    assert picture(tree, layout) == [
        "• user: start",
        "• assistant: first",
        "├⊟ • user: other way",
        "│     • assistant: other answer",
        "└⊟ user: main way",
        "      assistant: main answer",
    ]


def nested() -> list[dict[str, Any]]:
    # r -> a -> {b -> {c, d -> e}, f}; the leaf e is in the first fork's first branch's second branch.
    return [
        user("r", None, "r", t=1),
        assistant("a", "r", "a", t=2),
        user("b", "a", "b", t=3),
        assistant("c", "b", "c", t=4),
        user("f", "a", "f", t=9),
        assistant("d", "b", "d", t=5),
        user("e", "d", "e", t=6),
    ]


def test_nested_forks_and_gutters() -> None:
    tree = tree_of(nested())
    assert picture(tree, build_layout(tree)) == [
        "• user: r",
        "• assistant: a",
        "├⊟ • user: b",
        "│  ├⊟ • assistant: d",
        "│  │     • user: e",
        "│  └─ assistant: c",
        "└─ user: f",
    ]


def test_several_roots_hang_under_a_virtual_root() -> None:
    tree = tree_of(
        [
            user("x", None, "x", t=1),
            assistant("y", "x", "y", t=2),
            user("p", None, "p", t=3),
            assistant("q", "p", "q", t=4),
            user("s", "q", "s", t=5),
        ]
    )
    layout = build_layout(tree)
    assert layout.multiple_roots
    assert picture(tree, layout) == [
        "• user: p",
        "   • assistant: q",
        "   • user: s",
        "user: x",
        "   assistant: y",
    ]


def settings_session() -> list[dict[str, Any]]:
    return [
        user("u1", None, "hello", t=1),
        entry("model_change", "mc", "u1", provider="openai", modelId="gpt-5", t=2),
        entry("thinking_level_change", "tl", "mc", thinkingLevel="high", t=3),
        assistant("a1", "tl", "", calls=(("c1", "bash", {"command": "ls -la"}),), stop="toolUse", t=4),
        tool_result("r1", "a1", "c1", "bash", "files", t=5),
        assistant("a2", "r1", "done", t=6),
        entry("custom", "cu", "a2", customType="ext-state", data={"k": 1}, t=7),
        entry("label", "lb", "cu", targetId="u1", label="start", t=8),
        entry("session_info", "si", "lb", name="my session", t=9),
        entry("context_edit", "ce", "si", targetId="u1", replacement=None, t=9),
        entry("usage", "us", "ce", kind="cache_warm", provider="p", model="m", usage={"cacheRead": 5}, t=9),
        entry("custom_message", "cm", "us", customType="note", content="remember", display=True, t=10),
        user("u2", "cm", "bye", t=11),
    ]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (
            "default",
            [
                "[start] user: hello",
                "[bash: ls -la]",
                "assistant: done",
                "[note]: remember",
                "user: bye",
            ],
        ),
        (
            "no-tools",
            ["[start] user: hello", "assistant: done", "[note]: remember", "user: bye"],
        ),
        ("user-only", ["[start] user: hello", "user: bye"]),
        ("labeled-only", ["[start] user: hello"]),
        (
            "all",
            [
                "[start] user: hello",
                "[model: gpt-5]",
                "[thinking: high]",
                "[bash: ls -la]",
                "assistant: done",
                "[custom: ext-state]",
                "[label: start]",
                "[title: my session]",
                "[context omit: u1]",
                "[note]: remember",
                "user: bye",
            ],
        ),
    ],
)
def test_each_filter(mode: str, expected: list[str]) -> None:
    tree = tree_of(settings_session())
    rows = [r.removeprefix("• ") for r in picture(tree, build_layout(tree, mode))]
    # Pi 1.6: the tool-call-only assistant a1 and the `usage` entry are hidden in every mode, even "all";
    # session_info and context_edit only show under "all" (and labeled-only, when labeled)
    assert rows == expected


def test_unknown_filter_is_an_error() -> None:
    tree = tree_of(chain(2))
    with pytest.raises(ValueError, match="unknown filter"):
        build_layout(tree, "everything")
    with pytest.raises(ValueError):
        passes_filter(tree, tree.nodes[0], "nope")
    assert FILTERS == ("default", "no-tools", "user-only", "labeled-only", "all")


@pytest.mark.parametrize(
    ("stop", "extra", "leaf", "shown"),
    [
        ("toolUse", {}, False, False),
        ("stop", {}, False, False),
        ("error", {"errorMessage": "boom"}, False, True),
        ("aborted", {}, False, True),
        ("length", {}, False, True),
        ("toolUse", {}, True, True),  # the leaf is always shown so the position is visible
    ],
)
def test_tool_call_only_assistant_visibility(stop: str, extra: dict[str, Any], leaf: bool, shown: bool) -> None:
    entries = [user("u", None), assistant("a", "u", "", calls=(("c", "ls", {}),), stop=stop, **extra)]
    if not leaf:
        entries.append(tool_result("r", "a", "c", "ls"))
    tree = tree_of(entries)
    visible = [r.node.id for r in build_layout(tree, "all").rows]
    assert ("a" in visible) is shown


def test_error_and_aborted_texts() -> None:
    tree = tree_of(
        [
            user("u", None),
            assistant("e", "u", "", stop="error", errorMessage="overloaded_error:\nHTTP 529"),
            assistant("b", "e", "", stop="aborted"),
            assistant("n", "b", "", stop="length"),
        ]
    )
    assert [tree.row_text(tree.get(i)) for i in "ebn"] == [
        "assistant: overloaded_error: HTTP 529",
        "assistant: (aborted)",
        "assistant: (no content)",
    ]


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ("", ["u1", "a1", "u2", "a2", "u3", "a3"]),
        ("main", ["u2", "a2"]),
        ("MAIN answer", ["a2"]),  # tokens are lower-cased and all must match
        ("answer   main", ["a2"]),  # in any order, any whitespace
        ("main other", []),
        ("user", ["u1", "u2", "u3"]),  # the role is searchable
        ("way", ["u2", "u3"]),
    ],
)
def test_search_tokens_and(query: str, ids: list[str]) -> None:
    tree = tree_of(fork_session())
    assert [r.node.id for r in build_layout(tree, "default", query).rows] == ids


def test_tokens_of() -> None:
    assert tokens_of("  Foo\tBAR  baz ") == ["foo", "bar", "baz"] and tokens_of("   ") == []


def test_search_results_hang_under_their_nearest_visible_ancestor() -> None:
    tree = tree_of(fork_session())
    layout = build_layout(tree, "default", "way")
    assert picture(tree, layout) == ["• user: main way", "user: other way"]
    assert layout.multiple_roots and [r.parent_row for r in layout.rows] == [-1, -1]


def test_filtered_rows_hang_under_their_nearest_visible_ancestor() -> None:
    tree = tree_of(fork_session())
    layout = build_layout(tree, "user-only")
    assert picture(tree, layout) == ["• user: start", "├─ • user: main way", "└─ user: other way"]
    assert [r.parent_row for r in layout.rows] == [-1, 0, 0]


def test_hidden_entries_do_not_break_single_child_chains() -> None:
    tree = tree_of(settings_session())
    layout = build_layout(tree, "default")
    assert {r.indent for r in layout.rows} == {0}
    assert all(layout.prefix(i) == "" for i in range(len(layout.rows)))


def test_fold_ranges_and_foldable() -> None:
    tree = tree_of(nested())
    layout = build_layout(tree)
    order = [r.node.id for r in layout.rows]
    assert order == ["r", "a", "b", "d", "e", "c", "f"]
    foldable = {r.node.id for i, r in enumerate(layout.rows) if layout.foldable(i)}
    assert foldable == {
        "r",
        "b",
        "d",
    }  # the root and branch starts with children; not "a" (single-child chain)
    assert [(r.node.id, r.end) for r in layout.rows] == [
        ("r", 7),
        ("a", 7),
        ("b", 6),
        ("d", 5),
        ("e", 5),
        ("c", 6),
        ("f", 7),
    ]
    assert [r.nchildren for r in layout.rows] == [1, 2, 2, 1, 0, 0, 0]


@pytest.mark.parametrize(
    ("folded", "shown"),
    [
        (set(), ["r", "a", "b", "d", "e", "c", "f"]),
        ({"b"}, ["r", "a", "b", "f"]),
        ({"d"}, ["r", "a", "b", "d", "c", "f"]),
        ({"r"}, ["r"]),
        ({"b", "d"}, ["r", "a", "b", "f"]),
        ({"e", "f"}, ["r", "a", "b", "d", "e", "c", "f"]),  # rows without children do not fold
    ],
)
def test_visible_indices_skip_folded_subtrees(folded: set[str], shown: list[str]) -> None:
    tree = tree_of(nested())
    layout = build_layout(tree)
    assert [layout.rows[i].node.id for i in visible_indices(layout, folded)] == shown


def test_folded_rows_show_the_plus_box() -> None:
    tree = tree_of(nested())
    layout = build_layout(tree)
    assert picture(tree, layout, {"b"})[2] == "├⊞ • user: b"


def test_index_of_and_leaf() -> None:
    tree = tree_of(fork_session())
    layout = build_layout(tree)
    assert layout.index_of("u3") == 4 and layout.index_of("nope") is None
    assert layout.leaf is tree.get("a2") and layout.mode == "default" and layout.query == ""


def test_labeled_only_uses_current_labels() -> None:
    entries = [
        *fork_session(),
        entry("label", "l1", "a2", targetId="u3", label="x", t=20),
        entry("label", "l2", "l1", targetId="u3", label="", t=21),
        entry("label", "l3", "l2", targetId="a1", label="keep", t=22),
    ]
    tree = tree_of(entries)
    assert [r.node.id for r in build_layout(tree, "labeled-only").rows] == ["a1"]


def test_pace_is_called_through_a_big_build_and_changes_nothing() -> None:
    """A background build calls `pace()` every few thousand entries (the explorer waits there while keys are
    pressed); the rows are the same as without it, and so is the search index built with it."""
    import tempfile
    from pathlib import Path

    from tests.unit.test_gen_session import gen

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        gen.generate(path, 40_000, seed=3, branches=20)
        tree = load_bytes(path.read_bytes())
    calls: list[int] = []
    for mode in FILTERS:
        plain, paced = build_layout(tree, mode), build_layout(tree, mode, pace=lambda: calls.append(1))
        assert [tuple(row) for row in plain.rows] == [tuple(row) for row in paced.rows]
        rows = list(paced.rows)
        sizes = [1] * len(rows)  # each row's subtree, the plain way: ends are row + size
        for i in range(len(rows) - 1, -1, -1):
            if rows[i].parent_row >= 0:
                sizes[rows[i].parent_row] += sizes[i]
        assert [r.end for r in rows] == [i + size for i, size in enumerate(sizes)]
    # pass 1 twice a filter (40,000 entries), pass 2 twice for each filter with over 32,768 rows
    assert len(calls) >= 2 * len(FILTERS) + 2 * sum(len(build_layout(tree, m).rows) > 32_768 for m in FILTERS)
    blocks: list[int] = []
    index = tree.search_index
    index.update(pace=lambda: blocks.append(1))
    assert len(blocks) == len(tree.nodes) // 2048 and len(index.matching(["user"])) > 0
