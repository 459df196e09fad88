"""`TreeBase`: the state of the session tree view and what every part of it uses — the rows shown (a layout per
filter, folds), the cursor (a validated reactive), its line cache (Textual's `LRUCache`), search matches, and the
messages it posts. `TreeView` (`tree_view.py`) adds keys and drawing; `tree_nav.py` and `tree_draw.py` hold the
parts that find rows and that draw them, as subclasses of this one.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pitree.session.entries import Node
from pitree.session.layout import FILTERS, LEVEL, Layout, build_layout, nearest_shown, visible_indices
from pitree.session.layout_extend import extend_layout
from pitree.session.tree import SessionTree
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

CACHED_LINES = 400  # rendered rows kept: a few screens' worth


@dataclass
class Columns:
    """Which columns the rows show after their text (keys 1, 2, 3)."""

    time: bool = True
    model: bool = False
    tokens: bool = True


def shift_for(depth: int, width: int, shift: int) -> int:
    """The cut `indent_shift` makes for a cursor row with `depth` columns of guides, the cut now being `shift`."""
    room = TreeBase.prefix_room(width)
    if depth - shift > room or depth < shift:
        shift = max(0, depth - room // 2)
        shift += -shift % LEVEL
    return shift


def cut_prefix(prefix: str, shift: int, room: int | None) -> str:
    """A row's guides cut by `shift` columns on the left and, past `room` columns, in the middle (each cut `…`)."""
    if shift > 0:
        # The levels left of the cut are off screen for every row alike; `…` says so.
        prefix = "…" + prefix[shift + 1 :] if len(prefix) > shift else "…"
    if room is not None and len(prefix) > room:
        prefix = prefix[: room - LEVEL - 1] + "…" + prefix[-LEVEL:]
    return prefix


def cut_guides(layout: Layout, i: int, folded: bool, shift: int, room: int | None) -> str:
    """`cut_prefix(layout.prefix(i, folded), shift, room)`, made from the levels it shows only: the guides of a row
    thousands of levels deep would otherwise be made whole for each row drawn."""
    width = layout.prefix_levels(i) * LEVEL
    if room is None or room < 2 * LEVEL:
        return cut_prefix(layout.prefix(i, folded), shift, room)

    def columns(a: int, b: int) -> str:  # the whole prefix's [a:b]
        a, b = max(0, a), min(b, width)
        if b <= a:
            return ""
        first = a // LEVEL
        return layout.prefix(i, folded, first, -(-b // LEVEL))[a - first * LEVEL : b - first * LEVEL]

    # cut_prefix's left cut: "…" then the columns past shift + 1
    lead, start = ("…", shift + 1) if shift > 0 else ("", 0)
    if len(lead) + max(0, width - start) <= room:
        return lead + columns(start, width)
    keep = room - LEVEL - 1
    return (lead + columns(start, start + keep))[:keep] + "…" + columns(width - LEVEL, width)


class TreeBase(ScrollView):
    """The tree view's state; see `TreeView`."""

    filter_mode: reactive[str] = reactive("default", init=False)
    # Only the two rows it leaves and reaches are redrawn (`_move_to`), never the whole view.
    cursor: reactive[int] = reactive(0, init=False, repaint=False)

    class Highlighted(Message, namespace="tree_view"):
        """Posted when the cursor moves to another entry; `moved`: by the user (a key, a click, go to, search),
        not because the rows changed under it."""

        def __init__(self, node: Node | None, moved: bool = False) -> None:
            self.node, self.moved = node, moved
            super().__init__()

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, TreeBase.Highlighted)

    class Chosen(Message, namespace="tree_view"):
        """Posted when the user presses Enter on an entry (to move the leaf there)."""

        def __init__(self, node: Node) -> None:
            self.node = node
            super().__init__()

    class LayoutChanged(Message, namespace="tree_view"):
        """Posted when the visible rows or the columns changed (filter, fold, new entries, a column key)."""

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, TreeBase.LayoutChanged)

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.stree: SessionTree | None = None
        self.layout_: Layout | None = None
        self._layouts: dict[str, tuple[int, int, Layout]] = {}  # mode -> (generation, leaf idx, layout)
        self.shown: Sequence[int] = []  # row indices shown (folds hide some): a range or an int array
        self.folded: set[str] = set()
        # The entry the user put the cursor on: a filter that hides it moves the cursor to what is shown
        # nearest, and the next filter comes back to it (Pi keeps no such memory: its cursor just moves).
        self.anchor_id: str | None = None
        self._shift: int = 0  # see `indent_shift`
        self._shift_key: tuple[int, int, int] | None = None
        self.columns = Columns()
        self.search_tokens: list[str] = []
        self.matches: array[int] = array("l")  # row indices (into layout.rows) that match the search, in order
        self._compaction_after: dict[str, int] = {}
        # (row index, width, is the cursor's) -> the drawn line; cleared when what the rows show changes
        self._cache: LRUCache[tuple[int, int, bool], Strip] = LRUCache(CACHED_LINES)
        self._last_highlight: str | None = None
        self._added: list[Node] | None = None  # set by show_tree for _layout_for
        self.extended = False  # the last show_tree updated the layout in place: the leaf only grew
        self.marks: dict[str, str] = {}  # entry id -> "summarized" | "kept" (a selected compaction's audit)
        self.compare_mark: str | None = None  # the entry marked with `m` as one side of a comparison
        self.shown_instead: Node | None = None  # the entry without a row the cursor's row stands for (`go_to`)
        # The tree's leaf when the rows were laid out: entries the live tail added are not drawn before
        # `show_tree` brings them in, and neither is their leaf.
        self.leaf: Node | None = None

    def validate_cursor(self, index: int) -> int:
        """The cursor stays on a shown row (0 when there is none)."""
        return max(0, min(index, len(self.shown) - 1))

    # ---- the horizontal cut of deep guides ---------------------------------------------------------------

    @staticmethod
    def prefix_room(width: int) -> int:
        """How many columns of guides a row may take before they are cut: a third of the width, at least 12."""
        return max(12, width // 3)

    def indent_shift(self, width: int) -> int:
        """Columns cut from the left of every row's guides: 0 until the cursor's guides pass `prefix_room`,
        then enough levels (a multiple of LEVEL) to bring the cursor's row to the middle of that room; it stays
        put while the cursor's guides fit, so moving up and down does not shift the screen each time."""
        shown = self.shown
        if self.layout_ is None or not shown:
            return 0
        row = shown[self.cursor]
        key = (row, width, id(self.layout_))
        if key == self._shift_key:
            return self._shift
        shift = shift_for(self.layout_.prefix_levels(row) * LEVEL, width, self._shift)
        if shift != self._shift:
            self._cache.clear()
            self.refresh()  # every line, not only those the cursor move asked for
        self._shift, self._shift_key = shift, key
        return shift

    # ---- data ---------------------------------------------------------------------------------------------

    @property
    def cursor_node(self) -> Node | None:
        if self.layout_ is None or not self.shown:
            return None
        return self.layout_.rows.node(self.shown[self.cursor])

    def show_tree(
        self, tree: SessionTree, select_id: str | None = None, added: list[Node] | None = None,
        screen_row: int | None = None, height: int = 0,
    ) -> None:
        """Show `tree` (new or grown), keeping the selection by id (or moving it to `select_id`).

        `added`: the entries the last `tree.add` brought; when they only extend the leaf (a live tail), the
        shown layout is updated in place instead of rebuilt. `screen_row`: the row of the view the cursor is
        drawn on (where a kept first screen had it); else the cursor is centred, in `height` rows if the view
        is not laid out yet. Either holds from the first frame: a view not laid out paints before it can scroll."""
        keep = select_id or self.anchor_id or (self.cursor_node.id if self.cursor_node is not None else None)
        if keep is None and tree.leaf is not None:
            keep = tree.leaf.id  # a new view starts at the leaf (or its nearest shown ancestor)
        if tree is not self.stree:
            self._layouts.clear()
            self._compaction_after.clear()
        self.stree = tree
        self._added = added
        self.extended = False
        self._relayout(keep, screen_row, height)
        self._added = None

    def forget_tree(self) -> None:
        """Drop the tree and its layouts (another session is being opened: the old one can be freed)."""
        self.stree, self.layout_ = None, None
        self._layouts.clear()
        self._compaction_after.clear()
        self._cache.clear()
        self.shown, self.matches, self.marks, self.compare_mark = [], array("l"), {}, None
        self.folded.clear()
        self.cursor, self.anchor_id, self._shift_key = 0, None, None
        self.shown_instead = self.leaf = None
        self._last_highlight = None  # the entry pane forgot it too: the same entry in the next tree is shown again
        self.virtual_size = Size(self.size.width, 0)
        self.refresh()

    def set_compare_mark(self, entry_id: str | None) -> None:
        """Show `◆` before the entry marked as one side of a comparison (None: no mark)."""
        if entry_id != self.compare_mark:
            self.compare_mark = entry_id
            self._cache.clear()
            self.refresh()

    def set_marks(self, marks: dict[str, str]) -> None:
        """Mark rows in the gutter (`MARKS`): what the selected compaction summarized and what it kept."""
        if marks == self.marks:
            return
        self.marks = marks
        self._cache.clear()
        self.refresh()

    def _layout_for(self, mode: str, extend: bool = True, pace: Callable[[], None] | None = None) -> Layout:
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
        layout = build_layout(tree, mode, pace=pace)
        self._layouts[mode] = (*key, layout)
        return layout

    def has_layout(self, mode: str) -> bool:
        """Whether the rows under filter `mode` are laid out for the tree as it is (`layout_for` is then free)."""
        tree, cached = self.stree, self._layouts.get(mode)
        leaf = tree.leaf if tree is not None else None
        return cached is not None and tree is not None and cached[:2] == (tree.generation, leaf.idx if leaf else -1)

    def layout_for(self, mode: str) -> Layout:
        """The rows of the tree under filter `mode` (made once per tree state, shown or not)."""
        return self._layout_for(mode, extend=False)

    def prewarm(self, pace: Callable[[], None] | None = None) -> None:
        """Compute the layouts of the other filters (called from a worker after load; `pace` as `build_layout`'s)."""
        if self.stree is None:
            return
        for mode in FILTERS:
            if mode != self.filter_mode:  # the shown one exists, and only the UI thread may change it
                self._layout_for(mode, extend=False, pace=pace).finder()  # what finds rows too, off the key path

    def _relayout(self, keep_id: str | None, screen_row: int | None = None, height: int = 0) -> None:
        if self.stree is None:
            return
        before = self.cursor_node
        self.layout_ = self._layout_for(self.filter_mode)
        self.leaf = self.stree.leaf
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
        if screen_row is None:
            self._scroll_cursor_visible(center=True, height=height)
        else:
            self._scroll(self.cursor - screen_row, self.size.height or height or 1)
        self.refresh()
        self.post_message(self.LayoutChanged())
        self._post_highlight()

    def _nearest_visible(self, entry_id: str) -> int:
        """Pi's findNearestVisibleIndex (`nearest_shown`): the entry's place among the shown rows."""
        assert self.stree is not None and self.layout_ is not None
        return nearest_shown(self.layout_, self.shown, self.stree.get(entry_id))

    def _unfold_to(self, row: int) -> None:
        """Unfold what hides `row`: each folded row whose subtree holds it (rows are in preorder), one check a
        fold, not a walk up its ancestors' rows (a million of them at the end of a long session)."""
        layout = self.layout_
        assert layout is not None
        changed = False
        for entry_id in list(self.folded):
            fold = layout.index_of(entry_id)
            if fold is not None and fold < row < layout.rows.end_of(fold):
                self.folded.discard(entry_id)
                changed = True
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

    def widen_filter(self, anchor_id: str) -> str:
        """Show every entry Pi's tree can show ('all'), the cursor going to `anchor_id`; returns the filter left."""
        old = self.filter_mode
        self.anchor_id = anchor_id
        self.filter_mode = "all"
        return old

    def watch_filter_mode(self, old: str, new: str) -> None:
        node = self.cursor_node
        self._relayout(self.anchor_id or (node.id if node else None))

    # ---- movement ----------------------------------------------------------------------------------------

    def _move_to(self, index: int, show: Node | None = None) -> None:
        """The cursor to `index`; `show`: the entry without a row that the move is for (see `go_to`)."""
        if not self.shown:
            return
        old = self.cursor
        self.cursor = index
        index = self.cursor  # clamped by `validate_cursor`
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

    def _scroll_cursor_visible(self, center: bool = False, height: int = 0) -> None:
        """`height`: the view's, if it is not laid out yet."""
        height = self.size.height or height or 1
        top = int(self.scroll_offset.y)
        if center and not (top <= self.cursor < top + height):
            self._scroll(self.cursor - height // 2, height)
        elif self.cursor < top:
            self._scroll(self.cursor, height)
        elif self.cursor >= top + height:
            self._scroll(self.cursor - height + 1, height)

    def _scroll(self, top: int, height: int) -> None:
        # Forced: a view not laid out yet ignores a scroll (its scrollbars are not known) and paints its top rows.
        # Clamped as Textual clamps it once the view has its height.
        top = max(0, min(top, len(self.shown) - height))
        self.scroll_to(y=top, animate=False, immediate=True, force=True)

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

    # ---- search matches, kept in step with the rows --------------------------------------------------------

    def _recompute_matches(self) -> None:
        """Find the search's rows in the layout now shown (`TreeNav` does: a big tree's search runs in a thread)."""
        self.matches = array("l")

    def _is_match(self, row: int) -> bool:
        matches = self.matches
        i = bisect.bisect_left(matches, row)
        return i < len(matches) and matches[i] == row
