"""`TreeDraw`: how `TreeView` draws a row — cursor and gutter marks, Pi's guides, labels, the row text,
search highlights, `← leaf` and the model/tokens/time columns — and the header line that names the columns.

Deep trees: the guides of every row on screen are cut on the left by the same number of levels (`indent_shift`,
which follows the cursor like a horizontal scroll), so the `│` of one level stays in one column; a row still
deeper than the room for guides loses the levels in between (`…`) and keeps its own connector, so its text
starts in the same column as every other such row's.
"""

from __future__ import annotations

import math
import time

from pitree.session.context import tokens_after
from pitree.session.entries import IS_ERROR, Node
from pitree.session.layout import Layout
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.widgets.tree_base import Columns, TreeBase, cut_guides
from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

MODEL_WIDTH, TOKENS_WIDTH, TIME_WIDTH = 18, 6, 4


def relative_time(ms: float, now: float | None = None) -> str:
    """`12s`, `5m`, `3h`, `4d`, `2mo`, `1y` ago; `?` without a timestamp."""
    if ms != ms or math.isinf(ms):
        return "?"
    seconds = (now if now is not None else time.time()) - ms / 1000
    if seconds < 0:
        return "now"
    for unit, size in (("y", 31536000), ("mo", 2592000), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def short_tokens(n: float) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(int(n))


# What the header says about the rows, longest first: the first that fits is shown.
LEGENDS = (
    "reply = that assistant reply's total tokens (input + output + cache); ctx in the status bar",
    "reply = that reply's total tokens, not the context size",
    "reply = the reply's total tokens",
    "reply = reply tokens",
    "",
)


def column_figures(node: Node) -> tuple[str | None, float | None, float]:
    """What the columns show of an entry: its model, its reply's total tokens (None: no usage) and its time."""
    model = node.model[1] if node.model else None
    usage = node.usage
    tokens = None if usage is None else float(usage.total_tokens or usage.tokens)
    return (None if model is None else str(model)), tokens, node.ts


def columns_text(cols: Columns, model: str | None, tokens: float | None, ts: float) -> str:
    """The model, tokens and age columns of a row, those `cols` asks for."""
    parts = []
    if cols.model:
        parts.append(f"{make_safe(model, keep_newlines=False)[:MODEL_WIDTH]:>{MODEL_WIDTH}}" if model else " " * 18)
    if cols.tokens:
        parts.append(f"{short_tokens(tokens):>{TOKENS_WIDTH}}" if tokens is not None else " " * TOKENS_WIDTH)
    if cols.time:
        parts.append(f"{relative_time(ts):>{TIME_WIDTH}}")
    return " ".join(parts)


def header_text(cols: Columns, width: int, filter_mode: str) -> Text:
    """The line above the rows: the filter, what the tokens column counts, and each column's name."""
    names = []
    if cols.model:
        names.append(f"{'model':>{MODEL_WIDTH}}")
    if cols.tokens:
        names.append(f"{'reply':>{TOKENS_WIDTH}}")
    if cols.time:
        names.append(f"{'age':>{TIME_WIDTH}}")
    right = " ".join(names)
    if width - len(right) - 1 < 20:
        right = ""  # the rows drop their columns at this width too (see `_render_row`)
    left = f"  {filter_mode} view"
    room = width - len(right) - len(left) - 4
    legend = next((g for g in LEGENDS if len(g) <= room), "") if cols.tokens and right else ""
    text = Text(no_wrap=True, end="")
    text.append(left, "bold")
    if legend:
        text.append(" · " + legend)
    text.truncate(max(0, width - len(right) - 1), overflow="ellipsis", pad=True)
    if right:
        text.append(" " + right, "bold")
    return text


def compaction_row(node: Node, after: float | None) -> str:
    """`[compaction: 48.1k → 9k tokens]`: before (Pi's tokensBefore) and after (the checkpoint, if any, + summary
    + kept, by Pi's estimate; None: not known, `…`); Pi's own row, `[compaction: 48k tokens]`, rounds to thousands."""
    before = node.meta.get("tokensBefore") if node.meta else None
    before_s = short_tokens(before) if isinstance(before, int | float) and not isinstance(before, bool) else "?"
    return f"[compaction: {before_s} → {'…' if after is None else short_tokens(after)} tokens]"


def hidden_leaf_marker(tree: SessionTree, leaf: Node) -> str:
    """The marker of the row nearest a leaf the filter hides, naming what the leaf holds."""
    hidden = make_safe(tree.row_text(leaf), keep_newlines=False)
    return f"  ← leaf (hidden: {hidden[:24] + '…' if len(hidden) > 25 else hidden})"


def body_class(node: Node) -> str:
    """The style a row's text is drawn in."""
    if node.flags & IS_ERROR:
        return "tree-view--error"
    if node.type == "message":
        if node.role == "user":
            return "tree-view--user"
        if node.role == "assistant":
            return "tree-view--assistant"
        return "tree-view--tool"
    if node.type in ("compaction", "branch_summary"):
        return "tree-view--summary"
    return "tree-view--settings"


class TreeDraw(TreeBase):
    """Drawing on top of the view's state (see `TreeView`)."""

    MARKS = {"summarized": "▒", "kept": "▌"}  # the gutter sign of a marked row (see `set_marks`)

    # ---- rows ---------------------------------------------------------------------------------------------

    def _compaction_text(self, node: Node) -> str:
        after = self._compaction_after.get(node.id)
        if after is None and self.stree is not None:
            after = tokens_after(self.stree, node)
            self._compaction_after[node.id] = after
        return compaction_row(node, after or 0)

    def row_text(
        self, row_index: int, is_cursor: bool = False, shift: int = 0, room: int | None = None, leaf: bool = True
    ) -> Text:
        """The row as Rich text (without columns), its guides cut by `shift` columns on the left and, past `room`
        columns, in the middle (each cut marked `…`); `leaf`: with its `← leaf` marker (see `leaf_marker`)."""
        assert self.layout_ is not None and self.stree is not None
        layout = self.layout_
        row = layout.rows[row_index]
        node = row.node
        get = self.get_component_rich_style
        text = Text(no_wrap=True, end="")
        mark = self.marks.get(node.id) if self.marks else None
        text.append("›" if is_cursor else " ", get("tree-view--dot"))
        if mark is None:
            text.append(" ")
        else:
            text.append(self.MARKS[mark], get(f"tree-view--{mark}"))
        folded = node.id in self.folded and row.nchildren > 0
        prefix = cut_guides(layout, row_index, folded, shift, room)
        text.append(prefix, get("tree-view--guides"))
        start = len(text)  # search highlights go on the last part, the row text
        for part, style in self.row_parts(layout, row_index, folded, bool(prefix)):
            start = len(text)
            text.append(part, get(style))
        if self._is_match(row_index):
            lower = text.plain.lower()
            for token in self.search_tokens:
                pos = lower.find(token, start)
                while pos >= 0:
                    text.stylize(get("tree-view--match"), pos, pos + len(token))
                    pos = lower.find(token, pos + len(token))
        if leaf:
            text.append(self.leaf_marker(row_index), get("tree-view--leaf"))
        return text

    def row_parts(
        self, layout: Layout, row_index: int, folded: bool, has_prefix: bool, compare: bool = True
    ) -> list[tuple[str, str]]:
        """What a row shows after its guides, as (text, component class) pairs, the row text last: the fold
        sign, the active path's dot, the compare mark (unless not `compare`) and the label. Also what a kept
        first screen holds."""
        assert self.stree is not None
        tree, row = self.stree, layout.rows[row_index]
        node = row.node
        parts = []
        if folded and not (row.connector and not row.vroot and has_prefix):
            parts.append(("⊞ ", "tree-view--dot"))
        if node in layout.active:
            parts.append(("• ", "tree-view--dot"))
        if compare and node.id == self.compare_mark:
            parts.append(("◆ ", "tree-view--compare"))
        label = tree.labels.get(node.id)
        if label:
            parts.append((make_safe(f"[{label}] ", keep_newlines=False), "tree-view--label"))
        body = tree.row_text(node) if node.type != "compaction" else self._compaction_text(node)
        parts.append((make_safe(body, keep_newlines=False), body_class(node)))
        return parts

    def leaf_marker(self, row_index: int, layout: Layout | None = None) -> str:
        """`  ← leaf` on the leaf's row; when the filter hides the leaf, on its nearest ancestor with a row,
        naming what it holds: `  ← leaf (hidden: [label: …])`. `layout`: another than the one shown."""
        layout = layout or self.layout_
        assert layout is not None and self.stree is not None
        node, leaf = layout.rows.node(row_index), self.leaf
        if leaf is None:
            return ""
        if node is leaf:
            return "  ← leaf"
        if layout.holder_row(leaf) != row_index:
            return ""
        return hidden_leaf_marker(self.stree, leaf)

    def _columns_text(self, node: Node) -> str:
        return columns_text(self.columns, *column_figures(node))

    def header_text(self, width: int, filter_mode: str) -> Text:
        """The line above the rows: the filter, what the tokens column counts, and each column's name."""
        return header_text(self.columns, width, filter_mode)

    def _render_row(self, row_index: int, width: int, is_cursor: bool) -> Strip:
        assert self.layout_ is not None
        node = self.layout_.rows.node(row_index)
        text = self.row_text(
            row_index, is_cursor, shift=self.indent_shift(width), room=self.prefix_room(width), leaf=False
        )
        active = node in self.layout_.active
        return finish_row(self, text, self._columns_text(node), self.leaf_marker(row_index), width, is_cursor, active)


def finish_row(view: Widget, text: Text, columns: str, marker: str, width: int, is_cursor: bool, active: bool) -> Strip:
    """A row's line `width` cells wide: its `text`, then the leaf `marker` (kept whole: the text gives way), then
    the `columns` at the right, on the cursor's or the active path's background. `view` has TreeView's styles."""
    room = width - (len(columns) + 1 if columns else 0)
    if room < 20:
        columns, room = "", width
    keep = min(text.cell_len, room * 2 // 3)  # the row keeps 2/3 of its text room: the hidden name gives way
    if len(marker) > room - keep and marker.endswith(")"):
        name = marker[len("  ← leaf (hidden: ") : -1]
        cut = room - keep - len("  ← leaf (hidden: …)")
        marker = f"  ← leaf (hidden: {name[:cut]}…)" if cut >= 6 else "  ← leaf (hidden)"
    # The text is cut, never the marker after it: on a long row it would be the part lost.
    if text.cell_len > room - len(marker):
        text.truncate(max(0, room - len(marker)), overflow="ellipsis")
    text.append(marker, view.get_component_rich_style("tree-view--leaf"))
    text.pad_right(room - text.cell_len)
    if columns:
        text.append(" " + columns, view.get_component_rich_style("tree-view--column"))
    base = view.rich_style
    if is_cursor:
        base = base + view.get_component_rich_style("tree-view--cursor")
    elif active:
        base = base + view.get_component_rich_style("tree-view--active")
    segments = [Segment(s.text, base + s.style if s.style else base) for s in text.render(view.app.console)]
    return Strip(segments).crop_extend(0, width, base)
