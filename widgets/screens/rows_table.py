"""`RowsTable`: the sessions browser's table, drawn line by line. It holds the rows as given (sessions, search hits)
and turns a row into cells only when it is on screen, so listing thousands again while the index fills costs
what sorting them does. `DataTable` makes every cell of every row when it is added and has no insert, so each
listing that moved a row re-added the whole list (seconds of the UI's time over a cold index, taken from the
indexing child on two cores).

Columns have set widths (`browser_columns` fits them to the terminal). The cursor is a row: ↑/↓ (j/k), PgUp/PgDn,
Home/End move it and post `Highlighted`; Enter, or a click on the cursor's row, posts `Selected`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

Cell = str | Text
PADDING = 1  # blank columns each side of a cell
CACHED_ROWS = 200  # drawn rows kept: a few screens' worth


def _cell_text(cell: Cell, width: int) -> Text:
    """`cell` cut or padded to `width` columns (right-aligned when its `justify` says so), one line."""
    text = cell.copy() if isinstance(cell, Text) else Text(cell)
    length = text.cell_len
    if length > width:
        text.truncate(width, overflow="ellipsis")
    elif length < width:
        if text.justify == "right":
            text = Text(" " * (width - length)) + text
        else:
            text.pad_right(width - length)
    return text


class RowsTable(ScrollView, can_focus=True):
    """Rows of cells under a header; see the module docstring."""

    DEFAULT_CSS = """
    RowsTable { background: $surface; color: $foreground; }
    RowsTable:focus { background-tint: $foreground 5%; }
    RowsTable > .rows-table--header { text-style: bold; background: $panel; color: $foreground; }
    RowsTable > .rows-table--even-row { background: $surface-lighten-1 50%; }
    RowsTable:dark > .rows-table--even-row { background: $surface-darken-1 40%; }
    RowsTable > .rows-table--cursor {
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
        text-style: $block-cursor-blurred-text-style;
    }
    RowsTable:focus > .rows-table--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"rows-table--header", "rows-table--even-row", "rows-table--cursor"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_to(0)", "First", show=False),
        Binding("end", "cursor_to(-1)", "Last", show=False),
        Binding("enter", "select", "Open", show=False),
    ]

    class Highlighted(Message):
        """The cursor is on another row: `row`, its position in the rows given, and `item`, the row itself (the
        rows may be listed again before this is handled)."""

        def __init__(self, table: RowsTable, row: int, item: Any) -> None:
            self.table, self.row, self.item = table, row, item
            super().__init__()

    class Selected(Message):
        """Enter, or a click on the cursor's row: `row` and `item` as `Highlighted`'s."""

        def __init__(self, table: RowsTable, row: int, item: Any) -> None:
            self.table, self.row, self.item = table, row, item
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns: list[tuple[str, int]] = []
        self.rows: Sequence[Any] = ()
        self._cells: Callable[[Any], Sequence[Cell]] = lambda row: ()
        self.cursor_row = 0
        self._lines: LRUCache[tuple[int, bool], Strip] = LRUCache(CACHED_ROWS)
        self._header: Strip | None = None
        self._center_when_sized = False  # listed before it had a size (a screen coming back): centre the cursor

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def show(
        self,
        columns: Sequence[tuple[str, int]],
        rows: Sequence[Any],
        cells: Callable[[Any], Sequence[Cell]],
        cursor: int = 0,
    ) -> None:
        """List `rows` (`cells(row)` gives a row's cells in column order, when it is drawn) with the cursor on row
        `cursor`. A table at its top stays there (a row that arrives first is seen); scrolled, the cursor keeps
        its place on screen when it can, so rows that arrive above do not move the one the user is on; listed
        before it has a size (a screen coming back), the cursor's row is centred once it has one."""
        top = self.scroll_offset.y
        on_screen = self.cursor_row - top
        self.columns, self.rows, self._cells = list(columns), rows, cells
        self._lines.clear()
        self._header = None
        width = sum(w + 2 * PADDING for _, w in self.columns)
        self.virtual_size = Size(width, len(rows) + 1)  # + the header
        self.cursor_row = max(0, min(cursor, len(rows) - 1))
        self.scroll_to(y=max(0, self.cursor_row - on_screen) if top else 0, animate=False, immediate=True)
        self._center_when_sized = not self.size.height
        self._into_view()
        self.refresh()
        if rows:
            self.post_message(self.Highlighted(self, self.cursor_row, rows[self.cursor_row]))

    def get_row_at(self, row: int) -> list[Cell]:
        """The cells of row `row` (as they are drawn, before they are cut to their columns)."""
        return list(self._cells(self.rows[row]))

    def move_cursor(self, row: int) -> None:
        if not self.rows:
            return
        row = max(0, min(row, len(self.rows) - 1))
        if row != self.cursor_row:
            old, self.cursor_row = self.cursor_row, row
            self._refresh_row(old)
            self._refresh_row(row)
            self.post_message(self.Highlighted(self, row, self.rows[row]))
        self._into_view()

    @property
    def _rows_on_screen(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)  # less the header

    def _into_view(self) -> None:
        top, rows = self.scroll_offset.y, self._rows_on_screen
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + rows:
            self.scroll_to(y=self.cursor_row - rows + 1, animate=False, immediate=True)

    def on_resize(self) -> None:
        if self._center_when_sized and self.size.height:
            self._center_when_sized = False
            self.scroll_to(y=max(0, self.cursor_row - self._rows_on_screen // 2), animate=False, immediate=True)
        self._into_view()

    def _refresh_row(self, row: int) -> None:
        self.refresh_line(row + 1)  # in the rows' own coordinates: the header is line 0

    def action_cursor(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step)

    def action_page(self, direction: int) -> None:
        self.move_cursor(self.cursor_row + direction * max(1, self._rows_on_screen - 1))  # one row stays in sight

    def action_cursor_to(self, row: int) -> None:
        self.move_cursor(row if row >= 0 else len(self.rows) - 1)

    def action_select(self) -> None:
        if self.rows:
            self.post_message(self.Selected(self, self.cursor_row, self.rows[self.cursor_row]))

    def on_click(self, event: events.Click) -> None:
        row = self.scroll_offset.y + event.y - 1
        if event.y < 1 or not 0 <= row < len(self.rows):
            return
        event.stop()
        if row == self.cursor_row:
            self.post_message(self.Selected(self, row, self.rows[row]))
        else:
            self.move_cursor(row)

    def on_focus(self) -> None:
        self._lines.clear()  # the cursor's colours change with focus
        self.refresh()

    def on_blur(self) -> None:
        self.on_focus()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()
        self._header = None

    # ---- drawing ----------------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        if y == 0:
            strip = self._header_strip()
        else:
            row = scroll_y + y - 1
            if row >= len(self.rows):
                return Strip.blank(width, self.rich_style)
            key = (row, row == self.cursor_row)
            cached = self._lines.get(key)
            if cached is None:
                cached = self._lines[key] = self._row_strip(row)
            strip = cached
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)

    def _line(self, cells: Sequence[Cell], style: Style) -> Strip:
        line = Text(no_wrap=True, end="")
        pad = " " * PADDING
        for (_, width), cell in zip(self.columns, cells, strict=True):
            line.append(pad)
            line.append_text(_cell_text(cell, width))
            line.append(pad)
        segments = list(line.render(self.app.console, end=""))
        return Strip(Segment.apply_style(segments, self.rich_style + style))

    def _header_strip(self) -> Strip:
        if self._header is None:
            style = self.get_component_rich_style("rows-table--header")
            self._header = self._line([name for name, _ in self.columns], style)
        return self._header

    def _row_strip(self, row: int) -> Strip:
        if row == self.cursor_row:
            style = self.get_component_rich_style("rows-table--cursor")
        elif row % 2:
            style = self.get_component_rich_style("rows-table--even-row")
        else:
            style = Style()
        return self._line(self._cells(self.rows[row]), style)
