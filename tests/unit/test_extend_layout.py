"""`extend_layout` (the live-tail fast path) gives exactly the rows `build_layout` would, or declines."""

from __future__ import annotations

from pathlib import Path

import pytest
from pitree.session.layout import FILTERS, Layout, build_layout
from pitree.session.layout_extend import extend_layout
from pitree.session.load import SessionBuilder

from tests.conftest import DEMO
from tests.unit.test_gen_session import gen


def shape(layout: Layout) -> list[tuple]:
    return [
        (r.node.id, r.indent, r.connector, r.is_last, r.gutters, r.vroot, r.parent_row, r.end, r.nchildren)
        for r in layout.rows
    ]


def replay(data: bytes, mode: str, start: int, batch: int = 1) -> tuple[int, int]:
    """Feed `data` after the first `start` lines, `batch` lines at a time (1, or a varying 1..batch); every
    extension must equal a rebuild."""
    lines = data.splitlines(keepends=True)
    builder = SessionBuilder()
    builder.feed(b"".join(lines[:start]), final=False)
    tree = builder.tree
    layout = build_layout(tree, mode)
    extended = rebuilt = 0
    chunks, i, n = [], start, 0
    while i < len(lines):
        size = 1 if batch == 1 else 1 + n % batch
        chunks.append(b"".join(lines[i : i + size]))
        i, n = i + size, n + 1
    for line in chunks:
        added = builder.feed(line, final=False)
        fresh = build_layout(tree, mode)
        if extend_layout(layout, tree, added):
            extended += 1
            assert shape(layout) == shape(fresh), (mode, line[:80])
            assert layout.active == fresh.active and layout.leaf is fresh.leaf
            assert layout.multiple_roots == fresh.multiple_roots
            assert [layout.index_of(r.node.id) for r in fresh.rows] == list(range(len(fresh.rows)))
            shown = {r.node.id for r in fresh.rows}
            assert all(layout.index_of(n.id) is None for n in tree.nodes if n.id not in shown)
        else:
            rebuilt += 1
            layout = fresh
    return extended, rebuilt


@pytest.mark.parametrize("mode", FILTERS)
def test_demo_appended_line_by_line(mode: str) -> None:
    extended, rebuilt = replay(DEMO.read_bytes(), mode, start=2)
    assert extended > rebuilt  # the fast path is the common one


@pytest.mark.parametrize("mode", FILTERS)
@pytest.mark.parametrize("batch", [3, 7])
def test_demo_appended_in_bursts(mode: str, batch: int) -> None:
    extended, rebuilt = replay(DEMO.read_bytes(), mode, start=2, batch=batch)
    assert extended > 0


@pytest.mark.parametrize("mode", ["default", "no-tools", "all"])
@pytest.mark.parametrize("seed", [1, 2])
def test_generated_sessions_appended_line_by_line(tmp_path: Path, mode: str, seed: int) -> None:
    path = tmp_path / "g.jsonl"
    gen.generate(path, 600, seed=seed)
    for batch in (1, 5):
        extended, rebuilt = replay(path.read_bytes(), mode, start=50, batch=batch)
        assert extended > 0


def test_declines_what_is_not_a_chain_at_the_leaf() -> None:
    from tests.sessions import assistant, to_bytes, user

    builder = SessionBuilder()
    builder.feed(to_bytes([user("u1", None, t=1), assistant("a1", "u1", t=2)]))
    tree = builder.tree
    layout = build_layout(tree)
    # A new branch from u1 (not under the leaf).
    added = builder.feed(to_bytes([user("u2", "u1", t=3)], with_header=False))
    assert not extend_layout(layout, tree, added)
    layout = build_layout(tree)
    # A duplicate id of an entry that has a row.
    added = builder.feed(to_bytes([user("a1", "u2", t=4)], with_header=False))
    assert not extend_layout(layout, tree, added)
