"""`LabelDialog`: set, edit or clear the label of an entry (Pi's Shift+L); returns the new label, "" to clear,
or None when cancelled.

The text box has the focus (typing is all it takes); Enter saves, Ctrl+R removes the label, Esc cancels."""

from __future__ import annotations

from pitree.session.text import make_safe
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class LabelDialog(ModalScreen[str | None]):
    DEFAULT_CSS = """
    LabelDialog { align: center middle; }
    LabelDialog > Vertical {
        width: 70; max-width: 100%; height: auto; border: thick $accent; background: $surface; padding: 0 1;
    }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+r", "remove", "Remove the label")]

    def __init__(self, entry_text: str, current: str | None) -> None:
        super().__init__()
        self.entry_text = entry_text
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Label for: ", "bold") + Text(make_safe(self.entry_text, keep_newlines=False)[:60]))
            yield Input(value=self.current or "", placeholder="label (empty to remove)", id="label")
            keys = "Enter saves (appends a label entry, as Pi does) · "
            keys += "Ctrl+R removes the label · " if self.current else ""
            yield Static(Text(keys + "Esc cancels", "dim"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_remove(self) -> None:
        if self.current:
            self.dismiss("")

    def action_cancel(self) -> None:
        self.dismiss(None)
