"""`pitree diff` as text: the comparison's rows (`ops.diff_rows`) as a Rich table of two columns, A | B.

Session text becomes `rich.text.Text` with control characters made visible, never markup. `cell_text` is also
what the TUI's compare screen draws in its cells.
"""

from __future__ import annotations

from pitree.ops.diff import BranchDiff
from pitree.ops.diff_rows import Line, Row, rows
from pitree.session.text import make_safe
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

STYLES = {
    "": "",
    "dim": "dim",
    "bold": "bold",
    "user": "bold cyan",
    "error": "red",
    "ok": "green",
    "event": "magenta",
}


def cell_text(lines: list[Line]) -> Text:
    """A cell's lines as one `Text`, each line made safe on its own (no newline or control character inside)."""
    out = Text()
    for i, (style, text) in enumerate(lines):
        if i:
            out.append("\n")
        out.append(make_safe(text, keep_newlines=False), style=STYLES.get(style, ""))
    return out


def heading(diff: BranchDiff) -> Text:
    """Which two entries, where they split, and the notes."""
    out = Text()
    for name, node in (("A", diff.a), ("B", diff.b)):
        out.append(f"{name} ", "bold")
        out.append(make_safe(node.id, keep_newlines=False), "bold")
        out.append(f"  line {node.line}  ")
        out.append(make_safe(diff.texts[name.lower()], keep_newlines=False)[:200] + "\n")
    anc = diff.ancestor
    out.append("split at ", "bold")
    if anc is None:
        out.append("(no common ancestor)\n", "dim")
    else:
        out.append(make_safe(anc.id, keep_newlines=False), "bold")
        out.append(f"  line {anc.line}  ")
        out.append(make_safe(diff.texts.get("ancestor", ""), keep_newlines=False)[:200] + "\n")
    for note in diff.notes:
        out.append("note: ", "yellow")
        out.append(make_safe(note, keep_newlines=False) + "\n")
    return out


def diff_table(diff: BranchDiff, table_rows: list[Row] | None = None) -> Table:
    table = Table(box=None, pad_edge=False, padding=(0, 2, 1, 0), show_header=True)
    table.add_column("", style="bold", no_wrap=True)
    table.add_column(Text("A  " + make_safe(diff.a.id, keep_newlines=False)), overflow="fold")
    table.add_column(Text("B  " + make_safe(diff.b.id, keep_newlines=False)), overflow="fold")
    for row in table_rows if table_rows is not None else rows(diff):
        table.add_row(Text(row.label), cell_text(row.a), cell_text(row.b))
    return table


def print_diff(console: Console, diff: BranchDiff) -> None:
    console.print(Group(heading(diff), diff_table(diff)))
