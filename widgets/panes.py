"""`Panes`: how the explorer shares the screen between the tree and the entry pane: side by side, or stacked
on a narrow terminal, and `w` to give the tree more room or hide the entry pane. The CSS for each is in
`assets/app.tcss`."""

from __future__ import annotations

from pitree.widgets.entry_view import EntryView
from pitree.widgets.tree_header import TreeHeader
from pitree.widgets.tree_view import TreeView
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical

# Below this many columns the tree and the entry pane are stacked (at 80 columns, side by side, the tree
# got ~45); `w` cycles the share the tree gets.
STACK_BELOW = 100
LAYOUTS = {
    "split": "tree and entry pane",
    "wide": "the tree wider (taller when stacked)",
    "tree": "the tree alone (Tab brings the entry pane back)",
}


class Panes(Horizontal):
    """The tree (with its header line) and the entry pane."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.mode = "split"  # see `set_mode`

    def compose(self) -> ComposeResult:
        with Vertical(id="tree-pane"):
            yield TreeHeader(id="tree-head")
            yield TreeView(id="tree")
        yield EntryView(id="entry")

    def set_mode(self, mode: str) -> None:
        """`split` (tree 3 : entry 2), `wide` (tree 4 : entry 1) or `tree` (the entry pane hidden)."""
        self.mode = mode
        for name in LAYOUTS:
            self.set_class(name == mode, f"-{name}")
        if mode == "tree" and self.query_one(EntryView).has_focus_within:
            self.query_one(TreeView).focus()

    def cycle(self) -> str:
        """The next mode of `LAYOUTS`; returns what it shows."""
        modes = list(LAYOUTS)
        mode = modes[(modes.index(self.mode) + 1) % len(modes)]
        self.set_mode(mode)
        return LAYOUTS[mode]

    def switch_focus(self) -> None:
        """Tab: the other pane (bringing the entry pane back if it was hidden)."""
        entry = self.query_one(EntryView)
        if self.mode == "tree":
            self.set_mode("split")
        (self.query_one(TreeView) if entry.has_focus else entry).focus()

    def on_mount(self) -> None:
        self.fit(self.app.size.width)  # before the first layout; the explorer's resizes follow

    def fit(self, width: int) -> None:
        """Stack the panes on a terminal `width` columns wide if that is narrow."""
        self.set_class(width < STACK_BELOW, "-stacked")
