"""`TreeNav`: the parts of `TreeView` that find rows — go to an entry, search matches (Pi's rule: every word a
substring) and Pi's fold and branch jumps (Ctrl+←/→).

A search of a big tree (`search_in_thread_from` entries or more) runs in a worker thread: typing never waits for
it. A newer query cancels the one running (checked between blocks of the index); until the new matches come
(`Searched`), `searching` is True and the rows keep the last matches found for these words, if any. The entries'
matches (`Hits`) are kept, so a filter change or a fold only finds their rows again, and new entries start
another search.
"""

from __future__ import annotations

import bisect
import weakref
from array import array

from pitree.session.entries import ALWAYS_HIDDEN, HIDDEN_TOOL_ONLY, Node
from pitree.session.layout import tokens_of
from pitree.session.search_index import Hits
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.widgets.tree_base import TreeBase
from textual.message import Message
from textual.worker import get_current_worker

SearchKey = tuple[tuple[str, ...], int, "weakref.ref[SessionTree]"]


class TreeNav(TreeBase):
    """Finding rows on top of the view's state (see `TreeView`)."""

    search_in_thread_from = 250_000  # entries: below, a search takes well under 0.1 s and is done at once

    class Searched(Message, namespace="tree_view"):
        """Posted when a search that ran in a thread has its matches on the rows."""

        def __init__(self, count: int) -> None:
            self.count = count
            super().__init__()

    searching = False  # a search runs in a thread: the matches are not yet those of `search_tokens`
    _hits: Hits | None = None  # what the search of `_hits_key` (tokens, tree generation, tree) matched
    _hits_key: SearchKey | None = None
    _pending: SearchKey | None = None  # the key of the search running in a thread

    # ---- go to an entry ----------------------------------------------------------------------------------

    def leaf_row_node(self) -> Node | None:
        """The node drawn for the leaf: the leaf itself, or its nearest shown ancestor if filtered out."""
        if self.leaf is None or not self.shown or self.layout_ is None:
            return None
        return self.layout_.rows.node(self.shown[self._nearest_visible(self.leaf.id)])

    def select_id(self, entry_id: str) -> bool:
        """`go_to` for callers that need no notice: False when the tree has no such entry."""
        return self.go_to(entry_id) is not None

    def go_to(self, entry_id: str) -> str | None:
        """Move the cursor to an entry, unfolding what hides it. None: no such entry; "": on its row; else a
        one-line notice: the filter was switched to 'all' to show it, or the entry has no row in Pi's tree under
        any filter (then the cursor goes to its tool result or nearest shown ancestor, and `Highlighted` carries
        the entry itself, for the entry pane)."""
        if self.stree is None or self.layout_ is None:
            return None
        node = self.stree.get(entry_id)
        if node is None:
            return None
        row = self.layout_.index_of(entry_id)
        if row is not None:
            self._unfold_to(row)
            self._move_to(self.shown.index(row))
            return ""
        why = no_row_reason(node, node is self.stree.leaf)
        if why is None:  # only this filter hides it: 'all' shows every entry Pi's tree can show
            old = self.widen_filter(entry_id)
            row = self.layout_.index_of(entry_id)
            if row is None:
                return None
            self._unfold_to(row)
            self._move_to(self.shown.index(row))
            return f"filter {old} → all: the {old} view hides this entry"
        row, where = self._stand_in(node)
        if row is None:
            return None
        self._unfold_to(row)
        self._move_to(self.shown.index(row), show=node)
        return f"entry {node.id[:8]} has no row in Pi's tree ({why}): shown in the entry pane, the cursor is on {where}"

    def _stand_in(self, node: Node) -> tuple[int | None, str]:
        """The row that stands for an entry without one: a tool-only reply's first tool result shown, else the
        nearest ancestor shown by the filter."""
        assert self.layout_ is not None
        layout = self.layout_
        if node.flags & HIDDEN_TOOL_ONLY:
            for child in node.children:
                if child.type == "message" and child.role == "toolResult":
                    row = layout.row_of(child)
                    if row is not None:
                        return row, "its tool result"
        parent = node.parent
        while parent is not None:
            row = layout.row_of(parent)
            if row is not None:
                return row, "its nearest shown ancestor"
            parent = parent.parent
        return (len(layout.rows) - 1 if len(layout.rows) else None), "the last row"

    # ---- search ------------------------------------------------------------------------------------------

    def set_search(self, query: str) -> int:
        """Highlight entries matching all words of `query` (Pi's rule); returns the match count (of the last
        matches found while `searching`: a big tree's search then posts `Searched`)."""
        self.search_tokens = tokens_of(query)
        self._recompute_matches()
        self._cache.clear()
        self.refresh()
        return len(self.matches)

    def _recompute_matches(self) -> None:
        tree, tokens = self.stree, self.search_tokens
        if not tokens or self.layout_ is None or tree is None:
            self.matches, self.searching, self._hits, self._hits_key = array("l"), False, None, None
            if self._pending is not None:
                self._pending = None
                self.workers.cancel_group(self, "tree-search")
            return
        key = (tuple(tokens), tree.generation, weakref.ref(tree))  # refs are equal while it is the same tree
        if self._hits_key != key:
            if len(tree.nodes) < self.search_in_thread_from:
                self._hits, self._hits_key = tree.search_index.matching(tokens), key
            else:
                self.searching = True
                if self._pending != key:
                    self._search_in_thread(tree, key)
                if self._hits_key is None or self._hits_key[0] != key[0]:
                    self.matches = array("l")  # other words' matches: none shown until these come
                    return
        self.searching = self._hits_key != key
        self.matches = self._rows_of(self._hits)

    def _rows_of(self, hits: Hits | None) -> array[int]:
        """The rows of the layout shown that hold these entries, in order."""
        layout, tree = self.layout_, self.stree
        if hits is None or layout is None or tree is None:
            return array("l")
        if len(hits) * 8 < len(layout.rows):  # few: find their rows
            found = (layout.row_of(tree.nodes[idx]) for idx in hits)
            return array("l", sorted(row for row in found if row is not None))
        return layout.rows_holding(hits.flags)  # many: every row's entry looked up in them, at C speed

    def _search_in_thread(self, tree: SessionTree, key: SearchKey) -> None:
        def run() -> None:
            worker = get_current_worker()
            failure: str | None = None
            try:
                hits = tree.search_index.matching(list(key[0]), cancelled=lambda: worker.is_cancelled)
            except OSError as exc:  # the index's spill file could not be read back
                hits, failure = None, f"search failed: {type(exc).__name__}: {exc}"
            if worker.is_cancelled:
                return
            try:
                if hits is not None:
                    self.app.call_from_thread(self._searched, tree, key, hits)
                elif failure is not None:
                    self.app.call_from_thread(self._search_failed, key, failure)
            except RuntimeError:
                pass  # the app is closing

        self._pending = key
        self.run_worker(run, thread=True, exclusive=True, group="tree-search", exit_on_error=False)

    def _search_failed(self, key: SearchKey, failure: str) -> None:
        if self._pending == key:
            self._pending, self.searching = None, False
            self.notify(make_safe(failure, keep_newlines=False), severity="error", markup=False)
            self.post_message(self.Searched(len(self.matches)))

    def _searched(self, tree: SessionTree, key: SearchKey, hits: Hits) -> None:
        if self._pending == key:
            self._pending = None
        if tree is not self.stree or key[0] != tuple(self.search_tokens):
            return  # another session, or other words, since
        self._hits, self._hits_key = hits, key
        self._recompute_matches()  # the tree may have grown meanwhile: these rows now, and another search
        self._cache.clear()
        self.refresh()
        self.post_message(self.Searched(len(self.matches)))

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
        node = self.layout_.rows.node(row)
        if self.layout_.foldable(row) and node.id not in self.folded:
            self.folded.add(node.id)
            self._refold()
            return
        self._move_to(self.shown.index(self._segment_start(row, up=True)))

    def action_unfold_or_down(self) -> None:
        if self.layout_ is None or not self.shown:
            return
        row = self.shown[self.cursor]
        node = self.layout_.rows.node(row)
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


def no_row_reason(node: Node, is_leaf: bool) -> str | None:
    """Why Pi's tree shows no row for `node` under any filter (None: some filter shows it)."""
    if node.flags & ALWAYS_HIDDEN:
        return "Pi never shows usage entries"
    if node.flags & HIDDEN_TOOL_ONLY and not is_leaf:
        return "Pi hides assistant replies without text: only tool calls, or no content"
    return None
