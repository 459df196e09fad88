"""The sessions browser's table (`RowsTable`): cells made only for the rows drawn, the cursor's keys and clicks, where
the cursor stays when the rows are listed again, and cells cut to their columns without reading markup."""

from __future__ import annotations

from typing import Any

from pitree.widgets.screens.rows_table import RowsTable
from rich.text import Text
from textual.app import App, ComposeResult

COLUMNS = [("name", 12), ("n", 6)]


class TableApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, int, Any]] = []
        self.made: list[Any] = []  # the rows whose cells were asked for

    def compose(self) -> ComposeResult:
        yield RowsTable()

    def cells(self, row: Any) -> list[str | Text]:
        self.made.append(row)
        return [f"row {row}", Text(str(row), justify="right")]

    def on_rows_table_highlighted(self, event: RowsTable.Highlighted) -> None:
        self.events.append(("highlighted", event.row, event.item))

    def on_rows_table_selected(self, event: RowsTable.Selected) -> None:
        self.events.append(("selected", event.row, event.item))


def line(table: RowsTable, y: int) -> str:
    return "".join(segment.text for segment in table.render_line(y))


async def test_a_long_list_makes_cells_only_for_the_rows_on_screen() -> None:
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(RowsTable)
        table.show(COLUMNS, range(100_000), app.cells)
        table.focus()
        await pilot.pause()
        assert table.row_count == 100_000 and len(app.made) <= 12
        assert line(table, 0).startswith(" name ") and line(table, 1).startswith(" row 0 ")
        app.made.clear()
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == 99_999 and 0 < len(app.made) <= 12 and 99_999 in app.made


async def test_keys_move_the_cursor_and_enter_selects_the_row_under_it() -> None:
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(RowsTable)
        table.show(COLUMNS, list("abcdefghijklmnopqrstuvwxyz"), app.cells)
        table.focus()
        await pilot.pause()
        assert app.events == [("highlighted", 0, "a")]
        page = table.scrollable_content_region.height - 2  # the rows on screen (less the header) but one
        moves = {"down": 1, "j": 2, "k": 1, "up": 0, "pagedown": page, "pageup": 0, "end": 25, "home": 0}
        for key, row in moves.items():
            await pilot.press(key)
            assert table.cursor_row == row, key
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.events[-1] == ("selected", 1, "b")
        await pilot.press("up", "up")  # at the first row: nothing more to post
        await pilot.pause()
        assert app.events[-1] == ("highlighted", 0, "a")


async def test_a_click_moves_the_cursor_and_a_second_one_selects() -> None:
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(RowsTable)
        table.show(COLUMNS, list("abcdef"), app.cells)
        await pilot.pause()
        await pilot.click(RowsTable, offset=(3, 0))  # the header
        assert table.cursor_row == 0 and app.events == [("highlighted", 0, "a")]
        await pilot.click(RowsTable, offset=(3, 3))
        await pilot.pause()
        assert table.cursor_row == 2 and app.events[-1] == ("highlighted", 2, "c")
        await pilot.click(RowsTable, offset=(3, 3))
        await pilot.pause()
        assert app.events[-1] == ("selected", 2, "c")


async def test_listed_again_the_cursor_keeps_its_place_on_screen_unless_the_list_is_at_its_top() -> None:
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(RowsTable)
        table.show(COLUMNS, list(range(100)), app.cells)
        table.focus()
        await pilot.press("down", "down")
        table.show(COLUMNS, [-1, *range(100)], app.cells, cursor=3)  # a row arrives above, at the top
        await pilot.pause()
        assert table.scroll_offset.y == 0 and "row -1" in line(table, 1) and "row 2" in line(table, 4)

        await pilot.press("pagedown", "pagedown", "up", "up", "up")  # scrolled, the cursor mid-screen
        row, top = table.cursor_row, table.scroll_offset.y
        assert top > 0 and table.cursor_row - top < table.scrollable_content_region.height - 4
        table.show(COLUMNS, [-3, -2, -1, *range(100)], app.cells, cursor=row + 2)  # two more arrive above
        await pilot.pause()
        assert table.cursor_row == row + 2 and table.scroll_offset.y == top + 2
        assert line(table, row - top + 1) == line(table, table.cursor_row - table.scroll_offset.y + 1)


async def test_cells_are_cut_to_their_columns_and_never_read_as_markup() -> None:
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(RowsTable)
        rows = [("[b]x[/b]", 7), ("a title far too long for its column", 12345)]
        table.show(COLUMNS, rows, lambda row: [row[0], Text(f"{row[1]:,}", justify="right")])
        await pilot.pause()
        assert line(table, 1).startswith(" [b]x[/b]     ")
        assert line(table, 1)[14:22] == "      7 "
        assert line(table, 2).startswith(" a title far… ") and line(table, 2)[14:22] == " 12,345 "
        assert table.get_row_at(1)[0] == "a title far too long for its column"


async def test_listed_before_it_has_a_size_the_cursor_shows_once_it_has_one() -> None:
    """The browser lists its rows on mount, before layout (coming back from a session, the cursor on row 60)."""

    class EarlyApp(TableApp):
        def on_mount(self) -> None:
            table = self.query_one(RowsTable)
            assert table.size.height == 0
            table.show(COLUMNS, list(range(100)), self.cells, cursor=60)

    app = EarlyApp()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(RowsTable)
        top, rows = table.scroll_offset.y, table.scrollable_content_region.height - 1
        assert table.cursor_row == 60 and top < 60 < top + rows - 1  # on screen, not at an edge
        assert "row 60" in line(table, 60 - top + 1)
