"""Extending a layout in place when entries are appended to the leaf in a chain, as Pi writes them."""

from __future__ import annotations

from collections.abc import Sequence

from pitree.session.entries import ALWAYS_HIDDEN, HIDDEN_TOOL_ONLY, Node
from pitree.session.layout import Layout, passes_filter
from pitree.session.layout_rows import CONNECTOR, IS_LAST, VROOT
from pitree.session.tree import SessionTree


def extend_layout(layout: Layout, tree: SessionTree, added: Sequence[Node]) -> bool:
    """Update `layout` in place for entries that just extended the leaf in a chain (how Pi writes); False when
    the change is anything else, and the caller must `build_layout` again. After False the layout may have
    been changed in part (the checks that decline run as the rows are placed): it must not be used again.

    New rows go right after the old leaf's row, in its run (or, when the old leaf was a tool-call-only assistant
    turn that only the leaf shows, one takes that row's place); a batch of k entries moves the rows after them
    down by k, a few integers a run, instead of rebuilding the layout.
    """
    if not added or layout.query or layout.leaf is None or tree.leaf is not added[-1]:
        return False
    if tree.dropped_count != layout.dropped:
        return False  # a duplicate id replaced an entry: it may have had a row
    prev = layout.leaf
    for node in added:
        if node.parent is not prev or prev._kids is not node or tree.is_dropped(node):
            return False
        if layout.mode == "labeled-only" and node.type == "label":
            return False
        prev = node
    if added[-1].children:
        return False
    table = layout.rows
    mode = layout.mode
    pending: list[Node] = []  # new rows, a chain, to go in right after row `anchor`, in its run
    anchor: int | None = None
    cont: tuple[int, int] | None = None  # the run's (indent, gutters) for its rows after the head, when new
    for node in added:
        old_leaf = layout.leaf
        assert old_leaf is not None
        layout.active.add(node)
        layout.leaf = node
        visible = not node.flags & ALWAYS_HIDDEN
        if visible and mode != "all":
            visible = passes_filter(tree, node, mode) if mode != "labeled-only" else node.id in tree.labels
        in_pending = bool(pending) and pending[-1] is old_leaf
        old_row = None if in_pending else layout.row_of(old_leaf)
        if old_leaf.flags & HIDDEN_TOOL_ONLY and (in_pending or old_row is not None):
            # The old leaf was shown only because it was the leaf: the new entry, which hangs where it hung,
            # takes exactly its place and shape.
            if not visible:
                return False
            if in_pending:
                pending[-1] = node
            else:
                assert old_row is not None
                table.replace_node(old_row, node)  # a new version of the rows: their finder is made again
            continue
        if not visible:
            continue  # no row: it shows through its nearest shown ancestor, as the leaf does under a filter
        if not pending:
            anchor = old_row
            walk: Node | None = old_leaf
            while anchor is None and walk is not None:
                walk = walk.parent
                anchor = layout.row_of(walk) if walk is not None else None
            if anchor is None:
                return False  # no shown ancestor: the entry would be a new root
            indent, bits, link, _, nchildren, _ = table.fields(anchor)
            if nchildren:
                return False  # the anchor gets a second shown child: its children's shapes change
            if anchor == table.start[table.run_of(anchor)]:  # a run of one row: the new rows set its shape
                connector = bits & CONNECTOR
                if connector and not bits & VROOT:
                    link = table.chain.push(link, max(0, layout.levels_of(indent) - 1), not bits & IS_LAST)
                cont = (indent + 1 if connector and indent > 0 else indent, link)
        pending.append(node)
    if pending:
        assert anchor is not None
        table.extend_run(anchor, pending, cont)
    return True
