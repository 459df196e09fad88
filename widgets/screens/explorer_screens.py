"""The explorer's other screens, built for it: help, skipped lines, usage. The explorer pushes them
(`explorer.py`); the context view, the export dialog and the export's progress are screens of their own."""

from __future__ import annotations

import io
from importlib import resources
from pathlib import Path

from pitree.session.load import SessionBuilder
from pitree.session.text import count, make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import held_back_skips
from pitree.widgets.screens.text_screen import Lines, TextScreen
from rich.console import Console, RenderableType
from rich.text import Text
from textual.strip import Strip


def asset_text(name: str) -> str:
    return (resources.files("pitree.assets") / name).read_text(encoding="utf-8")


def help_screen() -> TextScreen:
    from rich.markdown import Markdown

    return TextScreen("pitree — keys", Markdown(asset_text("help.md")))


USAGE_TITLE = "usage — tokens and cost of replies, tools, summaries and usage entries (Pi 1.x totals)"


def usage_text(tree: SessionTree, width: int = 100) -> Lines:
    """Tokens and cost per model and per branch segment: a walk of the whole session, so the explorer runs it in
    a thread worker and shows the result in a `TextScreen` titled `USAGE_TITLE`. The tables are laid out here
    at `width` (the screen's), to lines of styled text: laying out a table of thousands of branch segments took
    the UI thread ~9 s at 1M entries."""
    from pitree.cli.usage_text import usage_tables
    from pitree.session.usage import usage_report

    return rendered(usage_tables(usage_report(tree)), width)


def rendered(renderable: RenderableType, width: int) -> Lines:
    """`renderable` laid out at `width` cells, as lines (no markup is parsed: what comes from a file is Text)."""
    console = Console(width=width, file=io.StringIO(), color_system="truecolor", legacy_windows=False)
    lines = console.render_lines(renderable, console.options, pad=False)
    return Lines(Strip([s for s in line if not s.control]) for line in lines)


def skipped_screen(tree: SessionTree, path: Path, builder: SessionBuilder | None) -> TextScreen:
    """Lines that are not entries, and the notes on the file."""
    body = Text()
    # a torn last line the tailer holds back is listed too, as the CLI lists it
    skipped = tree.skipped + (held_back_skips(path, builder) if builder is not None else [])
    if not skipped and not tree.problems:
        body.append("Every line of the file is an entry; nothing to report.")
    for s in skipped:
        body.append(f"line {s.line}: ", "bold yellow")
        body.append(make_safe(s.reason, keep_newlines=False) + "\n")
    if tree.problems:
        body.append("\nnotes\n", "bold")
    for p in tree.problems:
        body.append(f"line {p.line}: ", "bold")
        body.append(make_safe(p.message, keep_newlines=False) + "\n")
    title = f"{count(len(skipped), 'skipped line')}, {count(len(tree.problems), 'note')}"
    return TextScreen(title, body)
