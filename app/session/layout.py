"""The flat row list Pi's `/tree` draws: filters, nearest-visible-ancestor re-parenting, indents, connectors.

A port of Pi's TreeList.flattenTree / applyFilter / recalculateVisualStructure, computed in two
iterative passes over the tree. Each row also knows where its subtree ends (`end`), so folding is
skipping a range, and whether it is foldable, so views never recompute the layout on a fold.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .entries import HIDDEN_TOOL_ONLY, SETTINGS_TYPES, Node
from .gcpause import gc_paused
from .tree import SessionTree

FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")
REBUILD_AFTER = 256  # rows inserted by extend_layout before index_of rebuilds its map


class Row:
    """One visible line of the tree."""

    __slots__ = ("node", "indent", "connector", "is_last", "gutters", "vroot", "end", "parent_row", "nchildren")

    def __init__(
        self,
        node: Node,
        indent: int,
        connector: bool,
        is_last: bool,
        gutters: tuple[tuple[int, bool], ...],
        vroot: bool,
        parent_row: int,
    ) -> None:
        self.node = node
        self.indent = indent
        self.connector = connector
        self.is_last = is_last
        self.gutters = gutters
        self.vroot = vroot
        self.parent_row = parent_row  # index of the nearest visible ancestor's row, -1 for a root
        self.end = 0  # index after the last row of this row's subtree
        self.nchildren = 0  # visible children


@dataclass
class Layout:
    rows: list[Row]
    multiple_roots: bool
    leaf: Node | None
    active: set[int]  # id() of nodes on the active path
    mode: str
    query: str

    def index_of(self, entry_id: str) -> int | None:
        """The row of an entry, or None when the filter hides it (a dict built once per layout).

        `extend_layout` inserts rows without rebuilding the dict: it notes where (`_inserts`, in the order made,
        each in the coordinates of its time) and holds the new rows in `_recent`; a lookup shifts an older
        index past each insertion point at or before it. Past `REBUILD_AFTER` insertions the dict is rebuilt."""
        d = self.__dict__
        rows_by_id = d.get("_rows_by_id")
        if rows_by_id is None or len(d.get("_inserts", ())) > REBUILD_AFTER:
            rows_by_id = d["_rows_by_id"] = {row.node.id: i for i, row in enumerate(self.rows)}
            d["_inserts"], d["_recent"], d["_gone"] = [], {}, set()
            return rows_by_id.get(entry_id)
        recent = d["_recent"]
        if entry_id in recent:
            return recent[entry_id]  # type: ignore[no-any-return]
        if entry_id in d["_gone"]:
            return None
        index = rows_by_id.get(entry_id)
        if index is not None:
            for at in d["_inserts"]:
                if index >= at:
                    index += 1
        return index

    def _noted(self, at: int, new_id: str, inserted: bool, gone: str | None = None) -> None:
        """Keep `index_of` right after `extend_layout` put `new_id` at row `at` (inserted, or replacing `gone`)."""
        d = self.__dict__
        if d.get("_rows_by_id") is None:
            return  # nothing to keep: built on first use
        recent = d["_recent"]
        if inserted:
            d["_inserts"].append(at)
            for key, value in recent.items():
                if value >= at:
                    recent[key] = value + 1
        if gone is not None:
            recent.pop(gone, None)
            d["_gone"].add(gone)
        d["_gone"].discard(new_id)
        recent[new_id] = at

    def foldable(self, i: int) -> bool:
        """Pi's isFoldable: has visible children and is a root or the start of a branch segment."""
        row = self.rows[i]
        if row.nchildren == 0:
            return False
        if row.parent_row < 0:
            return True
        return self.rows[row.parent_row].nchildren > 1

    def prefix(self, i: int, folded: bool = False) -> str:
        """Pi's tree gutter for row i: `│`, `├─`, `└─`, with `⊟`/`⊞` on foldable branch starts."""
        row = self.rows[i]
        display_indent = max(0, row.indent - 1) if self.multiple_roots else row.indent
        if display_indent == 0:
            return ""
        has_connector = row.connector and not row.vroot
        connector_pos = display_indent - 1 if has_connector else -1
        gutters: dict[int, bool] = {}
        for pos, show in row.gutters:
            gutters.setdefault(pos, show)  # Pi takes the first gutter at a level
        out: list[str] = []
        for level in range(display_indent):
            if level in gutters:
                out.append("│  " if gutters[level] else "   ")
            elif level == connector_pos:
                mid = "⊞" if folded else ("⊟" if self.foldable(i) else "─")
                out.append(("└" if row.is_last else "├") + mid + " ")
            else:
                out.append("   ")
        return "".join(out)


def tokens_of(query: str) -> list[str]:
    """Pi's search: lower-case, whitespace-separated tokens, all must be substrings."""
    return query.lower().split()


def passes_filter(tree: SessionTree, node: Node, mode: str) -> bool:
    if mode == "default":
        return node.type not in SETTINGS_TYPES
    if mode == "no-tools":
        return node.type not in SETTINGS_TYPES and not (node.type == "message" and node.role == "toolResult")
    if mode == "user-only":
        return node.type == "message" and node.role == "user"
    if mode == "labeled-only":
        return node.id in tree.labels
    if mode == "all":
        return True
    raise ValueError(f"unknown filter {mode!r} (choose from {', '.join(FILTERS)})")


def build_layout(tree: SessionTree, mode: str = "default", query: str = "", leaf: Node | None = None) -> Layout:
    """The rows of the tree under a filter and search, in Pi's display order (active branch first)."""
    with gc_paused():
        roots, shown, active, leaf = _shown_forest(tree, mode, query, leaf)
        rows = list(_rows_of(roots, shown))
        # Subtree ends, for folding: rows are in pre-order, so a subtree is a contiguous range.
        sizes = [1] * len(rows)
        for i in range(len(rows) - 1, -1, -1):
            p = rows[i].parent_row
            if p >= 0:
                sizes[p] += sizes[i]
        for i, row in enumerate(rows):
            row.end = i + sizes[i]
        return Layout(rows, len(roots) > 1, leaf, active, mode, query)


@dataclass
class RowStream:
    """`build_layout`'s rows made one at a time and not kept (`end` stays 0): for output that is written as it
    goes (`pitree tree`), so a 100,000-row layout never exists whole. `rows` can be iterated once."""

    rows: Iterator[Row]
    leaf: Node | None
    active: set[int]  # id() of nodes on the active path
    mode: str
    query: str


def stream_layout(tree: SessionTree, mode: str = "default", query: str = "", leaf: Node | None = None) -> RowStream:
    """The rows of `build_layout(tree, mode, query, leaf)`, in the same order, each made when it is asked for."""
    with gc_paused():
        roots, shown, active, leaf = _shown_forest(tree, mode, query, leaf)
    return RowStream(_rows_of(roots, shown), leaf, active, mode, query)


Shown = dict[Node, "Node | list[Node]"]


def _shown_forest(
    tree: SessionTree, mode: str, query: str, leaf: Node | None
) -> tuple[list[Node], Shown, set[int], Node | None]:
    """Pass 1: the shown roots, each shown entry's shown children, the active path (ids) and the leaf."""
    if mode not in FILTERS:
        raise ValueError(f"unknown filter {mode!r} (choose from {', '.join(FILTERS)})")
    if leaf is None:
        leaf = tree.leaf
    active: set[int] = set()
    node = leaf
    while node is not None:
        active.add(id(node))
        node = node.parent
    tokens = tokens_of(query)
    leaf_id = id(leaf) if leaf is not None else None

    # Pass 1: pre-order over the whole tree, active branch first; keep visible nodes with their
    # nearest visible ancestor (which is where Pi hangs them after filtering). Most shown entries have one
    # shown child: that child is stored as itself, a list only once there is a second.
    vis_children: dict[Node, Node | list[Node]] = {}  # keyed by the entry itself (hashed by identity)
    roots: list[Node] = []
    ordered_roots = _active_first(tree.roots, active)
    stack: list[tuple[Node, Node | None]] = [(r, None) for r in reversed(ordered_roots)]
    labels = tree.labels
    default = mode == "default"
    pop, push = stack.pop, stack.append
    while stack:
        node, anc = pop()
        while True:  # down a single-child chain without the stack (most of a session is one)
            if node.flags & HIDDEN_TOOL_ONLY and id(node) != leaf_id:
                visible = False
            elif default:
                visible = node.type not in SETTINGS_TYPES
            elif mode == "all":
                visible = True
            else:
                visible = passes_filter(tree, node, mode) if mode != "labeled-only" else node.id in labels
            if visible and tokens:
                text = tree.search_text(node)
                visible = all(t in text for t in tokens)
            if visible:
                if anc is None:
                    roots.append(node)
                else:
                    had = vis_children.get(anc)
                    if had is None:
                        vis_children[anc] = node
                    elif isinstance(had, list):
                        had.append(node)
                    else:
                        vis_children[anc] = [had, node]
                anc = node
            children = node.children
            if not children:
                break
            if len(children) == 1:
                node = children[0]
                continue
            for child in reversed(_active_first(children, active)):
                push((child, anc))
            break

    return roots, vis_children, active, leaf


def _rows_of(roots: list[Node], vis_children: Shown) -> Iterator[Row]:
    """Pass 2: Pi's indentation over the shown forest, one row at a time in display order (each entry's shown
    children are taken out of `vis_children` as its row is made)."""
    multiple = len(roots) > 1
    made = 0  # rows made so far
    Frame = tuple[Node, int, bool, bool, bool, tuple[tuple[int, bool], ...], bool, int]
    lstack: list[Frame] = []
    for i in range(len(roots) - 1, -1, -1):
        lstack.append((roots[i], 1 if multiple else 0, multiple, multiple, i == len(roots) - 1, (), multiple, -1))
    visible_children = vis_children.pop
    while lstack:
        node, indent, just_branched, show_conn, is_last, gutters, vroot, parent_row = lstack.pop()
        while True:  # a single visible child continues here, without the stack
            my_row = made
            made += 1
            row = Row(node, indent, show_conn, is_last, gutters, vroot, parent_row)
            shown = visible_children(node, None)
            if shown is None:
                yield row
                break
            kids: Sequence[Node] = shown if isinstance(shown, list) else (shown,)
            n = len(kids)
            row.nchildren = n
            yield row
            multi = n > 1
            if multi or (just_branched and indent > 0):
                child_indent = indent + 1
            else:
                child_indent = indent
            if show_conn and not vroot:
                display_indent = max(0, indent - 1) if multiple else indent
                child_gutters = (*gutters, (max(0, display_indent - 1), not is_last))
            else:
                child_gutters = gutters
            if not multi:
                node, indent, just_branched, show_conn, is_last = kids[0], child_indent, False, False, True
                gutters, vroot, parent_row = child_gutters, False, my_row
                continue
            for j in range(n - 1, -1, -1):
                lstack.append((kids[j], child_indent, multi, multi, j == n - 1, child_gutters, False, my_row))
            break


def _active_first(nodes: Sequence[Node], active: set[int]) -> list[Node]:
    first = [n for n in nodes if id(n) in active]
    if not first:
        return list(nodes)
    return first + [n for n in nodes if id(n) not in active]


def visible_indices(layout: Layout, folded: set[str]) -> list[int]:
    """Row indices shown when the rows whose entry ids are in `folded` hide their subtrees."""
    rows = layout.rows
    if not folded:
        return list(range(len(rows)))
    out: list[int] = []
    i, n = 0, len(rows)
    while i < n:
        out.append(i)
        row = rows[i]
        if row.node.id in folded and row.nchildren:
            i = row.end
        else:
            i += 1
    return out


def extend_layout(layout: Layout, tree: SessionTree, added: Sequence[Node]) -> bool:
    """Update `layout` in place for entries that just extended the leaf in a chain (how Pi writes); False when
    the change is anything else, and the caller must `build_layout` again.

    New rows go right after the old leaf's row (or, when the old leaf was a tool-call-only assistant turn that
    only the leaf shows, one takes that row's place); a batch of k entries moves the rows after them down by
    k in one pass: O(rows) integer updates per batch instead of rebuilding every Row.
    """
    if not added or layout.query or layout.leaf is None or tree.leaf is not added[-1]:
        return False
    prev = layout.leaf
    for node in added:
        if node.parent is not prev or prev.children != [node] or tree.is_dropped(node):
            return False
        if layout.mode == "labeled-only" and node.type == "label":
            return False
        prev = node
    if added[-1].children:
        return False
    for node in added:
        if layout.index_of(node.id) is not None:  # a duplicate id replaced an entry that has a row
            return False
    rows = layout.rows
    mode = layout.mode
    pending: list[Row] = []  # new rows, a chain, to go in at `at`
    at = -1
    for node in added:
        old_leaf = layout.leaf
        assert old_leaf is not None
        layout.active.add(id(node))
        layout.leaf = node
        visible = True
        if mode != "all":
            visible = passes_filter(tree, node, mode) if mode != "labeled-only" else node.id in tree.labels
        in_pending = bool(pending) and pending[-1].node is old_leaf
        old_row = None if in_pending else layout.index_of(old_leaf.id)
        if old_leaf.flags & HIDDEN_TOOL_ONLY and (in_pending or old_row is not None):
            # The old leaf was shown only because it was the leaf: the new entry, which hangs where it hung,
            # takes exactly its place and shape.
            if not visible:
                return False
            old = pending[-1] if in_pending else rows[old_row]  # type: ignore[index]
            row = Row(node, old.indent, old.connector, old.is_last, old.gutters, old.vroot, old.parent_row)
            row.end = old.end
            if in_pending:
                pending[-1] = row
            else:
                rows[old_row] = row  # type: ignore[index]
                layout._noted(old_row, node.id, inserted=False, gone=old_leaf.id)  # type: ignore[arg-type]
            continue
        if not visible:
            continue  # no row: it shows through its nearest shown ancestor, as the leaf does under a filter
        if pending:
            a, a_index = pending[-1], at + len(pending) - 1
        else:
            anchor = old_row
            walk: Node | None = old_leaf
            while anchor is None and walk is not None:
                walk = walk.parent
                anchor = layout.index_of(walk.id) if walk is not None else None
            if anchor is None:
                return False  # no shown ancestor: the entry would be a new root
            a, a_index, at = rows[anchor], anchor, anchor + 1
            if a.nchildren:
                return False  # the anchor gets a second shown child: its children's shapes change
        indent = a.indent + 1 if a.connector and a.indent > 0 else a.indent
        if a.connector and not a.vroot:
            display_indent = max(0, a.indent - 1) if layout.multiple_roots else a.indent
            gutters = (*a.gutters, (max(0, display_indent - 1), not a.is_last))
        else:
            gutters = a.gutters
        a.nchildren = 1
        pending.append(Row(node, indent, False, True, gutters, False, a_index))
    k = len(pending)
    if k:
        for i in range(at, len(rows)):
            r = rows[i]
            r.end += k
            if r.parent_row >= at:
                r.parent_row += k
        for i in range(at):
            r = rows[i]
            if r.end >= at:  # the subtree holds the anchor (row at - 1)
                r.end += k
        for r in pending:
            r.end = at + k
        rows[at:at] = pending
        for j, r in enumerate(pending):
            layout._noted(at + j, r.node.id, inserted=True)
    return True
