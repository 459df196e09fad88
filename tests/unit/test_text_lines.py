"""Text output of many lines (`cli/text_lines.py`): batches and the direct write print what Rich printed line
by line; plain columns print what Rich's `Table` printed when it fits the width."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pitree.cli.text_lines import PRINT_BATCH, columns, is_plain, print_lines, print_plain
from pitree.session.text import make_safe
from rich.console import Console
from rich.table import Table
from rich.text import Text

# wide (CJK, emoji), zero-width and combining characters, and plain ones: how Rich measures a line differs
CHARS = st.sampled_from(list("ab ─│├└…•←") + ["漢", "字", "🙂", "\u200b", "e\u0301", "\u200d", "\ufe0f", "  "])
# as pitree's lines hold them: made safe first (a zero-width joiner becomes `<U+200D>`: Rich measured one that
# ends a styled part differently when cutting the line and when printing it)
LINE = st.lists(CHARS, max_size=60).map(lambda chars: make_safe("".join(chars), keep_newlines=False))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(LINE, LINE), max_size=40), st.integers(1, 80), st.booleans())
def test_print_lines_equals_rich_printing_each_line(parts: list[tuple[str, str]], width: int, colour: bool) -> None:
    colours: dict[str, Any] = {"force_terminal": True, "color_system": "standard"} if colour else {}

    def lines() -> list[Text]:
        return [Text(a, style="dim") + Text(b, style="bold") for a, b in parts]

    fast, slow = io.StringIO(), io.StringIO()
    print_lines(Console(file=fast, width=width, **colours), lines())
    one = Console(file=slow, width=width, **colours)
    for line in lines():
        one.print(line, no_wrap=True, overflow="ellipsis", crop=True)
    assert fast.getvalue() == slow.getvalue()


@settings(max_examples=150, deadline=None)
@given(st.lists(LINE, max_size=40), st.integers(1, 80))
def test_print_plain_equals_rich_printing_each_line(lines: list[str], width: int) -> None:
    """Plain strings cut and written directly, as Rich prints each line on a console without colours."""
    fast, slow = io.StringIO(), io.StringIO()
    plain = Console(file=fast, width=width)
    assert is_plain(plain)
    print_plain(plain, iter(lines))
    one = Console(file=slow, width=width)
    for line in lines:
        one.print(Text(line), no_wrap=True, overflow="ellipsis", crop=True)
    assert fast.getvalue() == slow.getvalue()


def test_print_lines_in_batches() -> None:
    out = io.StringIO()
    print_lines(Console(file=out, width=20), (Text(f"line {i}") for i in range(2 * PRINT_BATCH + 3)))
    assert out.getvalue().splitlines() == [f"line {i}" for i in range(2 * PRINT_BATCH + 3)]


CELL = st.lists(st.sampled_from(list("ab7 -") + ["漢", "é", "[bold]", "\x1b[31m"]), max_size=12).map(
    lambda cs: make_safe("".join(cs), keep_newlines=False).strip()  # Rich's table drops a cell's edge spaces
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(CELL, min_size=4, max_size=4), max_size=30))
def test_columns_equal_richs_table_when_it_fits(rows: list[list[str]]) -> None:
    """Columns as wide as their widest cell, two spaces apart, numbers right-justified: Rich's
    `Table(box=None, pad_edge=False)` without colours, when the table fits the width."""
    header = ("#", "role", "entry", "edit")
    right = frozenset({0, 2})
    table = Table(box=None, pad_edge=False)
    for i, name in enumerate(header):
        table.add_column(name, justify="right" if i in right else "left")
    for row in rows:
        table.add_row(*(Text(c) for c in row))
    mine, rich = io.StringIO(), io.StringIO()
    print_lines(Console(file=mine, width=200), columns(header, rows, right))
    Console(file=rich, width=200).print(table)
    assert mine.getvalue() == rich.getvalue()
