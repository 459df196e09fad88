"""`PanesMixin`: how the explorer shares the screen between the tree and the entry pane: side by side, or
stacked on a narrow terminal (at 80 columns, side by side, the tree got ~45), and `w` to give the tree more
room or hide the entry pane. The CSS for each is in `assets/app.tcss`."""

from __future__ import annotations

from pitree.widgets.entry_view import EntryView
from pitree.widgets.explorer_base import ExplorerBase
from textual import events

# Below this many columns the tree and the entry pane are stacked (at 80 columns, side by side, the tree
# got ~45); `w` cycles the share the tree gets.
STACK_BELOW = 100
LAYOUTS = {
    "split": "tree and entry pane",
    "wide": "the tree wider (taller when stacked)",
    "tree": "the tree alone (Tab brings the entry pane back)",
}


class PanesMixin(ExplorerBase):
    """Part of `PitreeApp` (see `app.py`): the state it reads is the app's."""

    pane_layout = "split"  # see `set_pane_layout`

    # ---- pane layout: `w`, and the panes stacked on a narrow terminal --------------------------------------

    def set_pane_layout(self, mode: str) -> None:
        """`split` (tree 3 : entry 2), `wide` (tree 4 : entry 1) or `tree` (the entry pane hidden)."""
        self.pane_layout = mode
        panes = self.query_one("#panes")
        for name in LAYOUTS:
            panes.set_class(name == mode, f"-{name}")
        if mode == "tree" and self.query_one(EntryView).has_focus_within:
            self.tree_view.focus()

    def action_cycle_layout(self) -> None:
        modes = list(LAYOUTS)
        mode = modes[(modes.index(self.pane_layout) + 1) % len(modes)]
        self.set_pane_layout(mode)
        self.notify(LAYOUTS[mode], title="layout (w)", timeout=2)

    def on_resize(self, event: events.Resize) -> None:
        self.query_one("#panes").set_class(event.size.width < STACK_BELOW, "-stacked")
