"""A layout's rows: `Row` (one visible line of the tree), `RowTable` (the rows kept as runs), `ActivePath`.

A layout keeps its rows as runs of a chain (`RowTable`), a few bytes a row where a `Row` object each would cost
over a hundred; the explorer holds one layout per filter. A row's gutters are a link in the layout's
`GutterChain` (each gutter the one it extends plus one level), not a tuple of its own: a tuple each cost the
depth of every branch over again (16 MB a layout at 1,000,000 entries, 2,000 branches deep).
`table[i]` gives a `Row` tuple made on the spot.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import NamedTuple, overload

from pitree.session.entries import Node

Gutters = tuple[tuple[int, bool], ...]

CONNECTOR, IS_LAST, VROOT = 1, 2, 4  # `RowTable.bits`


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


RowTuple = tuple[Node, int, bool, bool, int, bool, int, int, int]  # as `Row`, the gutters a `GutterChain` link


class GutterChain:
    """The gutters of a layout's rows as links: link `g` is the gutters of link `up[g]` (-1: none) plus the level
    `pairs[g]` = (position, shown). Links are only added, so a link's gutters never change."""

    __slots__ = ("up", "pairs", "_tuples", "_maps")

    def __init__(self) -> None:
        self.up = array("i")
        self.pairs: list[tuple[int, bool]] = []
        self._tuples: dict[int, Gutters] = {}
        self._maps: dict[int, dict[int, bool]] = {}

    def push(self, up: int, pos: int, show: bool) -> int:
        """A new link: the gutters of `up` and then (pos, show)."""
        self.up.append(up)
        self.pairs.append((pos, show))
        return len(self.pairs) - 1

    def tuple_of(self, g: int) -> Gutters:
        """The gutters of link `g` from the outermost level in, as `Row.gutters` has them (a few kept made)."""
        if g < 0:
            return ()
        found = self._tuples.get(g)
        if found is None:
            out, up, pairs = [], self.up, self.pairs
            link = g
            while link >= 0:
                out.append(pairs[link])
                link = up[link]
            out.reverse()
            found = tuple(out)
            if len(self._tuples) >= 64:
                self._tuples.clear()
            self._tuples[g] = found
        return found

    def level_map(self, g: int) -> dict[int, bool]:
        """Level -> shown for link `g`, Pi taking the outermost gutter at a level (a few kept made; do not change)."""
        found = self._maps.get(g)
        if found is None:
            found = {}
            up, pairs = self.up, self.pairs
            link = g
            while link >= 0:  # inner to outer: an outer gutter at the same level overwrites
                pos, show = pairs[link]
                found[pos] = show
                link = up[link]
            if len(self._maps) >= 256:
                self._maps.clear()
            self._maps[g] = found
        return found


class ActivePath:
    """The entries on the path root -> leaf: one byte per entry, by file position (`Node.idx`), because every
    filter's layout holds one and a set of `id()`s would cost far more."""

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


def run_tuples(
    entries: list[Node],
    idx: array,
    base: int,
    first: int,
    stop: int,
    head: tuple[int, int, int, int],
    cont: tuple[int, int],
    last_nch: int,
    end: int,
) -> Iterator[RowTuple]:
    """The rows `first` .. `stop - 1` of one run (`RowTable`), as tuples in `Row`'s field order (the gutters a
    link): the head's (indent, bits, gutters, parent row), then for each other row the run's (indent, gutters),
    only IS_LAST and the row before as parent; one shown child a row but the last, which has `last_nch`.
    Row i's entry is `entries[idx[i - base]]`."""
    indent, bits, gutters, parent = head
    yield (
        entries[idx[first - base]],
        indent,
        bool(bits & CONNECTOR),
        bool(bits & IS_LAST),
        gutters,
        bool(bits & VROOT),
        parent,
        1 if first + 1 < stop else last_nch,
        end,
    )
    c_indent, c_gutters = cont
    for i in range(first + 1, stop):
        yield (
            entries[idx[i - base]],
            c_indent,
            False,
            True,
            c_gutters,
            False,
            i - 1,
            1 if i + 1 < stop else last_nch,
            end,
        )


class RowTable:
    """A layout's rows, kept as runs. Most of a session is a chain (each entry the only shown child of the one
    before), and the rows of a chain differ only in their entry: a run is a row (its head) and the chain of only
    children under it, and `RowTable` keeps the head's fields and one row's worth for the rest of the run, plus
    each row's entry (`idx`, its file position in `entries`, the tree's list). So a layout costs 4 bytes a row
    and a few dozen a branch, where columns of every field cost 20 bytes a row (a `Row` object each, over 100).

    Run k starts at row `start[k]`; its head has `h_indent`, `h_bits` (CONNECTOR | IS_LAST | VROOT), `h_gutters`
    (a link in `chain`, -1 for none) and `h_parent` (the row of the nearest shown ancestor, -1 for a root); every
    other row of it has `c_indent`, `c_gutters`, only IS_LAST and the row before as its parent. Every row of a
    run but the last has one shown child; the last has `last_nch`; all of a run's rows end their subtree at
    `end[k]`. Reads like a sequence of `Row` (`table[i]`), made on the spot."""

    __slots__ = (
        "entries",
        "chain",
        "idx",
        "start",
        "h_indent",
        "h_bits",
        "h_gutters",
        "h_parent",
        "c_indent",
        "c_gutters",
        "last_nch",
        "end",
        "version",
    )

    def __init__(self, entries: list[Node], chain: GutterChain | None = None) -> None:
        self.entries = entries
        self.version = 0  # counts the changes after the rows were made (`extend_run`, `replace_node`)
        self.chain = chain if chain is not None else GutterChain()
        self.idx = array("i")
        self.start = array("i")
        self.h_indent = array("i")
        self.h_bits = bytearray()
        self.h_gutters = array("i")
        self.h_parent = array("i")
        self.c_indent = array("i")
        self.c_gutters = array("i")
        self.last_nch = array("i")
        self.end = array("i")

    def __len__(self) -> int:
        return len(self.idx)

    def __bool__(self) -> bool:
        return bool(self.idx)

    def node(self, i: int) -> Node:
        """Row i's entry."""
        return self.entries[self.idx[i]]

    def iter_nodes(self) -> Iterator[Node]:
        entries = self.entries
        return (entries[k] for k in self.idx)

    def add_run(self, first: int, head: tuple[int, int, int, int], cont: tuple[int, int], last_nch: int) -> None:
        """Run from row `first` (its entries already in `idx`): the head's (indent, bits, gutters, parent row),
        the other rows' (indent, gutters), the last row's shown children; its `end` 0 until `set_ends`."""
        self.start.append(first)
        indent, bits, gutters, parent = head
        self.h_indent.append(indent)
        self.h_bits.append(bits)
        self.h_gutters.append(gutters)
        self.h_parent.append(parent)
        self.c_indent.append(cont[0])
        self.c_gutters.append(cont[1])
        self.last_nch.append(last_nch)
        self.end.append(0)

    def set_ends(self, parent_run: Sequence[int]) -> None:
        """Each run's `end` from its size and the runs hanging under it (`parent_run[k]`, -1 for a root):
        rows are in pre-order, so a subtree is a contiguous range."""
        start, n = self.start, len(self.start)
        size = array("i", [self.stop(k) - start[k] for k in range(n)])
        for k in range(n - 1, 0, -1):  # a run's children come after it
            p = parent_run[k]
            if p >= 0:
                size[p] += size[k]
        self.end = array("i", map(int.__add__, start, size))

    def run_of(self, i: int) -> int:
        """The run that holds row i."""
        return bisect_right(self.start, i) - 1

    def stop(self, k: int) -> int:
        """The row after run k's last."""
        return self.start[k + 1] if k + 1 < len(self.start) else len(self.idx)

    def fields(self, i: int) -> tuple[int, int, int, int, int, int]:
        """Row i's (indent, bits, gutters link, parent row, shown children, end); `fields` and the `*_of` below
        take 0 <= i < len (`table[i]` checks)."""
        k = bisect_right(self.start, i) - 1
        nch = 1 if i + 1 < self.stop(k) else self.last_nch[k]
        if i == self.start[k]:
            return self.h_indent[k], self.h_bits[k], self.h_gutters[k], self.h_parent[k], nch, self.end[k]
        return self.c_indent[k], IS_LAST, self.c_gutters[k], i - 1, nch, self.end[k]

    def indent_of(self, i: int) -> int:
        k = bisect_right(self.start, i) - 1
        return self.h_indent[k] if i == self.start[k] else self.c_indent[k]

    def parent_of(self, i: int) -> int:
        k = bisect_right(self.start, i) - 1
        return self.h_parent[k] if i == self.start[k] else i - 1

    def children_of(self, i: int) -> int:
        """How many shown children row i has."""
        k = bisect_right(self.start, i) - 1
        return 1 if i + 1 < self.stop(k) else self.last_nch[k]

    def end_of(self, i: int) -> int:
        """The row after row i's subtree."""
        return self.end[bisect_right(self.start, i) - 1]

    @overload
    def __getitem__(self, i: int) -> Row: ...
    @overload
    def __getitem__(self, i: slice) -> list[Row]: ...
    def __getitem__(self, i: int | slice) -> Row | list[Row]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self.idx)))]
        if i < 0:
            i += len(self.idx)
        if not 0 <= i < len(self.idx):
            raise IndexError("row index out of range")
        indent, bits, gutters, parent, nch, end = self.fields(i)
        return Row(
            self.entries[self.idx[i]],
            indent,
            bool(bits & CONNECTOR),
            bool(bits & IS_LAST),
            self.chain.tuple_of(gutters),
            bool(bits & VROOT),
            parent,
            nch,
            end,
        )

    def __iter__(self) -> Iterator[Row]:
        for k in range(len(self.start)):
            yield from self.run_rows(k)

    def run_rows(self, k: int) -> Iterator[Row]:
        """Run k's rows, in order."""
        head = (self.h_indent[k], self.h_bits[k], self.h_gutters[k], self.h_parent[k])
        cont = (self.c_indent[k], self.c_gutters[k])
        tuple_of = self.chain.tuple_of
        rows = run_tuples(
            self.entries, self.idx, 0, self.start[k], self.stop(k), head, cont, self.last_nch[k], self.end[k]
        )
        for node, indent, conn, last, gutters, vroot, parent, nch, end in rows:
            yield Row(node, indent, conn, last, tuple_of(gutters), vroot, parent, nch, end)

    def extend_run(self, i: int, nodes: Sequence[Node], cont: tuple[int, int] | None) -> None:
        """Put `nodes` in as a chain under row i, the last of its run and without children: they join its run
        (`cont`: the rows' (indent, gutters) when row i is the run's head, whose template they set). Rows after
        them, their parents and the subtree ends that hold row i move down."""
        k, m, at = self.run_of(i), len(nodes), i + 1
        assert self.stop(k) == at and self.last_nch[k] == 0
        self.version += 1
        if cont is not None:
            self.c_indent[k], self.c_gutters[k] = cont
        self.idx[at:at] = array("i", [n.idx for n in nodes])
        start, parents, ends = self.start, self.h_parent, self.end
        for r in range(len(start)):
            if start[r] >= at:
                start[r] += m
            if parents[r] >= at:
                parents[r] += m
            if ends[r] >= at:  # runs after the new rows, and those whose subtree holds row i
                ends[r] += m

    def replace_node(self, i: int, node: Node) -> None:
        self.idx[i] = node.idx
        self.version += 1
