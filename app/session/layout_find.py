"""Finding an entry's row in a layout (`RowFinder`), without a map of every entry.

A map from each entry to its row costs 4 bytes an entry for every layout the explorer keeps, whatever its size.
A layout that shows most entries keeps marks instead: the rows of each run's head and of every `MARK_EVERY`-th
row of a run, by entry. A shown entry's nearest marked ancestor is then at most `MARK_EVERY - 1` rows above it,
in its own run (the entries between two rows of a run are hidden, so never marked): walk up to it, then look
for the entry in the rows just after. A layout that shows few entries keeps its (entry, row) pairs sorted by
entry instead, where walking up could pass many hidden entries; so does a layout where a walk went too far.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from itertools import compress

from pitree.session.entries import Node
from pitree.session.layout_rows import RowTable

MARK_EVERY = 256  # rows of a run between two marks
WALK_MAX = 4096  # entries walked up before the finder keeps sorted pairs instead of marks


class RowFinder:
    """Each entry's row in `rows`, or None; made for the rows as they are (made again after they change)."""

    __slots__ = ("rows", "version", "marks", "keys", "at")

    def __init__(self, rows: RowTable) -> None:
        self.rows = rows
        self.version = rows.version  # the rows as they were: `Layout.finder` makes another once they change
        self.marks: dict[int, int] | None = None  # entry idx -> row, for the marked rows
        self.keys = self.at = array("i")  # entry idx, sorted, and each one's row
        if len(rows) * 2 >= len(rows.entries):
            marks: dict[int, int] = {}
            idx, start, stop = rows.idx, rows.start, rows.stop
            for k in range(len(start)):
                for r in range(start[k], stop(k), MARK_EVERY):
                    marks[idx[r]] = r
            self.marks = marks
        else:
            self._sort()

    def _sort(self) -> None:
        """The pairs, by scattering each row into an int array by entry (4 bytes an entry for a moment; a sort
        of a million rows held ~70 MB of ints)."""
        idx = self.rows.idx
        pos = array("i", [-1]) * len(self.rows.entries)
        for i, k in enumerate(idx):
            pos[k] = i
        shown = bytes(map((-1).__lt__, pos))
        self.keys = array("i", compress(range(len(pos)), shown))
        self.at = array("i", compress(pos, shown))
        self.marks = None

    def row_of(self, node: Node) -> int | None:
        marks, target = self.marks, node.idx
        if marks is None:
            keys = self.keys
            j = bisect_left(keys, target)
            if j < len(keys) and keys[j] == target:
                row = self.at[j]
                return row if row < len(self.rows.idx) and self.rows.idx[row] == target else None
            return None
        walk: Node | None = node
        for _ in range(WALK_MAX):
            if walk is None:
                return None  # above every root: the entry has no row
            r = marks.get(walk.idx)
            if r is not None:
                idx = self.rows.idx
                if walk is node:
                    return r if r < len(idx) and idx[r] == target else None
                try:
                    return idx.index(target, r + 1, min(r + MARK_EVERY, len(idx)))
                except ValueError:
                    return None  # not within the run's rows below its nearest mark: not shown
            walk = walk.parent
        self._sort()  # a long way up through hidden entries (or a loop): pairs from now on
        return self.row_of(node)
