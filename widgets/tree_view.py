"""`TreeView`: the session tree, drawn with Textual's line API (only the lines on screen are rendered).

The rows come from `pitree.session.layout` (Pi's /tree layout); this widget adds the cursor, folds,
the highlighted active path, `← leaf`, inline labels, relative times and model/token columns, and
search highlighting. Textual's stock `Tree` is not used: it recurses per level and rebuilds on each add.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Sequence

from pitree.session.entries import Node
from pitree.session.layout import FILTERS, Layout, build_layout, visible_indices
from pitree.session.layout_extend import extend_layout
from pitree.session.tree import SessionTree
from pitree.widgets.tree_draw import Columns, TreeDrawMixin, relative_time, short_tokens
from pitree.widgets.tree_nav import TreeNavMixin
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

__all__ = ["Columns", "TreeView", "relative_time", "short_tokens"]


class TreeView(TreeDrawMixin, TreeNavMixin, ScrollView, can_focus=True):
    """The session tree. Set it up with `show_tree`; it posts `Highlighted` and `Chosen`."""

    COMPONENT_CLASSES = {
        "tree-view--cursor",
        "tree-view--active",
        "tree-view--guides",
        "tree-view--dot",
        "tree-view--label",
        "tree-view--user",
        "tree-view--assistant",
        "tree-view--tool",
        "tree-view--summary",
        "tree-view--settings",
        "tree-view--error",
        "tree-view--leaf",
        "tree-view--match",
        "tree-view--column",
        "tree-view--summarized",
        "tree-view--kept",
    }

    DEFAULT_CSS = """
    TreeView { background: $surface; overflow-x: hidden; }
    TreeView > .tree-view--cursor { background: $accent 45%; text-style: bold; }
    TreeView > .tree-view--active { background: $primary 18%; }
    TreeView > .tree-view--guides { color: $text-muted; }
    TreeView > .tree-view--dot { color: $accent; text-style: bold; }
    TreeView > .tree-view--label { color: $warning; text-style: bold; }
    TreeView > .tree-view--user { color: $text-accent; }
    TreeView > .tree-view--assistant { color: $text-success; }
    TreeView > .tree-view--tool { color: $text-muted; }
    TreeView > .tree-view--summary { color: $text-warning; }
    TreeView > .tree-view--settings { color: $text-muted; text-style: italic; }
    TreeView > .tree-view--error { color: $text-error; }
    TreeView > .tree-view--leaf { color: $warning; text-style: bold; }
    TreeView > .tree-view--match { background: $warning 50%; color: $text; }
    TreeView > .tree-view--column { color: $text-muted; }
    TreeView > .tree-view--summarized { color: $text-error; text-style: bold; }
    TreeView > .tree-view--kept { color: $text-success; text-style: bold; }
    """

    MARKS = {"summarized": "▒", "kept": "▌"}  # the gutter sign of a marked row (see `set_marks`)

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("ctrl+left,alt+left", "fold_or_up", "Fold / branch up", show=False),
        Binding("ctrl+right,alt+right", "unfold_or_down", "Unfold / branch down", show=False),
        Binding("enter", "choose", "Jump here"),
        Binding("ctrl+d", "filter('default')", "Default filter", show=False),
        Binding("ctrl+t", "toggle_filter('no-tools')", "No tools", show=False),
        Binding("ctrl+u", "toggle_filter('user-only')", "User only", show=False),
        Binding("ctrl+l", "toggle_filter('labeled-only')", "Labeled", show=False),
        Binding("ctrl+a", "toggle_filter('all')", "All", show=False),
        Binding("ctrl+o", "cycle_filter(1)", "Filter", key_display="^o"),
        Binding("ctrl+shift+o", "cycle_filter(-1)", "Filter back", show=False),
        Binding("1", "toggle_column('time')", "Time column", show=False),
        Binding("2", "toggle_column('model')", "Model column", show=False),
        Binding("3", "toggle_column('tokens')", "Tokens column", show=False),
    ]

    filter_mode: reactive[str] = reactive("default", init=False)

    class Highlighted(Message):
        """Posted when the cursor moves to another entry; `moved`: by the user (a key, a click, go to, search),
        not because the rows changed under it."""

        def __init__(self, node: Node | None, moved: bool = False) -> None:
            self.node, self.moved = node, moved
            super().__init__()

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, TreeView.Highlighted)

    class Chosen(Message):
        """Posted when the user presses Enter on an entry (to move the leaf there)."""

        def __init__(self, node: Node) -> None:
            self.node = node
            super().__init__()

    class LayoutChanged(Message):
        """Posted when the visible rows or the columns changed (filter, fold, new entries, a column key)."""

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, TreeView.LayoutChanged)

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.stree: SessionTree | None = None
        self.layout_: Layout | None = None
        self._layouts: dict[str, tuple[int, int, Layout]] = {}  # mode -> (generation, leaf idx, layout)
        self.shown: Sequence[int] = []  # row indices shown (folds hide some): a range or an int array
        self.folded: set[str] = set()
        self.cursor = 0
        # The entry the user put the cursor on: a filter that hides it moves the cursor to what is shown
        # nearest, and the next filter comes back to it (Pi keeps no such memory: its cursor just moves).
        self.anchor_id: str | None = None
        self._shift, self._shift_key = 0, None  # see `indent_shift`
        self.columns = Columns()
        self.search_tokens: list[str] = []
        self.matches: array[int] = array("l")  # row indices (into layout.rows) that match the search, in order
        self._compaction_after: dict[str, int] = {}
        self._cache: dict[int, tuple[int, bool, Strip]] = {}
        self._last_highlight: str | None = None
        self._added: list[Node] | None = None  # set by show_tree for _layout_for
        self.extended = False  # the last show_tree updated the layout in place: the leaf only grew
        self.marks: dict[str, str] = {}  # entry id -> "summarized" | "kept" (a selected compaction's audit)
        self.shown_instead: Node | None = None  # the entry without a row the cursor's row stands for (`go_to`)

    # ---- data ---------------------------------------------------------------------------------------------

    @property
    def cursor_node(self) -> Node | None:
        if self.layout_ is None or not self.shown:
            return None
        return self.layout_.rows.nodes[self.shown[self.cursor]]

    def show_tree(self, tree: SessionTree, select_id: str | None = None, added: list[Node] | None = None) -> None:
        """Show `tree` (new or grown), keeping the selection by id (or moving it to `select_id`).

        `added`: the entries the last `tree.add` brought; when they only extend the leaf (a live tail), the
        shown layout is updated in place instead of rebuilt."""
        keep = select_id or self.anchor_id or (self.cursor_node.id if self.cursor_node is not None else None)
        if keep is None and tree.leaf is not None:
            keep = tree.leaf.id  # a new view starts at the leaf (or its nearest shown ancestor)
        if tree is not self.stree:
            self._layouts.clear()
            self._compaction_after.clear()
        self.stree = tree
        self._added = added
        self.extended = False
        self._relayout(keep)
        self._added = None

    def forget_tree(self) -> None:
        """Drop the tree and its layouts (another session is being opened: the old one can be freed)."""
        self.stree, self.layout_ = None, None
        self._layouts.clear()
        self._compaction_after.clear()
        self._cache.clear()
        self.shown, self.matches, self.marks = [], array("l"), {}
        self.folded.clear()
        self.cursor, self.anchor_id, self._shift_key = 0, None, None
        self.shown_instead = None
        self.virtual_size = Size(self.size.width, 0)
        self.refresh()

    def set_marks(self, marks: dict[str, str]) -> None:
        """Mark rows in the gutter (`MARKS`): what the selected compaction summarized and what it kept."""
        if marks == self.marks:
            return
        self.marks = marks
        self._cache.clear()
        self.refresh()

    def _layout_for(self, mode: str, extend: bool = True) -> Layout:
        tree = self.stree
        assert tree is not None
        leaf = tree.leaf
        key = (tree.generation, leaf.idx if leaf else -1)
        cached = self._layouts.get(mode)
        if cached is not None and cached[:2] == key:
            return cached[2]
        if extend and cached is not None and self._added and cached[0] == tree.generation - 1:
            layout = cached[2]
            if extend_layout(layout, tree, self._added):
                self._layouts[mode] = (*key, layout)
                self.extended = True
                return layout
        layout = build_layout(tree, mode)
        self._layouts[mode] = (*key, layout)
        return layout

    def prewarm(self) -> None:
        """Compute the layouts of the other filters (called from a worker after load)."""
        if self.stree is None:
            return
        for mode in FILTERS:
            if mode != self.filter_mode:  # the shown one exists, and only the UI thread may change it
                self._layout_for(mode, extend=False).index_of("")  # also its id -> row map, off the key path

    def _relayout(self, keep_id: str | None) -> None:
        if self.stree is None:
            return
        before = self.cursor_node
        self.layout_ = self._layout_for(self.filter_mode)
        self.shown = visible_indices(self.layout_, self.folded)
        self._cache.clear()
        self._recompute_matches()
        self.virtual_size = Size(self.size.width, len(self.shown))
        self.cursor = self._nearest_visible(keep_id) if keep_id else max(0, len(self.shown) - 1)
        node = self.cursor_node
        self.anchor_id = keep_id or (node.id if node else None)
        instead = self.shown_instead
        if node is not before or (instead is not None and self.stree.get(instead.id) is not instead):
            self.shown_instead = None  # the row no longer stands for it
        self._scroll_cursor_visible(center=True)
        self.refresh()
        self.post_message(self.LayoutChanged())
        self._post_highlight()

    def _nearest_visible(self, entry_id: str) -> int:
        """Pi's findNearestVisibleIndex: the entry's row, else its nearest shown ancestor, else the last."""
        assert self.stree is not None and self.layout_ is not None
        shown = self.shown  # sorted row indices: an entry's place in it is a binary search
        node = self.stree.get(entry_id)
        while node is not None:
            row = self.layout_.row_of(node)
            if row is not None:
                i = bisect.bisect_left(shown, row)
                if i < len(shown) and shown[i] == row:
                    return i
            node = node.parent
        return max(0, len(shown) - 1)

    def _unfold_to(self, row: int) -> None:
        assert self.layout_ is not None
        rows = self.layout_.rows
        changed = False
        parent = rows[row].parent_row
        while parent >= 0:
            if rows[parent].node.id in self.folded:
                self.folded.discard(rows[parent].node.id)
                changed = True
            parent = rows[parent].parent_row
        if changed:
            self._refold()

    def _refold(self) -> None:
        node = self.cursor_node
        assert self.layout_ is not None
        self.shown = visible_indices(self.layout_, self.folded)
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(self.shown))
        if node is not None:
            self.cursor = self._nearest_visible(node.id)
            self.anchor_id = node.id  # a fold is the user's doing, at the cursor
        self.refresh()
        self.post_message(self.LayoutChanged())

    def watch_filter_mode(self, old: str, new: str) -> None:
        node = self.cursor_node
        self._relayout(self.anchor_id or (node.id if node else None))

    # ---- movement ----------------------------------------------------------------------------------------

    def _move_to(self, index: int, show: Node | None = None) -> None:
        """The cursor to `index`; `show`: the entry without a row that the move is for (see `go_to`)."""
        if not self.shown:
            return
        index = max(0, min(index, len(self.shown) - 1))
        old = self.cursor
        self.cursor = index
        self._cache.pop(self.shown[old], None) if old < len(self.shown) else None
        self._cache.pop(self.shown[index], None)
        node = self.cursor_node
        self.anchor_id = node.id if node else None
        self.refresh_line_at(old)
        self.refresh_line_at(index)
        self._scroll_cursor_visible()
        self.shown_instead = show
        self._post_highlight(moved=True)

    def refresh_line_at(self, index: int) -> None:
        y = index - int(self.scroll_offset.y)
        if 0 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def _scroll_cursor_visible(self, center: bool = False) -> None:
        height = self.size.height or 1
        top = int(self.scroll_offset.y)
        if center and not (top <= self.cursor < top + height):
            self.scroll_to(y=max(0, self.cursor - height // 2), animate=False, immediate=True)
        elif self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def _post_highlight(self, moved: bool = False) -> None:
        node = self.selected_node
        ident = node.id if node else None
        if ident != self._last_highlight or moved:
            self._last_highlight = ident
            self.post_message(self.Highlighted(node, moved))

    @property
    def selected_node(self) -> Node | None:
        """The entry the user went to: the cursor's, or the one without a row it stands for (see `go_to`)."""
        node = self.cursor_node
        instead = self.shown_instead
        return instead if instead is not None and self.stree is not None and node is not None else node

    def action_cursor_up(self) -> None:
        self._move_to(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self._move_to(self.cursor + 1)

    def action_page_up(self) -> None:
        self._move_to(self.cursor - max(1, self.size.height - 1))

    def action_page_down(self) -> None:
        self._move_to(self.cursor + max(1, self.size.height - 1))

    def action_first(self) -> None:
        self._move_to(0)

    def action_last(self) -> None:
        self._move_to(len(self.shown) - 1)

    def action_choose(self) -> None:
        node = self.cursor_node
        if node is not None:
            self.post_message(self.Chosen(node))

    def action_filter(self, mode: str) -> None:
        self.filter_mode = mode

    def action_toggle_filter(self, mode: str) -> None:
        self.filter_mode = "default" if self.filter_mode == mode else mode

    def action_cycle_filter(self, step: int) -> None:
        i = FILTERS.index(self.filter_mode)
        self.filter_mode = FILTERS[(i + step) % len(FILTERS)]

    def action_toggle_column(self, name: str) -> None:
        setattr(self.columns, name, not getattr(self.columns, name))
        self._cache.clear()
        self.refresh()
        self.post_message(self.LayoutChanged())

    async def _on_click(self, event: events.Click) -> None:
        index = int(self.scroll_offset.y) + event.y
        if 0 <= index < len(self.shown):
            if event.chain >= 2 and index == self.cursor:
                self.action_choose()
            else:
                self._move_to(index)

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.shown))
        self._cache.clear()
        self._scroll_cursor_visible(center=True)

    # ---- drawing -----------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        width = self.scrollable_content_region.width
        if self.layout_ is None or index >= len(self.shown) or width <= 0:
            return Strip.blank(width, self.rich_style)
        self.indent_shift(width)  # before the cache: a new cut drops it, so no line of a frame has the old one
        row_index = self.shown[index]
        is_cursor = index == self.cursor
        cached = self._cache.get(row_index)
        if cached is not None and cached[0] == width and cached[1] == is_cursor:
            return cached[2]
        strip = self._render_row(row_index, width, is_cursor)
        if len(self._cache) > 400:
            self._cache.clear()
        self._cache[row_index] = (width, is_cursor, strip)
        return strip
