"""`TABLE_KEYS`: the keys the screens' tables add to `DataTable`'s own, so that Home/End (and j/k) move the cursor
to the first/last row in the context view and the compare screen alike."""

from __future__ import annotations

from textual.binding import Binding

TABLE_KEYS = [
    Binding("home", "scroll_top", "First", show=False),
    Binding("end", "scroll_bottom", "Last", show=False),
    Binding("j", "cursor_down", "Down", show=False),
    Binding("k", "cursor_up", "Up", show=False),
]
