"""Printing many lines of text output fast: a batch of lines per `console.print`, or, without colours (piped
output), each line cut to the width as Rich cuts it and written directly; and long tables as plain columns.

Rich's `Table` measures and lays out every cell (~0.4 ms a row: 4 s for the 9,000 messages of a context, and the
rows of a million-entry session's context held ~1 GB), so a table of one row per message or entry is printed here
as columns sized to their widest cell, two spaces apart, a line cut at the width rather than its cells wrapped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.text import Text

PRINT_BATCH = 1000  # lines per `console.print`: one call per line took twice as long


def is_plain(console: Console) -> bool:
    """Whether `console` writes no styles (piped output, or colours off): lines can be written directly."""
    return console.color_system is None and not console.record


def print_plain(console: Console, lines: Iterable[str]) -> None:
    """Lines of safe text on a plain console (`is_plain`), each cut as Rich's `Text.truncate(width,
    overflow="ellipsis")` cuts it: without making a `Text` of each."""
    width = console.width
    write = console.file.write
    batch: list[str] = []
    for line in lines:
        if len(line) > width // 2 and cell_len(line) > width:  # a character is at most 2 cells wide
            line = set_cell_size(line, width - 1) + "…"
        batch.append(line)
        if len(batch) == PRINT_BATCH:
            write("\n".join(batch) + "\n")
            batch = []
    if batch:
        write("\n".join(batch) + "\n")


def print_lines(console: Console, lines: Iterable[Text]) -> None:
    """Each line printed as `console.print(line, no_wrap=True, overflow="ellipsis", crop=True)` prints it."""
    if is_plain(console):
        print_plain(console, (line.plain for line in lines))
        return
    batch: list[Text] = []
    for line in lines:
        batch.append(line)
        if len(batch) == PRINT_BATCH:
            console.print(Text("\n").join(batch), no_wrap=True, overflow="ellipsis", crop=True)
            batch = []
    if batch:
        console.print(Text("\n").join(batch), no_wrap=True, overflow="ellipsis", crop=True)


def columns(header: Sequence[str], rows: Sequence[Sequence[str]], right: frozenset[int]) -> Iterator[Text]:
    """The header (bold) and the rows as lines of columns two spaces apart, each as wide as its widest cell;
    columns in `right` are right-justified. Cells must be safe already (`make_safe`)."""
    widths = [cell_len(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row):
            n = cell_len(cell)
            if n > widths[i]:
                widths[i] = n

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            pad = " " * (widths[i] - cell_len(cell))
            out.append(pad + cell if i in right else cell + pad)
        return "  ".join(out)

    yield Text(line(header), style="bold")
    for row in rows:
        yield Text(line(row))
