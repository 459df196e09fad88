"""`pitree usage` and the explorer's usage view as Rich tables: totals, per model, per branch segment.

The numbers are never cut: when a table does not fit the width, the model's name goes on a line of its own
(`ModelsTable`) and the segment's text is cut (`SegmentsTable`); Rich's own squeeze cut both to "12,…".
"""

from __future__ import annotations

from typing import Any

from pitree.cli.textout import one_line
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.segment import Segment
from rich.table import Table
from rich.text import Text


def _usage_cells(u: dict[str, Any]) -> list[str]:
    return [
        f"{u['messages']:,}",
        f"{u['input']:,}",
        f"{u['output']:,}",
        f"{u['cacheRead']:,}",
        f"{u['cacheWrite']:,}",
        f"{u['totalTokens']:,}",
        f"${u['cost']:,.4f}",
    ]


USAGE_HEADS = ("usages", "input", "output", "cache read", "cache write", "tokens", "cost")


def _usage_table(title: str, first: str) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", box=None, pad_edge=False, padding=(0, 2, 0, 0))
    table.add_column(first)
    for name in USAGE_HEADS:
        table.add_column(name, justify="right")
    return table


def _numbers_width(heads: tuple[str, ...], rows: list[list[str]]) -> int:
    """The columns the number columns take: each as wide as its widest cell or head, with 2 of padding."""
    return sum(max([len(head), *(len(cells[k]) for cells in rows)]) + 2 for k, head in enumerate(heads))


class ModelsTable:
    """The per-model table. The model's name comes first: when the name and the numbers do not fit on one line,
    each name gets a line of its own above its numbers (a squeezed column cut it to "anthro…")."""

    def __init__(self, models: dict[str, dict[str, Any]]) -> None:
        self.rows = [(one_line(name), _usage_cells(u)) for name, u in models.items()]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = _usage_table("Per model", "model")
        longest = max((name.cell_len for name, _ in self.rows), default=5)
        numbers = _numbers_width(USAGE_HEADS, [cells for _, cells in self.rows])
        if longest + 2 + numbers <= options.max_width or not self.rows:
            for name, cells in self.rows:
                table.add_row(name, *cells)
            yield table
            return
        for _, cells in self.rows:
            table.add_row("", *cells)
        yield from _names_above(console, options, table, [name for name, _ in self.rows], "Per model")


def _names_above(
    console: Console, options: ConsoleOptions, table: Table, names: list[Text], title: str
) -> RenderResult:
    """`table` (its rows added with an empty first cell) with each row's name on a line of its own above it."""
    table.columns[0].header = ""
    table.columns[0].width = 0
    table.title = f"{title} (the name above its numbers)"
    # The name lines go between the table's rows: render the table and interleave.
    lines = console.render_lines(table, options.update(height=None), pad=False)
    head = len(lines) - len(names)  # title and header, then one line per row
    yield from _lines(lines[:head])
    for k, name in enumerate(names):
        yield Text("  ").append_text(name)
        yield from _lines(lines[head + k : head + k + 1])


def _lines(lines: list[list[Segment]]) -> RenderResult:
    for line in lines:
        yield from line
        yield Segment.line()


CUT_ROOM = 32  # columns a segment's text keeps when cut; with less, it goes on a line of its own


class SegmentsTable:
    """The per-segment table: a segment's text is cut so that its numbers fit, whole; in a narrow width it goes on
    a line of its own above them (as a model's name does)."""

    def __init__(self, segments: list[dict[str, Any]]) -> None:
        self.rows: list[tuple[Text, list[str], str]] = []
        for seg in segments:
            head = Text("  " * min(seg["forks"], 12))
            head.append("• " if seg["onActivePath"] else "  ", "bold blue")
            head.append_text(one_line(seg["startId"], "dim"))
            head.append(" ")
            head.append_text(one_line(seg["text"][:48]))
            if seg["holdsLeaf"]:
                head.append(" ← leaf", "bold yellow")
            self.rows.append((head, [*_usage_cells(seg), f"{seg['entries']:,}"], "bold" if seg["onActivePath"] else ""))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = _usage_table("Per branch segment (between forks; • on the active path)", "segment")
        table.add_column("entries", justify="right")
        first = table.columns[0]
        first.no_wrap, first.overflow = True, "ellipsis"
        numbers = _numbers_width((*USAGE_HEADS, "entries"), [cells for _, cells, _ in self.rows])
        longest = max((head.cell_len for head, _, _ in self.rows), default=7)
        room = options.max_width - numbers
        if longest > room >= CUT_ROOM:
            first.width = room
        elif longest > room:
            for _, cells, style in self.rows:
                table.add_row("", *cells, style=style)
            names = [head for head, _, _ in self.rows]
            yield from _names_above(console, options, table, names, "Per branch segment")
            return
        for head, cells, style in self.rows:
            table.add_row(head, *cells, style=style)
        yield table


def usage_tables(report: dict[str, Any]) -> Group:
    """`pitree usage` as Rich tables: totals, per model, per branch segment (active path in bold). A usage is one
    record Pi 1.x counts (a reply, a tool result, a usage entry, a summary); tokens are the sum of the four parts."""
    totals = _usage_table("Totals", "")
    totals.add_row("session", *_usage_cells(report["total"]), style="bold")
    totals.add_row("active path (root → leaf)", *_usage_cells(report["activePath"]))
    models = ModelsTable(report["models"])
    segs = SegmentsTable(report["segments"])
    return Group(totals, Text(""), models, Text(""), segs)


def print_usage(console: Console, report: dict[str, Any]) -> None:
    console.print(usage_tables(report))
