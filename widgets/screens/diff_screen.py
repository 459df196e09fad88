"""`DiffScreen`: two branches side by side (key `d`, or `pitree diff` in the terminal), lined up by turn.

One table of three columns (what, A, B): the figures first, then a row per turn, so the two sides always scroll
together. The comparison (`ops.diff.compare`) runs in a thread worker. Enter on a cell closes the screen on the
entry that cell stands for (the app selects it in the tree): the A column's entry, or the B column's; Escape
closes it where it was; `e` writes it as Markdown to the home folder (after a yes).
"""

from __future__ import annotations

from pathlib import Path

from pitree.cli.diff_text import cell_text, heading
from pitree.ops.diff import BranchDiff, compare
from pitree.ops.diff_markdown import diff_markdown
from pitree.ops.diff_rows import Row, rows
from pitree.session.entries import Node
from pitree.session.text import make_safe, name_safe
from pitree.session.tree import SessionTree
from pitree.store.export_file import ExportFileError, write_export
from pitree.store.session_file import EntryReader, SessionFileError
from pitree.widgets.screens.table_keys import TABLE_KEYS
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

LABEL_WIDTH = 12
ROW_BATCH = 200  # table rows added per turn of the event loop


class DiffTable(DataTable[Text]):
    """The comparison: a cell table, so left/right chooses the side that Enter goes to."""

    BINDINGS = TABLE_KEYS


class DiffScreen(Screen[str | None]):
    """The comparison of the branches ending at `a` and `b`; dismisses with the entry id to select, or None."""

    DEFAULT_CSS = """
    DiffScreen { layout: vertical; }
    DiffScreen #diff-head {
        height: auto; max-height: 8; padding: 0 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis;
    }
    DiffScreen DiffTable { height: 1fr; }
    """
    BINDINGS = [
        Binding("escape,q", "close", "Back"),
        Binding("enter", "select_entry", "Go to entry"),
        Binding("e", "export", "Markdown"),
    ]

    class Compared(Message):
        """Posted by the worker when the comparison is ready."""

        def __init__(self, diff: BranchDiff, table_rows: list[Row], cells: list[tuple[Text, Text, Text]]) -> None:
            self.diff, self.table_rows, self.cells = diff, table_rows, cells
            super().__init__()

    class Failed(Message):
        """Posted by the worker when the entries could not be re-read."""

        def __init__(self, error: str) -> None:
            self.error = error
            super().__init__()

    def __init__(self, tree: SessionTree, reader: EntryReader, a: Node, b: Node) -> None:
        super().__init__()
        self.stree, self.reader, self.a, self.b = tree, reader, a, b
        self.diff: BranchDiff | None = None
        self.table_rows: list[Row] = []
        self.cells: list[tuple[Text, Text, Text]] = []  # each row's label and sides, made in the worker
        self._width = 0
        self._filling = 0  # counts fills: a fill in progress stops when a newer one starts (a resize)

    def compose(self) -> ComposeResult:
        shown = (
            f"comparing {make_safe(self.a.id, keep_newlines=False)} with {make_safe(self.b.id, keep_newlines=False)} …"
        )
        yield Static(Text(shown), id="diff-head")
        yield DiffTable(cursor_type="cell", zebra_stripes=True, id="diff-table")
        yield Footer()

    def on_mount(self) -> None:
        self.run_compare()

    @work(thread=True, group="diff", description="Comparing", exit_on_error=False)
    def run_compare(self) -> None:
        try:
            diff = compare(self.stree, self.a, self.b, self.reader.entries)
        except SessionFileError as exc:
            self.post_message(self.Failed(str(exc)))
            return
        table_rows = rows(diff)
        cells = [(Text(row.label, style="bold"), cell_text(row.a), cell_text(row.b)) for row in table_rows]
        self.post_message(self.Compared(diff, table_rows, cells))

    @on(Compared)
    def _compared(self, message: Compared) -> None:
        self.diff, self.table_rows, self.cells = message.diff, message.table_rows, message.cells
        self.query_one("#diff-head", Static).update(heading(message.diff))
        self._fill()

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        self.query_one("#diff-head", Static).update(Text(make_safe(message.error), style="red"))

    def on_resize(self) -> None:
        if self.diff is not None and self.size.width != self._width:
            self._fill()

    def _fill(self) -> None:
        """The table at the screen's width: the two sides share what the label column leaves."""
        table = self.query_one(DiffTable)
        self._width = self.size.width
        side = max(16, (self._width - LABEL_WIDTH - 8) // 2)
        where = table.cursor_coordinate
        table.clear(columns=True)
        table.add_column("", width=LABEL_WIDTH, key="label")
        table.add_column(Text("A " + make_safe(self.a.id, keep_newlines=False)), width=side, key="a")
        table.add_column(Text("B " + make_safe(self.b.id, keep_newlines=False)), width=side, key="b")
        self._filling += 1
        self._add_rows(self._filling, 0, where)
        table.focus()

    def _add_rows(self, fill: int, start: int, where: Coordinate) -> None:
        """ROW_BATCH rows, then the next after a refresh: thousands of turns never hold the screen."""
        if fill != self._filling:
            return  # a newer fill (the screen was resized) started over
        table = self.query_one(DiffTable)
        stop = min(len(self.cells), start + ROW_BATCH)
        for i in range(start, stop):
            table.add_row(*self.cells[i], height=None, key=str(i))
        if where.row < stop and table.cursor_coordinate != where:
            table.cursor_coordinate = where
        if stop < len(self.cells):
            self.call_after_refresh(self._add_rows, fill, stop, where)

    def target(self) -> str | None:
        """The entry the cursor's cell stands for: column B goes to B's entry, the others to A's."""
        table = self.query_one(DiffTable)
        coord = table.cursor_coordinate
        if not self.table_rows or coord.row >= len(self.table_rows):
            return None
        row = self.table_rows[coord.row]
        first, other = ("b", "a") if coord.column == 2 else ("a", "b")
        return row.target(first) or (row.target(other) if coord.column == 0 else None)

    def action_select_entry(self) -> None:
        entry_id = self.target()
        if entry_id is None:
            self.notify("no entry on this side here", severity="warning", markup=False)
            return
        self.dismiss(entry_id)

    @on(DataTable.CellSelected)
    def _cell_selected(self, event: DataTable.CellSelected) -> None:
        event.stop()
        self.action_select_entry()

    def export_path(self) -> Path:
        """Where `e` writes the Markdown: the home folder, named after the two entries."""
        a, b = (name_safe(n.id)[:12] for n in (self.a, self.b))
        return Path.home() / f"pitree-diff-{a}-{b}.md"

    def action_export(self) -> None:
        """The comparison as Markdown (`pitree diff --markdown`), after a yes; an existing file is never replaced."""
        from pitree.widgets.screens.confirm_dialog import ConfirmDialog

        diff, out = self.diff, self.export_path()
        if diff is None:
            return
        question = Text("Write this comparison as Markdown to\n")
        question.append(make_safe(str(out), keep_newlines=False), "bold")

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            data = diff_markdown(diff, self.reader.path.name).encode()
            try:
                written = write_export(out, data, source=self.reader.path)
            except ExportFileError as exc:
                self.notify(str(exc), title="not written", severity="error", timeout=10)
                return
            self.notify(f"wrote {written}", title="compare")

        self.app.push_screen(ConfirmDialog(question, "Write"), callback=answered)

    def action_close(self) -> None:
        self.dismiss(None)
