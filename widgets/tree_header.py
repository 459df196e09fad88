"""`TreeHeader`: the line above the session tree — the filter shown, what the tokens column counts, and the name
of each column over it (`model`, `reply`, `age`), so an assistant row's `30.5k` is not read as the context."""

from __future__ import annotations

from pitree.widgets.tree_draw import header_text
from pitree.widgets.tree_preview import TreePreview
from pitree.widgets.tree_view import TreeView
from rich.text import Text
from textual.widget import Widget


class TreeHeader(Widget):
    """Draws `header_text` for the tree view (or the kept first screen's `TreePreview`) beside it; the app
    refreshes it when the view's layout or columns change."""

    DEFAULT_CSS = """
    TreeHeader { height: 1; background: $panel; color: $text-muted; }
    """

    def render(self) -> Text:
        views = self.parent.query(TreeView) if self.parent is not None else None
        if not views and self.parent is not None:
            views = self.parent.query(TreePreview)
        width = self.content_region.width
        if not views:
            return Text(" " * width)
        view = views.first()
        # The columns sit at the right of the rows, left of the view's scrollbar.
        inner = min(width, view.scrollable_content_region.width or width)
        text = header_text(view.columns, inner, view.filter_mode)
        text.pad_right(width - text.cell_len)
        return text
