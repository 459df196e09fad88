"""A `BranchDiff` as a Markdown document (`pitree diff --markdown`): the figures as a table, then each turn with
what A and B did, as lists. Every piece of session text is made safe and escaped as literal Markdown
(`export.markdown.escape_line`): a `**x**`, a `<script>` or a `|` in a message shows as typed.
"""

from __future__ import annotations

from pitree.ops.diff import BranchDiff
from pitree.ops.diff_rows import Line, rows
from pitree.ops.export.markdown import escape_line
from pitree.session.text import make_safe


def _md(text: str) -> str:
    return escape_line(make_safe(text, keep_newlines=False))


def _cell(lines: list[Line]) -> str:
    """Lines as one table cell (joined by `<br>`)."""
    return "<br>".join(_md(text.strip()) for _, text in lines) or " "


def _items(lines: list[Line]) -> list[str]:
    return [("  " if text.startswith("  ") else "") + "- " + _md(text.strip()) for _, text in lines]


def diff_markdown(diff: BranchDiff, file_name: str) -> str:
    """The document; `file_name` titles it."""
    out = [f"# Compare two branches of {_md(file_name)}", ""]
    for name in ("a", "b"):
        node = diff.a if name == "a" else diff.b
        out.append(f"- **{name.upper()}** `{_md(node.id)}` (line {node.line}): {_md(diff.texts[name])}")
    if diff.ancestor is not None:
        anc = diff.ancestor
        out.append(f"- **split at** `{_md(anc.id)}` (line {anc.line}): {_md(diff.texts.get('ancestor', ''))}")
    else:
        out.append("- **split at**: no common ancestor")
    out.append("")
    for note in diff.notes:
        out.append(f"> {_md(note)}")
        out.append("")
    table = rows(diff)
    out += ["## Figures", "", "| | A | B |", "|---|---|---|"]
    for row in table:
        if row.turn is None:
            out.append(f"| {_md(row.label)} | {_cell(row.a)} | {_cell(row.b)} |")
    out += ["", "## Turns", ""]
    for row in table:
        if row.turn is None:
            continue
        out += [f"### Turn {row.turn + 1}", ""]
        for name, lines in (("A", row.a), ("B", row.b)):
            out.append(f"**{name}**")
            out.append("")
            out += _items(lines)
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
