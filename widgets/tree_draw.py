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

from pitree.session.entries import IS_ERROR, Node
from pitree.session.text import make_safe
from pitree.widgets.tree_base import LEVEL, TreeBase
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

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


class TreeDraw(TreeBase):
    """Drawing on top of the view's state (see `TreeView`)."""

    MARKS = {"summarized": "▒", "kept": "▌"}  # the gutter sign of a marked row (see `set_marks`)

    # ---- rows ---------------------------------------------------------------------------------------------

    def _compaction_text(self, node: Node) -> str:
        """`[compaction: 48.1k → 9k tokens]`: before (Pi's tokensBefore) and after (the checkpoint, if any, + summary
        + kept, by Pi's estimate); Pi's own row, `[compaction: 48k tokens]`, rounds to thousands."""
        after = self._compaction_after.get(node.id)
        if after is None and self.stree is not None:
            from pitree.cli.report import compaction_audit

            after = compaction_audit(self.stree, node, None)["tokensAfter"]["estimate"]
            self._compaction_after[node.id] = after
        before = node.meta.get("tokensBefore") if node.meta else None
        before_s = short_tokens(before) if isinstance(before, int | float) and not isinstance(before, bool) else "?"
        return f"[compaction: {before_s} → {short_tokens(after or 0)} tokens]"

    def row_text(
        self, row_index: int, is_cursor: bool = False, shift: int = 0, room: int | None = None, leaf: bool = True
    ) -> Text:
        """The row as Rich text (without columns), its guides cut by `shift` columns on the left and, past `room`
        columns, in the middle (each cut marked `…`); `leaf`: with its `← leaf` marker (see `leaf_marker`)."""
        assert self.layout_ is not None and self.stree is not None
        layout, tree = self.layout_, self.stree
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
        prefix = layout.prefix(row_index, folded)
        if shift > 0:
            # The levels left of the cut are off screen for every row alike; `…` says so.
            prefix = "…" + prefix[shift + 1 :] if len(prefix) > shift else "…"
        if room is not None and len(prefix) > room:
            prefix = prefix[: room - LEVEL - 1] + "…" + prefix[-LEVEL:]
        text.append(prefix, get("tree-view--guides"))
        if folded and not (row.connector and not row.vroot and prefix):
            text.append("⊞ ", get("tree-view--dot"))
        on_path = node in layout.active
        if on_path:
            text.append("• ", get("tree-view--dot"))
        if node.id == self.compare_mark:
            text.append("◆ ", get("tree-view--compare"))
        label = tree.labels.get(node.id)
        if label:
            text.append(make_safe(f"[{label}] ", keep_newlines=False), get("tree-view--label"))
        body = tree.row_text(node) if node.type != "compaction" else self._compaction_text(node)
        style = self._body_style(node)
        start = len(text)
        text.append(make_safe(body, keep_newlines=False), style)
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

    def leaf_marker(self, row_index: int) -> str:
        """`  ← leaf` on the leaf's row; when the filter hides the leaf, on its nearest ancestor with a row,
        naming what it holds: `  ← leaf (hidden: [label: …])`."""
        assert self.layout_ is not None and self.stree is not None
        node, leaf, layout = self.layout_.rows.nodes[row_index], self.leaf, self.layout_
        if leaf is None:
            return ""
        if node is leaf:
            return "  ← leaf"
        if layout.row_of(leaf) is not None:
            return ""
        holder = leaf.parent
        while holder is not None and layout.row_of(holder) is None:
            holder = holder.parent
        if holder is not node:
            return ""
        hidden = make_safe(self.stree.row_text(leaf), keep_newlines=False)
        return f"  ← leaf (hidden: {hidden[:24] + '…' if len(hidden) > 25 else hidden})"

    def _body_style(self, node: Node) -> Style:
        get = self.get_component_rich_style
        if node.flags & IS_ERROR:
            return get("tree-view--error")
        if node.type == "message":
            if node.role == "user":
                return get("tree-view--user")
            if node.role == "assistant":
                return get("tree-view--assistant")
            return get("tree-view--tool")
        if node.type in ("compaction", "branch_summary"):
            return get("tree-view--summary")
        return get("tree-view--settings")

    def _columns_text(self, node: Node) -> str:
        parts = []
        cols = self.columns
        if cols.model:
            model = node.model[1] if node.model else None
            parts.append(
                f"{make_safe(str(model), keep_newlines=False)[:MODEL_WIDTH]:>{MODEL_WIDTH}}" if model else " " * 18
            )
        if cols.tokens:
            usage = node.usage
            total = 0.0
            if usage is not None:
                total = usage.total_tokens or usage.tokens
            parts.append(f"{short_tokens(total):>{TOKENS_WIDTH}}" if usage is not None else " " * TOKENS_WIDTH)
        if cols.time:
            parts.append(f"{relative_time(node.ts):>{TIME_WIDTH}}")
        return " ".join(parts)

    def header_text(self, width: int, filter_mode: str) -> Text:
        """The line above the rows: the filter, what the tokens column counts, and each column's name."""
        cols = self.columns
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

    def _render_row(self, row_index: int, width: int, is_cursor: bool) -> Strip:
        assert self.layout_ is not None
        node = self.layout_.rows.nodes[row_index]
        text = self.row_text(
            row_index, is_cursor, shift=self.indent_shift(width), room=self.prefix_room(width), leaf=False
        )
        columns = self._columns_text(node)
        room = width - (len(columns) + 1 if columns else 0)
        if room < 20:
            columns, room = "", width
        marker = self.leaf_marker(row_index)
        keep = min(text.cell_len, room * 2 // 3)  # the row keeps 2/3 of its text room: the hidden name gives way
        if len(marker) > room - keep and marker.endswith(")"):
            name = marker[len("  ← leaf (hidden: ") : -1]
            cut = room - keep - len("  ← leaf (hidden: …)")
            marker = f"  ← leaf (hidden: {name[:cut]}…)" if cut >= 6 else "  ← leaf (hidden)"
        # The text is cut, never the marker after it: on a long row it would be the part lost.
        if text.cell_len > room - len(marker):
            text.truncate(max(0, room - len(marker)), overflow="ellipsis")
        text.append(marker, self.get_component_rich_style("tree-view--leaf"))
        text.pad_right(room - text.cell_len)
        if columns:
            text.append(" " + columns, self.get_component_rich_style("tree-view--column"))
        base = self.rich_style
        if is_cursor:
            base = base + self.get_component_rich_style("tree-view--cursor")
        elif node in self.layout_.active:
            base = base + self.get_component_rich_style("tree-view--active")
        segments = [Segment(s.text, base + s.style if s.style else base) for s in text.render(self.app.console)]
        return Strip(segments).crop_extend(0, width, base)
