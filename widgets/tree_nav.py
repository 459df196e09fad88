"""`TreeNavMixin`: the parts of `TreeView` that find rows — search matches (Pi's rule: every word a substring)
and Pi's fold and branch jumps (Ctrl+←/→)."""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pitree.session.layout import tokens_of
from textual.strip import Strip

if TYPE_CHECKING:
    from pitree.session.layout import Layout
    from pitree.session.tree import SessionTree
if TYPE_CHECKING:  # the widget it is part of, for the type checker
    from textual.scroll_view import ScrollView as _Base
else:
    _Base = object


class TreeNavMixin(_Base):
    """Part of `TreeView` (see `tree_view.py`): the state it reads is the view's."""

    layout_: Layout | None
    stree: SessionTree | None
    shown: Sequence[int]
    folded: set[str]
    cursor: int
    search_tokens: list[str]
    matches: array[int]
    _cache: dict[int, tuple[int, bool, Strip]]

    if TYPE_CHECKING:  # the widget's own

        def _unfold_to(self, row: int) -> None: ...
        def _move_to(self, index: int) -> None: ...
        def _refold(self) -> None: ...

    # ---- search ------------------------------------------------------------------------------------------

    def set_search(self, query: str) -> int:
        """Highlight entries matching all words of `query` (Pi's rule); returns the match count."""
        self.search_tokens = tokens_of(query)
        self._recompute_matches()
        self._cache.clear()
        self.refresh()
        return len(self.matches)

    def _recompute_matches(self) -> None:
        tokens = self.search_tokens
        if not tokens or self.layout_ is None or self.stree is None:
            self.matches = array("l")
            return
        hits = self.stree.search_index.matching(tokens)
        layout, entries = self.layout_, self.stree.nodes
        if len(hits) * 8 < len(layout.rows):  # few: find their rows
            found = (layout.row_of(entries[idx]) for idx in hits)
            self.matches = array("l", sorted(row for row in found if row is not None))
        else:
            flags, size = hits.flags, len(hits.flags)
            self.matches = array(
                "l", [i for i, node in enumerate(layout.rows.nodes) if node.idx < size and flags[node.idx]]
            )

    def _is_match(self, row: int) -> bool:
        matches = self.matches
        i = bisect.bisect_left(matches, row)
        return i < len(matches) and matches[i] == row

    def match_position(self) -> int:
        """1-based index of the match at or before the cursor (0 if none)."""
        if not self.matches or not self.shown:
            return 0
        current = self.shown[self.cursor]

        return bisect.bisect_right(self.matches, current)

    def next_match(self, direction: int = 1) -> bool:
        """Go to the next (or previous) match, unfolding what hides it; wraps around."""
        if not self.matches or self.layout_ is None:
            return False
        current = self.shown[self.cursor] if self.shown else -1
        matches = self.matches
        if direction > 0:
            i = bisect.bisect_right(matches, current)
            target = matches[i] if i < len(matches) else matches[0]
        else:
            i = bisect.bisect_left(matches, current)
            target = matches[i - 1] if i > 0 else matches[-1]
        self._unfold_to(target)
        self._move_to(self.shown.index(target))
        return True

    def action_fold_or_up(self) -> None:
        """Pi's foldOrUp: fold a foldable, unfolded entry; else jump to the previous branch start."""
        if self.layout_ is None or not self.shown:
            return
        row = self.shown[self.cursor]
        node = self.layout_.rows.nodes[row]
        if self.layout_.foldable(row) and node.id not in self.folded:
            self.folded.add(node.id)
            self._refold()
            return
        self._move_to(self.shown.index(self._segment_start(row, up=True)))

    def action_unfold_or_down(self) -> None:
        if self.layout_ is None or not self.shown:
            return
        row = self.shown[self.cursor]
        node = self.layout_.rows.nodes[row]
        if node.id in self.folded:
            self.folded.discard(node.id)
            self._refold()
            return
        self._move_to(self.shown.index(self._segment_start(row, up=False)))

    def _segment_start(self, row: int, up: bool) -> int:
        """Pi's findBranchSegmentStart over visible rows (folded subtrees are skipped)."""
        assert self.layout_ is not None
        rows = self.layout_.rows
        if not up:
            current = row
            while True:
                r = rows[current]
                if r.nchildren == 0 or rows[current].node.id in self.folded:
                    return current
                first_child = current + 1
                if r.nchildren > 1:
                    return first_child
                current = first_child
        current = row
        while True:
            parent = rows[current].parent_row
            if parent < 0:
                return current
            if rows[parent].nchildren > 1 and current < row:
                return current
            current = parent
