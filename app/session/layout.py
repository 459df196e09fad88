"""The flat row list Pi's `/tree` draws: filters, nearest-visible-ancestor re-parenting, indents, connectors.

A port of Pi's TreeList.flattenTree / applyFilter / recalculateVisualStructure, computed in two
iterative passes over the tree. Each row also knows where its subtree ends (`end`), so folding is
skipping a range, and whether it is foldable, so views never recompute the layout on a fold.

A layout keeps its rows as columns (`RowTable`: a list of entries, one of gutters, arrays of ints and
bytes), about 35 bytes a row; the explorer holds one layout per filter, and a `Row` object each would cost
~170 bytes a row. `layout.rows[i]` gives a `Row` tuple made on the spot.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import NamedTuple, overload

from pitree.session.entries import ALWAYS_HIDDEN, HIDDEN_TOOL_ONLY, SETTINGS_TYPES, Node
from pitree.session.gcpause import gc_paused
from pitree.session.tree import SessionTree

_HIDDEN = HIDDEN_TOOL_ONLY | ALWAYS_HIDDEN

FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")

Gutters = tuple[tuple[int, bool], ...]


class Row(NamedTuple):
    """One visible line of the tree (a snapshot: changing a layout goes through its `RowTable`)."""

    node: Node
    indent: int
    connector: bool
    is_last: bool
    gutters: Gutters
    vroot: bool
    parent_row: int  # index of the nearest visible ancestor's row, -1 for a root
    nchildren: int  # visible children
    end: int  # index after the last row of this row's subtree


class ActivePath:
    """The entries on the path root -> leaf: one byte per entry, by file position (`Node.idx`). A set of
    `id()`s cost ~70 bytes an entry, and every filter's layout holds one."""

    __slots__ = ("_on",)

    def __init__(self, leaf: Node | None = None) -> None:
        self._on = on = bytearray(leaf.idx + 1 if leaf is not None else 0)
        size = len(on)
        node = leaf
        while node is not None:  # `add`, inlined: the path can be most of a 100,000-entry session
            idx = node.idx
            if idx >= size:  # an ancestor later in the file than the leaf (it adopted orphans)
                on.extend(bytes(idx + 1 - size))
                size = idx + 1
            on[idx] = 1
            node = node.parent

    def add(self, node: Node) -> None:
        on, idx = self._on, node.idx
        if idx >= len(on):
            on.extend(bytes(idx + 1 - len(on)))
        on[idx] = 1

    def mask(self) -> bytearray:
        """The bytes themselves: 1 at `Node.idx` for an entry on the path (shorter than the tree when the
        last entries are not on it). For loops over many rows; do not change it."""
        return self._on

    def __contains__(self, node: object) -> bool:
        idx = node.idx if isinstance(node, Node) else -1
        return 0 <= idx < len(self._on) and self._on[idx] == 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActivePath) and self._on.rstrip(b"\0") == other._on.rstrip(b"\0")

    __hash__ = None  # type: ignore[assignment]


class RowTable:
    """A layout's rows as columns. Reads like a sequence of `Row`; `nodes` etc. are the columns themselves."""

    __slots__ = ("nodes", "indent", "connector", "is_last", "gutters", "vroot", "parent_row", "nchildren", "end")

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.indent = array("i")
        self.connector = bytearray()
        self.is_last = bytearray()
        self.gutters: list[Gutters] = []
        self.vroot = bytearray()
        self.parent_row = array("i")
        self.nchildren = array("i")
        self.end = array("i")

    def __len__(self) -> int:
        return len(self.nodes)

    def __bool__(self) -> bool:
        return bool(self.nodes)

    @overload
    def __getitem__(self, i: int) -> Row: ...
    @overload
    def __getitem__(self, i: slice) -> list[Row]: ...
    def __getitem__(self, i: int | slice) -> Row | list[Row]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self.nodes)))]
        return Row(
            self.nodes[i],
            self.indent[i],
            bool(self.connector[i]),
            bool(self.is_last[i]),
            self.gutters[i],
            bool(self.vroot[i]),
            self.parent_row[i],
            self.nchildren[i],
            self.end[i],
        )

    def __iter__(self) -> Iterator[Row]:
        for i in range(len(self.nodes)):
            yield self[i]

    def extend(self, rows: Sequence[Row] | Sequence[tuple[object, ...]]) -> None:
        """Append rows given as `Row`s or tuples in `Row`'s field order."""
        if not rows:
            return
        nodes, indent, conn, last, gutters, vroot, parent, nch, end = zip(*rows, strict=True)
        self.nodes.extend(nodes)  # type: ignore[arg-type]
        self.indent.extend(indent)  # type: ignore[arg-type]
        self.connector.extend(conn)  # type: ignore[arg-type]
        self.is_last.extend(last)  # type: ignore[arg-type]
        self.gutters.extend(gutters)  # type: ignore[arg-type]
        self.vroot.extend(vroot)  # type: ignore[arg-type]
        self.parent_row.extend(parent)  # type: ignore[arg-type]
        self.nchildren.extend(nch)  # type: ignore[arg-type]
        self.end.extend(end)  # type: ignore[arg-type]

    def insert(self, at: int, rows: Sequence[Row]) -> None:
        """Put `rows` in before row `at` (indices in the rows themselves are the caller's to shift)."""
        tail = RowTable()
        tail.extend(rows)
        self.nodes[at:at] = tail.nodes
        self.indent[at:at] = tail.indent
        self.connector[at:at] = tail.connector
        self.is_last[at:at] = tail.is_last
        self.gutters[at:at] = tail.gutters
        self.vroot[at:at] = tail.vroot
        self.parent_row[at:at] = tail.parent_row
        self.nchildren[at:at] = tail.nchildren
        self.end[at:at] = tail.end

    def replace_node(self, i: int, node: Node) -> None:
        self.nodes[i] = node


@dataclass
class Layout:
    rows: RowTable
    multiple_roots: bool
    leaf: Node | None
    active: ActivePath
    mode: str
    query: str
    by_id: dict[str, Node] = field(default_factory=dict)  # the tree's own map (not a copy)
    dropped: int = 0  # the tree's duplicate losers when the rows were made (`extend_layout` checks it)
    _pos: array | None = field(default=None, repr=False)  # entry idx -> its row, -1 without one

    def positions(self) -> array:
        """Each entry's row by its file position (`Node.idx`), -1 when it has none; built once, on first use,
        kept right by `extend_layout` (4 bytes an entry: a dict of ids would be ~70)."""
        pos = self._pos
        if pos is None:
            nodes = self.rows.nodes
            size = max((n.idx for n in nodes), default=-1) + 1
            pos = array("i", [-1]) * size
            for i, node in enumerate(nodes):
                pos[node.idx] = i
            self._pos = pos
        return pos

    def row_of(self, node: Node) -> int | None:
        """The row of this entry, or None when the filter hides it."""
        pos = self.positions()
        idx = node.idx
        if idx >= len(pos):
            return None
        i = pos[idx]
        if i < 0 or self.rows.nodes[i] is not node:
            return None
        return i

    def index_of(self, entry_id: str) -> int | None:
        """The row of the entry with this id, or None when there is none or the filter hides it."""
        self.positions()
        node = self.by_id.get(entry_id)
        return self.row_of(node) if node is not None else None

    def foldable(self, i: int) -> bool:
        """Pi's isFoldable: has visible children and is a root or the start of a branch segment."""
        rows = self.rows
        if rows.nchildren[i] == 0:
            return False
        parent = rows.parent_row[i]
        if parent < 0:
            return True
        return rows.nchildren[parent] > 1

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
    if node.flags & ALWAYS_HIDDEN:
        return False
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


BUILD_CHUNK = 4096  # rows made before they go into the columns (the tuples in between stay few)


def build_layout(tree: SessionTree, mode: str = "default", query: str = "", leaf: Node | None = None) -> Layout:
    """The rows of the tree under a filter and search, in Pi's display order (active branch first)."""
    with gc_paused():
        roots, shown, active, leaf = _shown_forest(tree, mode, query, leaf)
        table = RowTable()
        made = _rows_of(roots, shown)
        while part := list(islice(made, BUILD_CHUNK)):
            table.extend(part)
        # Subtree ends, for folding: rows are in pre-order, so a subtree is a contiguous range.
        n = len(table)
        sizes = array("i", [1]) * n
        parents = table.parent_row
        for i in range(n - 1, -1, -1):
            p = parents[i]
            if p >= 0:
                sizes[p] += sizes[i]
        table.end = array("i", map(int.__add__, range(n), sizes))
        return Layout(table, len(roots) > 1, leaf, active, mode, query, tree.by_id, dropped=tree.dropped_count)


@dataclass
class RowStream:
    """`build_layout`'s rows made one at a time and not kept (`end` stays 0): for output that is written as it
    goes (`pitree tree`), so a 100,000-row layout never exists whole. `rows` can be iterated once; each is a
    plain tuple in `Row`'s field order (`Row._make` makes one a `Row`)."""

    rows: Iterator[RowTuple]
    leaf: Node | None
    active: ActivePath
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
) -> tuple[list[Node], Shown, ActivePath, Node | None]:
    """Pass 1: the shown roots, each shown entry's shown children, the active path (ids) and the leaf."""
    if mode not in FILTERS:
        raise ValueError(f"unknown filter {mode!r} (choose from {', '.join(FILTERS)})")
    if leaf is None:
        leaf = tree.leaf
    active = ActivePath(leaf)
    tokens = tokens_of(query)
    matched = tree.search_index.matching(tokens).flags if tokens else None  # 1 at the idx of each match
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
            flags = node.flags
            if flags & _HIDDEN and (flags & ALWAYS_HIDDEN or id(node) != leaf_id):
                visible = False
            elif default:
                visible = node.type not in SETTINGS_TYPES
            elif mode == "all":
                visible = True
            else:
                visible = passes_filter(tree, node, mode) if mode != "labeled-only" else node.id in labels
            if visible and matched is not None:
                visible = node.idx < len(matched) and matched[node.idx] == 1
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


RowTuple = tuple[Node, int, bool, bool, Gutters, bool, int, int, int]


def _rows_of(roots: list[Node], vis_children: Shown) -> Iterator[RowTuple]:
    """Pass 2: Pi's indentation over the shown forest, one row at a time in display order, each as a tuple in
    `Row`'s field order with `end` 0 (each entry's shown children are taken out of `vis_children` as its row
    is made)."""
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
            shown = visible_children(node, None)
            if shown is None:
                yield (node, indent, show_conn, is_last, gutters, vroot, parent_row, 0, 0)
                break
            kids: Sequence[Node] = shown if isinstance(shown, list) else (shown,)
            n = len(kids)
            yield (node, indent, show_conn, is_last, gutters, vroot, parent_row, n, 0)
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


def _active_first(nodes: Sequence[Node], active: ActivePath) -> list[Node]:
    first = [n for n in nodes if n in active]
    if not first:
        return list(nodes)
    return first + [n for n in nodes if n not in active]


def visible_indices(layout: Layout, folded: set[str]) -> Sequence[int]:
    """Row indices shown when the rows whose entry ids are in `folded` hide their subtrees (a `range` when
    nothing is folded, else an int array: either way 4 bytes a row at most)."""
    rows = layout.rows
    if not folded:
        return range(len(rows))
    out = array("i")
    nodes, nchildren, ends = rows.nodes, rows.nchildren, rows.end
    i, n = 0, len(nodes)
    while i < n:
        out.append(i)
        if nchildren[i] and nodes[i].id in folded:
            i = ends[i]
        else:
            i += 1
    return out


def extend_layout(layout: Layout, tree: SessionTree, added: Sequence[Node]) -> bool:
    """Update `layout` in place for entries that just extended the leaf in a chain (how Pi writes); False when
    the change is anything else, and the caller must `build_layout` again. After False the layout may have
    been changed in part (the checks that decline run as the rows are placed): it must not be used again.

    New rows go right after the old leaf's row (or, when the old leaf was a tool-call-only assistant turn that
    only the leaf shows, one takes that row's place); a batch of k entries moves the rows after them down by
    k in one pass: O(rows) integer updates per batch instead of rebuilding the layout.
    """
    if not added or layout.query or layout.leaf is None or tree.leaf is not added[-1]:
        return False
    if tree.dropped_count != layout.dropped:
        return False  # a duplicate id replaced an entry: it may have had a row
    prev = layout.leaf
    for node in added:
        if node.parent is not prev or prev.children != [node] or tree.is_dropped(node):
            return False
        if layout.mode == "labeled-only" and node.type == "label":
            return False
        prev = node
    if added[-1].children:
        return False
    table = layout.rows
    pos = layout.positions()
    need = max(n.idx for n in added) + 1
    if need > len(pos):
        pos.extend(array("i", [-1]) * (need - len(pos)))
    mode = layout.mode
    pending: list[Row] = []  # new rows, a chain, to go in at `at`
    at = -1
    for node in added:
        old_leaf = layout.leaf
        assert old_leaf is not None
        layout.active.add(node)
        layout.leaf = node
        visible = not node.flags & ALWAYS_HIDDEN
        if visible and mode != "all":
            visible = passes_filter(tree, node, mode) if mode != "labeled-only" else node.id in tree.labels
        in_pending = bool(pending) and pending[-1].node is old_leaf
        old_row = None if in_pending else layout.row_of(old_leaf)
        if old_leaf.flags & HIDDEN_TOOL_ONLY and (in_pending or old_row is not None):
            # The old leaf was shown only because it was the leaf: the new entry, which hangs where it hung,
            # takes exactly its place and shape.
            if not visible:
                return False
            if in_pending:
                pending[-1] = pending[-1]._replace(node=node)
            else:
                assert old_row is not None
                table.nodes[old_row] = node
                pos[old_leaf.idx] = -1
                pos[node.idx] = old_row
            continue
        if not visible:
            continue  # no row: it shows through its nearest shown ancestor, as the leaf does under a filter
        if pending:
            a, a_index = pending[-1], at + len(pending) - 1
            pending[-1] = a._replace(nchildren=1)
        else:
            anchor = old_row
            walk: Node | None = old_leaf
            while anchor is None and walk is not None:
                walk = walk.parent
                anchor = layout.row_of(walk) if walk is not None else None
            if anchor is None:
                return False  # no shown ancestor: the entry would be a new root
            a, a_index, at = table[anchor], anchor, anchor + 1
            if a.nchildren:
                return False  # the anchor gets a second shown child: its children's shapes change
            table.nchildren[anchor] = 1
        indent = a.indent + 1 if a.connector and a.indent > 0 else a.indent
        if a.connector and not a.vroot:
            display_indent = max(0, a.indent - 1) if layout.multiple_roots else a.indent
            gutters = (*a.gutters, (max(0, display_indent - 1), not a.is_last))
        else:
            gutters = a.gutters
        pending.append(Row(node, indent, False, True, gutters, False, a_index, 0, 0))
    k = len(pending)
    if k:
        nodes, ends, parents = table.nodes, table.end, table.parent_row
        for i in range(len(nodes) - 1, at - 1, -1):
            ends[i] += k
            if parents[i] >= at:
                parents[i] += k
            pos[nodes[i].idx] = i + k
        for i in range(at):
            if ends[i] >= at:  # the subtree holds the anchor (row at - 1)
                ends[i] += k
        table.insert(at, [r._replace(end=at + k) for r in pending])
        for j, r in enumerate(pending):
            pos[r.node.idx] = at + j
    return True
