"""`EntryLink`: a line of the entry pane that names another entry (a context edit's target, the edit that
changes the shown entry) and goes there when clicked, or with `o` in the pane."""

from __future__ import annotations

from typing import Any

from pitree.widgets.render.parts import GoTo
from textual import events
from textual.message import Message
from textual.widgets import Static


class EntryLink(Static):
    """One `GoTo` part, drawn as its (literal) text."""

    DEFAULT_CSS = """
    EntryLink:hover { background: $boost; }
    """

    class Chosen(Message):
        """Posted when the link is clicked or `o` is pressed in the entry pane: go to `entry_id` in the tree."""

        def __init__(self, entry_id: str) -> None:
            self.entry_id = entry_id
            super().__init__()

    def __init__(self, link: GoTo, **kwargs: Any) -> None:
        super().__init__(link.text, markup=False, **kwargs)
        self.entry_id = link.entry_id

    def choose(self) -> None:
        self.post_message(self.Chosen(self.entry_id))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.choose()
