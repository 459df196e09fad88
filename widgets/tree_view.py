"""`TreeView`: the session tree, drawn with Textual's line API (only the lines on screen are rendered).

The rows come from `pitree.session.layout` (Pi's /tree layout); this widget adds the cursor, folds,
the highlighted active path, `← leaf`, inline labels, relative times and model/token columns, and
search highlighting. Textual's stock `Tree` is not used: it recurses per level and rebuilds on each add.
"""

from __future__ import annotations

import bisect
import math
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from pitree.session.entries import IS_ERROR, Node
from pitree.session.layout import FILTERS, Layout, build_layout, extend_layout, tokens_of, visible_indices
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


def relative_time(ms: float, now: float | None = None) -> str:
    """`12s`, `5m`, `3h`, `4d`, `2mo`, `1y` ago; `?` without a timestamp."""
    if ms != ms or math.isinf(ms):
        return "?"
    seconds = (now if now is not None else time.time()) - ms / 1000
    if seconds < 0:
        return "now"
    for unit, size in (("y", 31536000), ("mo", 2592000), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def short_tokens(n: float) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(int(n))


@dataclass
class Columns:
    time: bool = True
    model: bool = False
    tokens: bool = True


class TreeView(ScrollView, can_focus=True):
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
        """Posted when the cursor moves to another entry."""

        def __init__(self, node: Node | None) -> None:
            self.node = node
            super().__init__()

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, TreeView.Highlighted)

    class Chosen(Message):
        """Posted when the user presses Enter on an entry (to move the leaf there)."""

        def __init__(self, node: Node) -> None:
            self.node = node
            super().__init__()

    class LayoutChanged(Message):
        """Posted when the visible rows changed (filter, fold, new entries)."""

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
        self.columns = Columns()
        self.search_tokens: list[str] = []
        self.matches: array[int] = array("l")  # row indices (into layout.rows) that match the search, in order
        self._compaction_after: dict[str, int] = {}
        self._cache: dict[int, tuple[int, bool, Strip]] = {}
        self._last_highlight: str | None = None
        self._added: list[Node] | None = None  # set by show_tree for _layout_for
        self.extended = False  # the last show_tree updated the layout in place: the leaf only grew
        self.marks: dict[str, str] = {}  # entry id -> "summarized" | "kept" (a selected compaction's audit)

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
        keep = select_id or (self.cursor_node.id if self.cursor_node is not None else None)
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
        self.cursor = 0
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
        self.layout_ = self._layout_for(self.filter_mode)
        self.shown = visible_indices(self.layout_, self.folded)
        self._cache.clear()
        self._recompute_matches()
        self.virtual_size = Size(self.size.width, len(self.shown))
        self.cursor = self._nearest_visible(keep_id) if keep_id else max(0, len(self.shown) - 1)
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

    def select_id(self, entry_id: str) -> bool:
        """Move the cursor to an entry, unfolding and, if the filter hides it, switching to 'all'."""
        if self.stree is None or self.layout_ is None:
            return False
        node = self.stree.get(entry_id)
        if node is None:
            return False
        row = self.layout_.index_of(entry_id)
        if row is None and self.filter_mode != "all":
            self.filter_mode = "all"
            row = self.layout_.index_of(entry_id) if self.layout_ else None
        if row is None:
            return False
        self._unfold_to(row)
        self._move_to(self.shown.index(row))
        return True

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
        self.refresh()
        self.post_message(self.LayoutChanged())

    def watch_filter_mode(self, old: str, new: str) -> None:
        node = self.cursor_node
        self._relayout(node.id if node else None)

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

    # ---- movement ----------------------------------------------------------------------------------------

    def _move_to(self, index: int) -> None:
        if not self.shown:
            return
        index = max(0, min(index, len(self.shown) - 1))
        old = self.cursor
        self.cursor = index
        self._cache.pop(self.shown[old], None) if old < len(self.shown) else None
        self._cache.pop(self.shown[index], None)
        self.refresh_line_at(old)
        self.refresh_line_at(index)
        self._scroll_cursor_visible()
        self._post_highlight()

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

    def _post_highlight(self) -> None:
        node = self.cursor_node
        ident = node.id if node else None
        if ident != self._last_highlight:
            self._last_highlight = ident
            self.post_message(self.Highlighted(node))

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

    def _compaction_text(self, node: Node) -> str:
        """`[compaction: 48k → 9k tokens]`: before (Pi's tokensBefore) and after (summary + kept, estimated)."""
        after = self._compaction_after.get(node.id)
        if after is None and self.stree is not None:
            from pitree.report import compaction_audit

            after = compaction_audit(self.stree, node, None)["tokensAfter"]["estimate"]
            self._compaction_after[node.id] = after
        before = node.meta.get("tokensBefore") if node.meta else None
        before_s = short_tokens(before) if isinstance(before, int | float) and not isinstance(before, bool) else "?"
        return f"[compaction: {before_s} → {short_tokens(after or 0)} tokens]"

    def row_text(self, row_index: int, is_cursor: bool = False, max_prefix: int | None = None) -> Text:
        """The row as Rich text (without columns); also used by tests and snapshot-free assertions."""
        assert self.layout_ is not None and self.stree is not None
        layout, tree = self.layout_, self.stree
        row = layout.rows[row_index]
        node = row.node
        get = self.get_component_rich_style
        text = Text(no_wrap=True, end="")
        mark = self.marks.get(node.id) if self.marks else None
        text.append("›" if is_cursor else " ", get("tree-view--dot"))
        if mark is None:
            text.append(" ")
        else:
            text.append(self.MARKS[mark], get(f"tree-view--{mark}"))
        folded = node.id in self.folded and row.nchildren > 0
        prefix = layout.prefix(row_index, folded)
        if max_prefix is not None and len(prefix) > max_prefix:
            # Deeply nested forks would push the text off screen: keep the innermost levels, mark the cut.
            prefix = "…" + prefix[len(prefix) - max_prefix + 1 :]
        text.append(prefix, get("tree-view--guides"))
        if folded and not (row.connector and not row.vroot and prefix):
            text.append("⊞ ", get("tree-view--dot"))
        on_path = node in layout.active
        if on_path:
            text.append("• ", get("tree-view--dot"))
        label = tree.labels.get(node.id)
        if label:
            text.append(make_safe(f"[{label}] ", keep_newlines=False), get("tree-view--label"))
        body = tree.row_text(node) if node.type != "compaction" else self._compaction_text(node)
        style = self._body_style(node)
        start = len(text)
        text.append(make_safe(body, keep_newlines=False), style)
        if self._is_match(row_index):
            lower = text.plain.lower()
            for token in self.search_tokens:
                pos = lower.find(token, start)
                while pos >= 0:
                    text.stylize(get("tree-view--match"), pos, pos + len(token))
                    pos = lower.find(token, pos + len(token))
        if node is tree.leaf:
            text.append("  ← leaf", get("tree-view--leaf"))
        return text

    def _body_style(self, node: Node) -> Style:
        get = self.get_component_rich_style
        if node.flags & IS_ERROR:
            return get("tree-view--error")
        if node.type == "message":
            if node.role == "user":
                return get("tree-view--user")
            if node.role == "assistant":
                return get("tree-view--assistant")
            return get("tree-view--tool")
        if node.type in ("compaction", "branch_summary"):
            return get("tree-view--summary")
        return get("tree-view--settings")

    def _columns_text(self, node: Node) -> str:
        parts = []
        cols = self.columns
        if cols.model:
            model = node.model[1] if node.model else None
            parts.append(f"{make_safe(str(model), keep_newlines=False)[:18]:>18}" if model else " " * 18)
        if cols.tokens:
            usage = node.usage
            total = 0.0
            if usage is not None:
                total = usage[4] or (usage[0] + usage[1] + usage[2] + usage[3])
            parts.append(f"{short_tokens(total):>6}" if usage is not None else " " * 6)
        if cols.time:
            parts.append(f"{relative_time(node.ts):>4}")
        return " ".join(parts)

    def leaf_row_node(self) -> Node | None:
        """The node drawn for the leaf: the leaf itself, or its nearest shown ancestor if filtered out."""
        if self.stree is None or self.stree.leaf is None or not self.shown or self.layout_ is None:
            return None
        return self.layout_.rows.nodes[self.shown[self._nearest_visible(self.stree.leaf.id)]]

    def _render_row(self, row_index: int, width: int, is_cursor: bool) -> Strip:
        assert self.layout_ is not None
        node = self.layout_.rows.nodes[row_index]
        text = self.row_text(row_index, is_cursor, max_prefix=max(12, width // 2))
        columns = self._columns_text(node)
        room = width - (len(columns) + 1 if columns else 0)
        if room < 20:
            columns, room = "", width
        if text.cell_len > room:
            text.truncate(room, overflow="ellipsis")
        else:
            text.pad_right(room - text.cell_len)
        if columns:
            text.append(" " + columns, self.get_component_rich_style("tree-view--column"))
        base = self.rich_style
        if is_cursor:
            base = base + self.get_component_rich_style("tree-view--cursor")
        elif node in self.layout_.active:
            base = base + self.get_component_rich_style("tree-view--active")
        segments = [Segment(s.text, base + s.style if s.style else base) for s in text.render(self.app.console)]
        return Strip(segments).crop_extend(0, width, base)
