"""`TreePreview`: a big session's kept first screen (`pitree.store.first_screen`), drawn while its tree is read;
on a first open, its leaf's branch read from the end of the file (`branch_screen`).

It draws the kept rows around the leaf as `TreeView` would draw them on opening the session (the same guides,
styles, marker and columns; the age column from the clock now), with the cursor on the leaf's row. The cursor
moves over the kept rows; when the tree is read, the explorer puts the real view's cursor on the same entry.
`screen_of` makes what is kept, from a `TreeView` showing the whole session.
"""

from __future__ import annotations

from pitree.session.layout import build_layout
from pitree.session.text import make_safe
from pitree.store.first_screen import AROUND, FirstScreen, ScreenRow
from pitree.store.leaf_branch import LeafBranch
from pitree.widgets.tree_base import Columns, cut_prefix, shift_for
from pitree.widgets.tree_draw import (
    body_class,
    column_figures,
    columns_text,
    compaction_row,
    finish_row,
    hidden_leaf_marker,
)
from pitree.widgets.tree_view import TreeView
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


def screen_of(view: TreeView, status: dict[str, object]) -> FirstScreen | None:
    """The first screen of `view`'s session as opening it shows it: the default filter, nothing folded, the cursor
    on the leaf (or the row nearest it), the rows within AROUND of that one; `status`: the status bar's counts."""
    tree = view.stree
    if tree is None or tree.leaf is None:
        return None
    layout = view.layout_for("default")
    node, leaf_row = tree.leaf, None
    while node is not None and leaf_row is None:
        leaf_row = layout.row_of(node)
        node = node.parent
    if leaf_row is None:
        return None
    first, last = max(0, leaf_row - AROUND), min(len(layout.rows), leaf_row + AROUND + 1)
    rows = []
    for i in range(first, last):
        entry = layout.rows.node(i)
        prefix = layout.prefix(i)
        parts = view.row_parts(layout, i, False, bool(prefix), compare=False)
        model, tokens, ts = column_figures(entry)
        marker = view.leaf_marker(i, layout)
        rows.append(ScreenRow(entry.id, prefix, tuple(parts), marker, entry in layout.active, model, tokens, ts))
    return FirstScreen(tuple(rows), leaf_row - first, first, len(layout.rows), status)


def branch_screen(branch: LeafBranch) -> FirstScreen | None:
    """What a cold open shows while the tree is read: the rows the default filter gives the leaf's branch as read
    from the end of the file (`store.leaf_branch`), each as the tree view draws it, but without guides (where the
    path sits among the other branches is not known yet) and with a compaction's size after it as `…`."""
    tree = branch.tree
    leaf = tree.leaf
    layout = build_layout(tree, "default")
    if leaf is None or not layout.rows:
        return None
    rows = []
    for node in layout.rows.iter_nodes():
        parts = [("• ", "tree-view--dot")]
        label = tree.labels.get(node.id)
        if label:
            parts.append((make_safe(f"[{label}] ", keep_newlines=False), "tree-view--label"))
        body = compaction_row(node, None) if node.type == "compaction" else tree.row_text(node)
        parts.append((make_safe(body, keep_newlines=False), body_class(node)))
        rows.append(ScreenRow(node.id, "", tuple(parts), "", True, *column_figures(node)))
    # the leaf's row is the last; a leaf the filter hides is named on the last row shown, its nearest ancestor
    marker = "  ← leaf" if layout.row_of(leaf) is not None else hidden_leaf_marker(tree, leaf)
    last = rows[-1]
    rows[-1] = ScreenRow(last.id, last.prefix, last.parts, marker, True, last.model, last.tokens, last.ts)
    above = 0 if branch.complete else len(rows)  # rows above these in the tree: some when the path goes on
    return FirstScreen(tuple(rows), len(rows) - 1, above, above + len(rows), {})


class TreePreview(ScrollView):
    """The kept rows of a session's first screen; `show(screen)` to draw them, `cursor_id` for where the user is."""

    can_focus = True
    filter_mode = "default"  # what a session opens with, and so what is kept
    COMPONENT_CLASSES = TreeView.COMPONENT_CLASSES
    DEFAULT_CSS = TreeView.DEFAULT_CSS.replace("TreeView", "TreePreview")
    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.screen_: FirstScreen | None = None
        self.cursor = 0
        self.columns = Columns()  # the columns a newly opened session shows
        self._shift = 0
        self._centred = False  # False until `_center` has scrolled: the rows are drawn centred meanwhile

    def show(self, screen: FirstScreen) -> None:
        self.screen_ = screen
        self.cursor = screen.leaf_row
        self._shift = 0
        self._centred = False
        self.virtual_size = Size(self.size.width, len(screen.rows))
        self.call_after_refresh(self._center)
        self.refresh()

    @property
    def cursor_id(self) -> str | None:
        return self.screen_.rows[self.cursor].id if self.screen_ is not None else None

    @property
    def cursor_row(self) -> int:
        """The row of the widget the cursor is drawn on."""
        return self.cursor - self._top()

    def _top(self) -> int:
        """The first row drawn: the scroll offset, or the centred one before `_center` scrolled there (a widget
        shown before it was laid out paints its first frame before it can scroll)."""
        return int(self.scroll_offset.y) if self._centred else self._centred_top()

    def _centred_top(self) -> int:
        """Where `TreeView` puts a new session's cursor: mid-screen, unless it is on the first screenful (and
        no further down than the last row allows, as a scroll is clamped)."""
        if self.screen_ is None:
            return 0
        height = self.size.height or 1
        top = 0 if self.screen_.first + self.cursor < height else max(0, self.cursor - height // 2)
        return max(0, min(top, len(self.screen_.rows) - height))

    def _center(self) -> None:
        if self.screen_ is None:
            return
        self.scroll_to(y=self._centred_top(), animate=False, immediate=True, force=True)
        self._centred = True

    def action_move(self, step: int) -> None:
        if self.screen_ is None:
            return
        if not self._centred:
            self._center()
        self.cursor = max(0, min(len(self.screen_.rows) - 1, self.cursor + step))
        top, height = int(self.scroll_offset.y), self.size.height or 1
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)
        self.refresh()

    def action_page(self, step: int) -> None:
        self.action_move(step * max(1, self.size.height - 1))

    def on_resize(self, event: events.Resize) -> None:
        if self.screen_ is not None:
            self.virtual_size = Size(self.scrollable_content_region.width, len(self.screen_.rows))
            self._center()

    def render_line(self, y: int) -> Strip:
        index = self._top() + y
        width = self.scrollable_content_region.width
        screen = self.screen_
        if screen is None or not 0 <= index < len(screen.rows) or width <= 0:
            return Strip.blank(width, self.rich_style)
        self._shift = shift_for(len(screen.rows[self.cursor].prefix), width, self._shift)
        return self._render_row(screen.rows[index], width, index == self.cursor)

    def _render_row(self, row: ScreenRow, width: int, is_cursor: bool) -> Strip:
        get = self.get_component_rich_style
        text = Text(no_wrap=True, end="")
        text.append("›" if is_cursor else " ", get("tree-view--dot"))
        text.append(" ")
        prefix = make_safe(cut_prefix(row.prefix, self._shift, TreeView.prefix_room(width)), keep_newlines=False)
        text.append(prefix, get("tree-view--guides"))
        # Made safe when kept, and again here: the cache folder is not trusted more than the session was.
        for part, style in row.parts:
            text.append(make_safe(part, keep_newlines=False), get(style) if style in self.COMPONENT_CLASSES else None)
        columns = columns_text(self.columns, row.model, row.tokens, row.ts)
        marker = make_safe(row.marker, keep_newlines=False)
        return finish_row(self, text, columns, marker, width, is_cursor, row.active)

