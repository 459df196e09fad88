"""The screen as plain text (what a person reads), through Textual's public `App.export_screenshot`.

The SVG it returns places each run of text at a cell column and a line (rich's `export_svg`); the text is put back
there, every line padded to the screen's width, so a screen reads as it did from the compositor itself.
"""

from __future__ import annotations

import html
import re

from rich.cells import cell_len
from textual.app import App

# rich's export_svg: char_height 20 (font_size) times font_aspect_ratio 0.61 per cell.
CHAR_WIDTH = 20 * 0.61
TEXT = re.compile(r'<text [^>]*?x="([0-9.e+-]+)"[^>]*?clip-path="url\(#[^)]*-line-(\d+)\)">(.*?)</text>', re.S)


def screen_text(app: App[object]) -> str:
    """The current screen, one line of text per row (the last blank rows dropped), ending in a newline."""
    width, height = app.size
    rows: list[list[tuple[int, str]]] = [[] for _ in range(height)]
    for x, line, content in TEXT.findall(app.export_screenshot()):
        run = html.unescape(content).replace("\xa0", " ").replace("\n", "")  # each row's line break is a run too
        if run:
            rows[int(line)].append((round(float(x) / CHAR_WIDTH), run))
    lines = []
    for runs in rows:
        text = ""
        for column, run in sorted(runs):
            text += " " * (column - cell_len(text)) + run
        lines.append(text + " " * (width - cell_len(text)))
    return "\n".join(lines).rstrip() + "\n"
