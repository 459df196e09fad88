"""`TreeView`: the session tree, drawn with Textual's line API (only the lines on screen are rendered).

The rows come from `pitree.session.layout` (Pi's /tree layout); this widget adds the cursor, folds,
the highlighted active path, `← leaf`, inline labels, relative times and model/token columns, and
search highlighting. Textual's stock `Tree` is not used: it recurses per level and rebuilds on each add.
Its state is `TreeBase` (`tree_base.py`); finding rows is `TreeNav`, drawing them `TreeDraw`.
"""

from __future__ import annotations

from pitree.session.layout import FILTERS
from pitree.widgets.tree_base import Columns
from pitree.widgets.tree_draw import TreeDraw, relative_time, short_tokens
from pitree.widgets.tree_nav import TreeNav
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.strip import Strip

__all__ = ["Columns", "TreeView", "relative_time", "short_tokens"]


class TreeView(TreeDraw, TreeNav):
    """The session tree. Set it up with `show_tree`; it posts `Highlighted`, `Chosen` and `LayoutChanged`."""

    can_focus = True

    COMPONENT_CLASSES = {
        "tree-view--cursor",
        "tree-view--active",
        "tree-view--guides",
        "tree-view--dot",
        "tree-view--label",
        "tree-view--compare",
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
    TreeView > .tree-view--compare { color: $accent; text-style: bold; }
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

    # ---- keys -------------------------------------------------------------------------------------------

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
        key = (row_index, width, is_cursor)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_row(row_index, width, is_cursor)
            self._cache.set(key, strip)
        return strip
