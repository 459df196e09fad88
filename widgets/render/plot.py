"""A bar plot in text: the context size along a path, compactions marked, the model's window as a line.

`context_plot(values, compactions, window, width, height)` buckets the path into the columns available
(each column shows the largest size in its bucket) and draws bars with eighth blocks, so a 200,000-entry
path plots as fast as a short one. The scale is the peak (or the window, when the peak comes within 4× of
it), so a small context is still readable; a window that is off scale is said so in the caption.
"""

from __future__ import annotations

from collections.abc import Sequence

from pitree.session.text import count
from rich.text import Text

BLOCKS = " ▁▂▃▄▅▆▇█"
AXIS = 7  # width of the y labels


def short(n: float) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return f"{n:.0f}"


def buckets(values: Sequence[int], columns: int) -> list[tuple[int, int, int]]:
    """(start, stop, max) per column; fewer columns than `columns` when the path is shorter."""
    n = len(values)
    if n == 0 or columns <= 0:
        return []
    count = min(n, columns)
    out = []
    for c in range(count):
        start, stop = c * n // count, (c + 1) * n // count
        out.append((start, stop, max(values[start:stop])))
    return out


def context_plot(
    values: Sequence[int], compactions: Sequence[int], window: int | None, width: int, height: int = 8
) -> Text:
    """The plot as styled text, `height` rows of bars plus an axis line and a caption."""
    text = Text(no_wrap=True, end="")
    columns = max(1, width - AXIS - 1)
    cols = buckets(values, columns)
    if not cols:
        return Text("(no entries on the path)", "dim")
    peak = max(v for _, _, v in cols)
    window_on_scale = window is not None and window > 0 and peak * 4 >= window
    scale = max(peak, window if window_on_scale and window else 0, 1)
    marked = set()
    for i in compactions:
        for c, (start, stop, _) in enumerate(cols):
            if start <= i < stop:
                marked.add(c)
                break
    window_row = None
    if window_on_scale and window:
        window_row = min(height - 1, int(window / scale * height))
    for row in range(height - 1, -1, -1):  # top row first
        if row == height - 1:
            label = short(scale)
        elif row == window_row:
            label = "window"
        else:
            label = ""
        text.append(f"{label:>{AXIS}}│", "dim")
        for c, (_, _, v) in enumerate(cols):
            level = v / scale * height - row  # how much of this cell the bar fills, in cells
            if level >= 1:
                ch = BLOCKS[8]
            elif level > 0:
                ch = BLOCKS[max(1, int(level * 8))]
            elif row == window_row:
                ch = "┄"
            else:
                ch = " "
            style = "magenta" if c in marked else ("red" if window and v > window else "cyan")
            if ch == "┄":
                style = "yellow"
            text.append(ch, style)
        text.append("\n")
    text.append(f"{'0':>{AXIS}}└", "dim")
    text.append("".join("▲" if c in marked else "─" for c in range(len(cols))), "magenta")
    text.append("\n")
    marks = f"; ▲ {count(len(compactions), 'compaction')}" if compactions else ""
    caption = f"root → leaf, {count(len(values), 'entry', 'entries')}{marks}; peak {short(peak)} tokens"
    if window:
        caption += f"; window {short(window)}"
        if not window_on_scale:
            caption += f" (off scale: the peak is {peak / window:.1%} of it)"
    text.append(caption, "dim")
    return text
