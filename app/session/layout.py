"""The flat row list Pi's `/tree` draws: filters, nearest-visible-ancestor re-parenting, indents, connectors.

A port of Pi's TreeList.flattenTree / applyFilter / recalculateVisualStructure, computed in two
iterative passes over the tree. Each row also knows where its subtree ends (`end`), so folding is
skipping a range, and whether it is foldable, so views never recompute the layout on a fold.
The rows themselves live in `layout_rows`; extending a layout on append is `layout_extend`.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import NamedTuple

from pitree.memory import return_freed_memory
from pitree.session.entries import ALWAYS_HIDDEN, HIDDEN_TOOL_ONLY, SETTINGS_TYPES, Node, Tag
from pitree.session.gcpause import gc_paused
from pitree.session.layout_find import RowFinder
from pitree.session.layout_rows import (
    CONNECTOR,
    IS_LAST,
    VROOT,
    ActivePath,
    GutterChain,
    RowTable,
    RowTuple,
    run_tuples,
)
from pitree.session.tree import SessionTree

_HIDDEN = HIDDEN_TOOL_ONLY | ALWAYS_HIDDEN

LEVEL = 3  # columns per level of Pi's guides (`│  `, `├─ `)
FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")


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
    _where: RowFinder | None = field(default=None, repr=False, compare=False)  # entry -> row, made on first use
    _holder: tuple[Node, int, int | None] | None = field(default=None, repr=False, compare=False)  # holder_row's

    def finder(self) -> RowFinder:
        """What finds an entry's row (`RowFinder`), made on first use and again after the rows change (a worker
        that made one for the rows before a change, and stored it after, is not believed: versions differ)."""
        where = self._where
        if where is None or where.version != self.rows.version:
            where = self._where = RowFinder(self.rows)
        return where

    def row_of(self, node: Node) -> int | None:
        """The row of this entry, or None when the filter hides it."""
        return self.finder().row_of(node)

    def holder_row(self, node: Node) -> int | None:
        """The row of this entry, else of its nearest ancestor with one (None: none has). The last answer is kept
        until the rows change: a hidden leaf's is asked for every row drawn and at every key, and a sparse filter
        can hide the whole path above it."""
        held = self._holder
        if held is not None and held[0] is node and held[1] == self.rows.version:
            return held[2]
        version, walk, row = self.rows.version, node, None
        while walk is not None:
            row = self.row_of(walk)
            if row is not None:
                break
            walk = walk.parent
        self._holder = (node, version, row)
        return row

    def index_of(self, entry_id: str) -> int | None:
        """The row of the entry with this id, or None when there is none or the filter hides it."""
        node = self.by_id.get(entry_id)
        return self.finder().row_of(node) if node is not None else None

    def rows_holding(self, flags: bytes | bytearray) -> array:
        """The rows, in order, whose entry has a 1 at its `Node.idx` in `flags` (shorter flags: 0 past the end)."""
        idx = self.rows.idx
        if len(flags) < len(self.rows.entries):
            flags = bytes(flags).ljust(len(self.rows.entries), b"\0")
        return array("l", compress(range(len(idx)), map(flags.__getitem__, idx)))

    def foldable(self, i: int) -> bool:
        """Pi's isFoldable: has visible children and is a root or the start of a branch segment."""
        rows = self.rows
        if rows.children_of(i) == 0:
            return False
        parent = rows.parent_of(i)
        if parent < 0:
            return True
        return rows.children_of(parent) > 1

    def levels_of(self, indent: int) -> int:
        """How many levels (of 3 columns each) the guides of a row at `indent` take: one fewer with several roots."""
        return max(0, indent - 1) if self.multiple_roots else indent

    def prefix_levels(self, i: int) -> int:
        """How many levels row i's guides take."""
        return self.levels_of(self.rows.indent_of(i))

    def prefix(self, i: int, folded: bool = False, start: int = 0, stop: int | None = None) -> str:
        """Pi's tree gutter for row i: `│`, `├─`, `└─`, with `⊟`/`⊞` on foldable branch starts; with `start` and
        `stop`, only those levels of it (a deep row's guides are thousands of columns, and a screen shows a few)."""
        rows = self.rows
        indent, bits, link = rows.fields(i)[:3]
        display_indent = self.levels_of(indent)
        if display_indent == 0:
            return ""
        has_connector = bits & CONNECTOR and not bits & VROOT
        connector_pos = display_indent - 1 if has_connector else -1
        gutters = rows.chain.level_map(link)
        out: list[str] = []
        for level in range(max(0, start), display_indent if stop is None else min(stop, display_indent)):
            if level in gutters:
                out.append("│  " if gutters[level] else "   ")
            elif level == connector_pos:
                mid = "⊞" if folded else ("⊟" if self.foldable(i) else "─")
                out.append(("└" if bits & IS_LAST else "├") + mid + " ")
            else:
                out.append("   ")
        return "".join(out)


def tokens_of(query: str) -> list[str]:
    """Pi's search: lower-case, whitespace-separated tokens, all must be substrings."""
    return query.lower().split()


def kind_shown(mode: str, etype: str, role: str | None) -> bool:
    """Whether filter `mode` shows an entry of this type and role (not `labeled-only`, which goes by id)."""
    if mode == "default":
        return etype not in SETTINGS_TYPES
    if mode == "no-tools":
        return etype not in SETTINGS_TYPES and not (etype == "message" and role == "toolResult")
    if mode == "user-only":
        return etype == "message" and role == "user"
    if mode == "all":
        return True
    raise ValueError(f"unknown filter {mode!r} (choose from {', '.join(FILTERS)})")


def passes_filter(tree: SessionTree, node: Node, mode: str) -> bool:
    if node.flags & ALWAYS_HIDDEN:
        return False
    if mode == "labeled-only":
        return node.id in tree.labels
    return kind_shown(mode, node.type, node.role)


PACE_MASK = 0x3FFF  # `pace()` every 16,384 entries of a loop
TRIM_ROWS = 100_000  # entries from which a layout gives the memory it freed back (`return_freed_memory`)


def build_layout(
    tree: SessionTree,
    mode: str = "default",
    query: str = "",
    leaf: Node | None = None,
    pace: Callable[[], None] | None = None,
) -> Layout:
    """The rows of the tree under a filter and search, in Pi's display order (active branch first). `pace()`, when
    given, is called every few thousand entries (a background build waits there while the user types)."""
    with gc_paused():
        roots, shown, active, leaf = _shown_forest(tree, mode, query, leaf, pace)
        table = RowTable(tree.nodes)
        parent_run = array("i")
        add_run, add_parent = table.add_run, parent_run.append
        for first, head, parent, cont, last_nch in _runs_of(roots, shown, table.chain, table.idx, pace):
            add_run(first, head, cont, last_nch)
            add_parent(parent)
        table.set_ends(parent_run)
        if len(tree.nodes) > TRIM_ROWS:
            # pass 1's two arrays are an int an entry, which malloc keeps (~8 MB at 1,000,000 entries)
            return_freed_memory()
        return Layout(table, len(roots) > 1, leaf, active, mode, query, tree.by_id, dropped=tree.dropped_count)


@dataclass
class RowStream:
    """`build_layout`'s rows made one at a time and not kept (`end` stays 0): for output that is written as it
    goes (`pitree tree`), so a 100,000-row layout never exists whole. `rows` can be iterated once; each is a
    plain tuple in `Row`'s field order (`Row._make` makes one a `Row`)."""

    rows: Iterator[RowTuple]
    chain: GutterChain  # the rows' gutters
    leaf: Node | None
    active: ActivePath
    mode: str
    query: str


def stream_layout(tree: SessionTree, mode: str = "default", query: str = "", leaf: Node | None = None) -> RowStream:
    """The rows of `build_layout(tree, mode, query, leaf)`, in the same order, each made when it is asked for."""
    with gc_paused():
        roots, shown, active, leaf = _shown_forest(tree, mode, query, leaf)
    chain = GutterChain()
    return RowStream(_rows_of(roots, shown, chain), chain, leaf, active, mode, query)


def _rows_of(roots: list[Node], shown: Shown, chain: GutterChain) -> Iterator[RowTuple]:
    """`_runs_of`'s runs as rows, each a tuple in `Row`'s field order with `end` 0 (only the current run's
    entries held: a run can be most of the session)."""
    nodes, idx = shown.nodes, array("i")  # the entries of the run being made
    for first, head, _, cont, last_nch in _runs_of(roots, shown, chain, idx):
        yield from run_tuples(nodes, idx, first, first, first + len(idx), head, cont, last_nch, 0)
        del idx[:]


class Shown(NamedTuple):
    """Each shown entry's shown children, by file position (`Node.idx`) in int arrays, -1 for none, the last
    found first: the last one (`first`), the one found before each (`next`). A few bytes an entry, where a dict
    keyed by the entries made the peak of a 1,000,000-entry build ~30 MB higher (and in found order, a third
    array of each list's end: 4 MB more)."""

    nodes: list[Node]  # the tree's entries, by idx
    first: array
    next: array


def _shown_forest(
    tree: SessionTree, mode: str, query: str, leaf: Node | None, pace: Callable[[], None] | None = None
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
    # nearest visible ancestor (which is where Pi hangs them after filtering), in the order they come.
    size = len(tree.nodes)
    first, after = array("i", [-1]) * size, array("i", [-1]) * size
    roots: list[Node] = []
    ordered_roots = _active_first(tree.roots, active)
    stack: list[tuple[Node, Node | None]] = [(r, None) for r in reversed(ordered_roots)]
    labels = tree.labels
    by_id = mode == "labeled-only"
    shown_kinds: dict[Tag, bool] = {}
    pop, push = stack.pop, stack.append
    seen = 0
    while stack:
        node, anc = pop()
        while True:  # down a single-child chain without the stack (most of a session is one)
            seen += 1
            if pace is not None and not seen & PACE_MASK:
                pace()
            tag = node._tag  # `type`, `role` and `flags`, inlined
            flags = tag[2]
            if flags & _HIDDEN and (flags & ALWAYS_HIDDEN or id(node) != leaf_id):
                visible = False
            elif by_id:
                visible = node.id in labels
            else:  # `kind_shown`, once a kind of entry
                visible = shown_kinds.get(tag)  # type: ignore[assignment]
                if visible is None:
                    visible = shown_kinds[tag] = kind_shown(mode, tag[0], tag[1])
            if visible and matched is not None:
                visible = node.idx < len(matched) and matched[node.idx] == 1
            if visible:
                if anc is None:
                    roots.append(node)
                else:
                    a, i = anc.idx, node.idx
                    after[i] = first[a]
                    first[a] = i
                anc = node
            children = node._kids  # `Node.children`, inlined: this runs for every entry
            if children is None:
                break
            if type(children) is not list:
                node = children
                continue
            for child in reversed(_active_first(children, active)):
                push((child, anc))
            break

    return roots, Shown(tree.nodes, first, after), active, leaf


Run = tuple[int, tuple[int, int, int, int], int, tuple[int, int], int]


def _runs_of(
    roots: list[Node], shown: Shown, chain: GutterChain, out: array, pace: Callable[[], None] | None = None
) -> Iterator[Run]:
    """Pass 2: Pi's indentation over the shown forest in display order, a run at a time (`RowTable`): each row's
    entry appended to `out`, then the run as (first row, the head's (indent, bits, gutters, parent row), the
    run that holds that parent (-1 for none), the other rows' (indent, gutters), the last row's shown children)."""
    multiple = len(roots) > 1
    made = runs = 0  # rows and runs made so far
    push_gutter, keep = chain.push, out.append
    Frame = tuple[Node, int, bool, bool, bool, int, bool, int, int]
    lstack: list[Frame] = []
    for i in range(len(roots) - 1, -1, -1):
        last = i == len(roots) - 1
        lstack.append((roots[i], 1 if multiple else 0, multiple, multiple, last, -1, multiple, -1, -1))
    nodes, first, after = shown
    while lstack:
        node, indent, just_branched, show_conn, is_last, gutters, vroot, parent_row, parent_run = lstack.pop()
        head = (indent, show_conn | is_last << 1 | vroot << 2, gutters, parent_row)
        cont = (indent, gutters)
        run_first, my_run = made, runs
        runs += 1
        while True:  # a single shown child continues the run
            keep(node.idx)
            my_row = made
            made += 1
            if pace is not None and not made & PACE_MASK:
                pace()
            kid = first[node.idx]
            if kid < 0:
                n = 0
                break
            kids: Sequence[Node]
            if after[kid] < 0:  # one shown child: most entries
                kids = (nodes[kid],)
            else:
                kids = []
                while kid >= 0:
                    kids.append(nodes[kid])
                    kid = after[kid]
                kids.reverse()  # found order
            n = len(kids)
            multi = n > 1
            if multi or (just_branched and indent > 0):
                child_indent = indent + 1
            else:
                child_indent = indent
            if show_conn and not vroot:
                display_indent = max(0, indent - 1) if multiple else indent
                child_gutters = push_gutter(gutters, max(0, display_indent - 1), not is_last)
            else:
                child_gutters = gutters
            if multi:
                for j in range(n - 1, -1, -1):
                    lstack.append((kids[j], child_indent, True, True, j == n - 1, child_gutters, False, my_row, my_run))
                break
            if my_row == run_first:  # the rest of the run is alike
                cont = (child_indent, child_gutters)
            node, indent, just_branched, show_conn, is_last = kids[0], child_indent, False, False, True
            gutters, vroot = child_gutters, False
        yield run_first, head, parent_run, cont, n


def _active_first(nodes: Sequence[Node], active: ActivePath) -> list[Node]:
    first = [n for n in nodes if n in active]
    if not first:
        return list(nodes)
    return first + [n for n in nodes if n not in active]


def nearest_shown(layout: Layout, shown: Sequence[int], node: Node | None) -> int:
    """Pi's findNearestVisibleIndex: the place in `shown` (the rows folds leave, sorted) of the entry's row, else
    of its nearest shown ancestor, else the last. A row a fold hides has its topmost folded ancestor just before it
    among the shown rows (every row between is under that fold): one binary search, not a walk up the path."""
    row = layout.holder_row(node) if node is not None else None
    if row is None:
        return max(0, len(shown) - 1)
    return max(0, bisect_right(shown, row) - 1)


def visible_indices(layout: Layout, folded: set[str]) -> Sequence[int]:
    """Row indices shown when the rows whose entry ids are in `folded` hide their subtrees (a `range` when
    nothing is folded, else an int array: either way 4 bytes a row at most)."""
    rows = layout.rows
    if not folded:
        return range(len(rows))
    out = array("i")
    entries, idx = rows.entries, rows.idx
    i, n = 0, len(idx)
    while i < n:
        out.append(i)
        if entries[idx[i]].id in folded and rows.children_of(i):
            i = rows.end_of(i)
        else:
            i += 1
    return out
