"""A layout's rows: `Row` (one visible line of the tree), `RowTable` (the rows kept as columns), `ActivePath`.

A layout keeps its rows as columns (arrays of ints and bytes), 20 bytes a row where a
`Row` object each would cost several times that; the explorer holds one layout per filter. A row's gutters are a
link in the layout's `GutterChain` (each gutter the one it extends plus one level), not a tuple of its own: a
tuple each cost the depth of every branch over again (16 MB a layout at 1,000,000 entries, 2,000 branches deep).
`table[i]` gives a `Row` tuple made on the spot.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import repeat
from operator import attrgetter, lshift, or_
from typing import NamedTuple, overload

from pitree.session.entries import Node

Gutters = tuple[tuple[int, bool], ...]

CONNECTOR, IS_LAST, VROOT = 1, 2, 4  # `RowTable.bits`
_IDX = attrgetter("idx")
_ONES, _TWOS, _SATURATED = repeat(1), repeat(2), repeat(255)


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


class RowTable:
    """A layout's rows as columns. Reads like a sequence of `Row`; the columns themselves are `idx` (each row's
    entry, by its file position in `entries`, the tree's list), `indent`, `bits` (CONNECTOR | IS_LAST | VROOT),
    `gutters` (a link in `chain`, -1 for none), `parent_row`, `nchildren` (saturated at 255: `children_of` counts
    past it) and `end`: 20 bytes a row (a list of entries and a byte or an int for each field cost 31)."""

    __slots__ = ("entries", "idx", "indent", "bits", "gutters", "parent_row", "nchildren", "end", "chain")

    def __init__(self, entries: list[Node], chain: GutterChain | None = None) -> None:
        self.entries = entries
        self.chain = chain if chain is not None else GutterChain()
        self.idx = array("i")
        self.indent = array("H")  # widens to "i" past 65,535 (`_widen_indent`)
        self.bits = bytearray()
        self.gutters = array("i")
        self.parent_row = array("i")
        self.nchildren = bytearray()
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

    def children_of(self, i: int) -> int:
        """How many shown children row i has (`nchildren` holds at most 255)."""
        n = self.nchildren[i]
        if n < 255:
            return n
        parents, j, end, count = self.parent_row, i + 1, self.end[i], 0
        while j < end:  # each child's subtree is a contiguous range after it
            if parents[j] == i:
                count += 1
            j = self.end[j]
        return count

    @overload
    def __getitem__(self, i: int) -> Row: ...
    @overload
    def __getitem__(self, i: slice) -> list[Row]: ...
    def __getitem__(self, i: int | slice) -> Row | list[Row]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self.idx)))]
        bits = self.bits[i]
        return Row(
            self.entries[self.idx[i]],
            self.indent[i],
            bool(bits & CONNECTOR),
            bool(bits & IS_LAST),
            self.chain.tuple_of(self.gutters[i]),
            bool(bits & VROOT),
            self.parent_row[i],
            self.children_of(i),
            self.end[i],
        )

    def __iter__(self) -> Iterator[Row]:
        for i in range(len(self.idx)):
            yield self[i]

    def extend(self, rows: Sequence[RowTuple]) -> None:
        """Append rows given as tuples in `Row`'s field order, the gutters a link in `chain`."""
        if not rows:
            return
        nodes, indent, conn, last, gutters, vroot, parent, nch, end = zip(*rows, strict=True)
        self.idx.extend(map(_IDX, nodes))
        try:
            self.indent.extend(indent)  # type: ignore[arg-type]
        except OverflowError:
            self._widen_indent()
            self.indent.extend(indent)  # type: ignore[arg-type]
        self.bits.extend(map(or_, conn, map(or_, map(lshift, last, _ONES), map(lshift, vroot, _TWOS))))
        self.gutters.extend(gutters)  # type: ignore[arg-type]
        self.parent_row.extend(parent)  # type: ignore[arg-type]
        try:
            self.nchildren.extend(nch)  # type: ignore[arg-type]
        except ValueError:  # a row with 256 or more shown children
            self.nchildren.extend(map(min, nch, _SATURATED))
        self.end.extend(end)  # type: ignore[arg-type]

    def _widen_indent(self) -> None:
        if self.indent.typecode == "H":
            self.indent = array("i", self.indent)

    def insert(self, at: int, rows: Sequence[RowTuple]) -> None:
        """Put `rows` (as `extend` takes them) in before row `at` (indices in the rows themselves are the caller's
        to shift)."""
        tail = RowTable(self.entries, self.chain)
        tail.extend(rows)
        if tail.indent.typecode != self.indent.typecode:
            self._widen_indent()
        self.idx[at:at] = tail.idx
        self.indent[at:at] = array(self.indent.typecode, tail.indent)
        self.bits[at:at] = tail.bits
        self.gutters[at:at] = tail.gutters
        self.parent_row[at:at] = tail.parent_row
        self.nchildren[at:at] = tail.nchildren
        self.end[at:at] = tail.end

    def replace_node(self, i: int, node: Node) -> None:
        self.idx[i] = node.idx
