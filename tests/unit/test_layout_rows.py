"""`RowTable`'s compact columns: indents that outgrow two bytes, rows with more than 255 shown children."""

from __future__ import annotations

from pitree.session.layout import build_layout, visible_indices
from pitree.session.layout_rows import Row, RowTable
from pitree.session.load import load_bytes

from tests.sessions import to_bytes, user


def test_a_row_with_more_than_255_children_counts_them_all() -> None:
    root = user("r", None, "root", t=0)
    kids = [user(f"k{i:03}", "r", f"kid {i}", t=i + 1) for i in range(300)]
    grandkids = [user("g1", "k000", "a", t=400), user("g2", "k000", "b", t=401)]
    tree = load_bytes(to_bytes([root, *kids, *grandkids]))
    layout = build_layout(tree, "all")
    rows = layout.rows
    assert rows.nchildren[0] == 255 and rows[0].nchildren == 300 and rows.children_of(0) == 300
    assert layout.foldable(0)
    by_id = {rows.node(i).id: i for i in range(len(rows))}
    assert rows[by_id["k000"]].nchildren == 2 and rows[by_id["k001"]].nchildren == 0
    assert list(visible_indices(layout, {"r"})) == [0]
    assert len(visible_indices(layout, {"k000"})) == len(rows) - 2


def test_indents_past_two_bytes_widen_the_column() -> None:
    tree = load_bytes(to_bytes([user("a", None, "a", t=0), user("b", "a", "b", t=1)]))
    a, b = tree.nodes
    table = RowTable(tree.nodes)
    table.extend([(a, 3, True, False, -1, False, -1, 1, 2)])
    assert table.indent.typecode == "H"
    table.extend([(b, 70_000, False, True, -1, True, 0, 0, 2)])
    assert table.indent.typecode == "i"
    table.insert(1, [(b, 65_536 * 2, True, True, -1, False, 0, 0, 2)])
    assert [r.indent for r in table] == [3, 131_072, 70_000]
    assert table[0] == Row(a, 3, True, False, (), False, -1, 1, 2)
    assert table[2] == Row(b, 70_000, False, True, (), True, 0, 0, 2)
    assert table[1].connector and table[1].is_last and not table[1].vroot


def test_a_narrow_table_takes_wide_inserted_rows() -> None:
    tree = load_bytes(to_bytes([user("a", None, "a", t=0), user("b", "a", "b", t=1)]))
    a, b = tree.nodes
    table = RowTable(tree.nodes)
    table.extend([(a, 1, False, True, -1, False, -1, 0, 1)])
    table.insert(0, [(b, 100_000, False, True, -1, False, -1, 0, 1)])
    assert table.indent.typecode == "i" and [r.indent for r in table] == [100_000, 1]
    table.replace_node(1, b)
    assert table.node(1) is b and list(table.iter_nodes()) == [b, b]
