"""`RowTable` keeps a layout's rows as runs of a chain: the rows it gives must be those of Pi's row-by-row
indentation (kept here as the reference, as `build_layout` made them before runs), under every filter and search,
read in order, by index and through `stream_layout`; and a row with many children counts them all."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pitree.session import layout_find
from pitree.session.entries import Node
from pitree.session.layout import FILTERS, Layout, Shown, _shown_forest, build_layout, stream_layout, visible_indices
from pitree.session.layout_rows import GutterChain, Row
from pitree.session.load import load_bytes
from pitree.session.tree import SessionTree

from tests.sessions import to_bytes, user
from tests.unit.test_gen_session import gen


def reference_rows(roots: list[Node], shown: Shown) -> Iterator[Row]:
    """Pass 2 one row at a time, with each row's subtree end counted from the parents: the plain way."""
    multiple, made, chain, out = len(roots) > 1, 0, GutterChain(), []
    lstack = [
        (roots[i], int(multiple), multiple, multiple, i == len(roots) - 1, -1, multiple, -1)
        for i in range(len(roots) - 1, -1, -1)
    ]
    nodes, first, after = shown
    while lstack:
        node, indent, just_branched, show_conn, is_last, gutters, vroot, parent_row = lstack.pop()
        while True:
            my_row, made = made, made + 1
            kids = []
            kid = first[node.idx]
            while kid >= 0:
                kids.append(nodes[kid])
                kid = after[kid]
            kids.reverse()
            n = len(kids)
            out.append([node, indent, show_conn, is_last, gutters, vroot, parent_row, n])
            if not n:
                break
            child_indent = indent + 1 if n > 1 or (just_branched and indent > 0) else indent
            child_gutters = gutters
            if show_conn and not vroot:
                display = max(0, indent - 1) if multiple else indent
                child_gutters = chain.push(gutters, max(0, display - 1), not is_last)
            if n == 1:
                node, indent, just_branched, show_conn, is_last = kids[0], child_indent, False, False, True
                gutters, vroot, parent_row = child_gutters, False, my_row
                continue
            for j in range(n - 1, -1, -1):
                lstack.append((kids[j], child_indent, True, True, j == n - 1, child_gutters, False, my_row))
            break
    sizes = [1] * len(out)
    for i in range(len(out) - 1, -1, -1):
        if out[i][6] >= 0:
            sizes[out[i][6]] += sizes[i]
    for i, r in enumerate(out):
        node, indent, conn, last, g, vroot, parent, n = r
        yield Row(node, indent, conn, last, chain.tuple_of(g), vroot, parent, n, i + sizes[i])


def check(tree: SessionTree, mode: str, query: str = "") -> int:
    roots, shown, _, _ = _shown_forest(tree, mode, query, None)
    want = list(reference_rows(roots, shown))
    layout = build_layout(tree, mode, query)
    rows = layout.rows
    assert list(rows) == want
    assert [rows[i] for i in range(len(rows))] == want
    assert [rows.node(i) for i in range(len(rows))] == [r.node for r in want] == list(rows.iter_nodes())
    stream = stream_layout(tree, mode, query)
    assert [Row._make(r)._replace(end=0, gutters=stream.chain.tuple_of(r[4])) for r in stream.rows] == [
        r._replace(end=0) for r in want
    ]
    for i, r in enumerate(want):
        assert rows.children_of(i) == r.nchildren and rows.end_of(i) == r.end and rows.parent_of(i) == r.parent_row
        assert rows.indent_of(i) == r.indent
    check_finder(tree, layout)
    return len(want)


def check_finder(tree: SessionTree, layout: Layout) -> None:
    """Every entry's row as `row_of` finds it is the row that holds it, or None when none does."""
    holder = {layout.rows.idx[i]: i for i in range(len(layout.rows))}
    assert [layout.row_of(n) for n in tree.nodes] == [holder.get(n.idx) for n in tree.nodes]
    flags = bytearray(len(tree.nodes) - 3)  # shorter than the tree: the entries past it match nothing
    flags[::7] = b"\1" * len(flags[::7])
    assert list(layout.rows_holding(flags)) == sorted(r for k, r in holder.items() if k < len(flags) and flags[k])


@pytest.fixture(scope="module")
def branchy() -> SessionTree:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        gen.generate(path, 6_000, seed=11, branches=60)
        return load_bytes(path.read_bytes())


@pytest.mark.parametrize("mode", FILTERS)
def test_runs_give_the_reference_rows(branchy: SessionTree, mode: str) -> None:
    assert check(branchy, mode) > (0 if mode in ("labeled-only", "user-only") else 1000)


@pytest.mark.parametrize("query", ["user", "read src", "zz-no-such"])
def test_runs_give_the_reference_rows_of_a_search(branchy: SessionTree, query: str) -> None:
    check(branchy, "default", query)
    check(branchy, "all", query)


def forest(n_roots: int, width: int) -> list[dict]:
    out = []
    for r in range(n_roots):
        out.append(user(f"r{r}", None, f"root {r}", t=r))
        for k in range(width):
            out.append(user(f"r{r}k{k}", f"r{r}", f"kid {k}", t=100 + k))
            out.append(user(f"r{r}k{k}g", f"r{r}k{k}", "grandkid", t=1000 + k))
    return out


@pytest.mark.parametrize("n_roots, width", [(1, 1), (1, 3), (3, 1), (4, 5)])
def test_runs_of_forests(n_roots: int, width: int) -> None:
    check(load_bytes(to_bytes(forest(n_roots, width))), "all")


def test_a_row_with_hundreds_of_children_counts_them_all() -> None:
    root = user("r", None, "root", t=0)
    kids = [user(f"k{i:03}", "r", f"kid {i}", t=i + 1) for i in range(300)]
    grandkids = [user("g1", "k000", "a", t=400), user("g2", "k000", "b", t=401)]
    tree = load_bytes(to_bytes([root, *kids, *grandkids]))
    assert check(tree, "all") == 303
    layout = build_layout(tree, "all")
    rows = layout.rows
    assert rows[0].nchildren == 300 and layout.foldable(0)
    by_id = {rows.node(i).id: i for i in range(len(rows))}
    assert rows[by_id["k000"]].nchildren == 2 and rows[by_id["k001"]].nchildren == 0
    assert list(visible_indices(layout, {"r"})) == [0]
    assert len(visible_indices(layout, {"k000"})) == len(rows) - 2
    assert rows[-1] == rows[len(rows) - 1]
    with pytest.raises(IndexError):
        rows[len(rows)]


def test_a_long_chain_is_one_run() -> None:
    entries = [user("e0", None, "first", t=0)] + [user(f"e{i}", f"e{i - 1}", f"m {i}", t=i) for i in range(1, 5000)]
    tree = load_bytes(to_bytes(entries))
    layout = build_layout(tree, "all")
    assert len(layout.rows) == 5000 and len(layout.rows.start) == 1
    assert check(tree, "all") == 5000


@pytest.mark.parametrize("mode", ["default", "all", "user-only"])
def test_a_finder_that_walks_too_far_keeps_pairs(
    branchy: SessionTree, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(layout_find, "WALK_MAX", 3)
    monkeypatch.setattr(layout_find, "MARK_EVERY", 5)
    layout = build_layout(branchy, mode)
    check_finder(branchy, layout)
    assert layout.finder().marks is None  # some walk went past 3 entries: sorted pairs since


def test_marks_and_pairs(branchy: SessionTree) -> None:
    assert build_layout(branchy, "all").finder().marks is not None
    assert build_layout(branchy, "user-only").finder().marks is None


def test_a_finder_made_for_the_rows_before_a_change_is_not_believed() -> None:
    """A worker may store a finder it made just before the UI thread extended the rows: `Layout.finder` makes
    another (the rows' version moved on), and a stale finder answers None rather than another entry's row."""
    from pitree.session.layout_extend import extend_layout
    from pitree.session.load import SessionBuilder

    from tests.sessions import assistant

    lines = to_bytes(
        [user("u1", None, t=1), assistant("a1", "u1", t=2), user("u2", "a1", t=3), assistant("a2", "u2", t=4)]
        + [user("u3", "a1", t=5), assistant("a3", "u3", t=6), user("u4", "a3", t=7)]
    ).splitlines(keepends=True)
    builder = SessionBuilder()
    builder.feed(b"".join(lines[:-1]), final=False)
    tree = builder.tree
    layout = build_layout(tree, "all")
    assert [n.id for n in layout.rows.iter_nodes()] == ["u1", "a1", "u3", "a3", "u2", "a2"]
    stale = layout.finder()
    assert layout.holder_row(tree.get("u2")) == 4  # type: ignore[arg-type]
    assert extend_layout(layout, tree, builder.feed(lines[-1], final=False))
    assert layout.holder_row(tree.get("u2")) == 5  # type: ignore[arg-type]  # kept only while the rows stay
    assert [n.id for n in layout.rows.iter_nodes()] == ["u1", "a1", "u3", "a3", "u4", "u2", "a2"]
    layout._where = stale  # stored after the change
    check_finder(tree, layout)
    assert layout.finder() is not stale
    for node in tree.nodes:
        row = stale.row_of(node)
        assert row is None or layout.rows.idx[row] == node.idx
    assert stale.row_of(tree.get("u2")) is None  # its mark says row 4, which now holds u4


def reference_nearest(layout: Layout, shown: list[int], node: Node | None) -> int:
    """Pi's findNearestVisibleIndex the plain way: walk up the entries until one has a shown row."""
    while node is not None:
        row = layout.row_of(node)
        if row is not None and row in shown:
            return shown.index(row)
        node = node.parent
    return max(0, len(shown) - 1)


@pytest.mark.parametrize("mode", FILTERS)
def test_the_nearest_shown_row_is_the_plain_walks_under_folds(branchy: SessionTree, mode: str) -> None:
    """`nearest_shown` finds an entry's row (or its nearest ancestor's) with one search among the shown rows;
    it must agree with walking up the entries for every entry, with nothing, the root, and many rows folded."""
    import random

    from pitree.session.layout import nearest_shown

    layout = build_layout(branchy, mode)
    foldable = [layout.rows.node(r).id for r in range(len(layout.rows)) if layout.rows.children_of(r)]
    rng = random.Random(5)
    for folded in (set(), set(foldable[:1]), set(rng.sample(foldable, min(40, len(foldable))))):
        shown = list(visible_indices(layout, folded))
        for node in branchy.nodes[::7]:
            assert nearest_shown(layout, shown, node) == reference_nearest(layout, shown, node), node.id
        leaf = branchy.leaf
        assert nearest_shown(layout, shown, leaf) == reference_nearest(layout, shown, leaf)
    assert nearest_shown(layout, [], None) == 0
