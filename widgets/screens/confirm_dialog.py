"""`ConfirmDialog`: a yes/no question (the consent for migrating a pre-v3 session); returns True or False.

`y` answers yes, `n` or Esc no; the first focus is on no, so a stray Enter changes nothing."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmDialog(ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmDialog { align: center middle; }
    ConfirmDialog > Vertical {
        width: 80; max-width: 100%; height: auto; max-height: 100%; overflow-y: auto;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    ConfirmDialog Horizontal { height: auto; margin-top: 1; }
    ConfirmDialog Button { margin-right: 1; }
    """
    BINDINGS = [Binding("escape,n", "no", "Cancel"), Binding("y", "yes", "Yes")]

    def __init__(self, question: Text, yes: str, no: str = "Cancel") -> None:
        super().__init__()
        self.question, self.yes_label, self.no_label = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question)
            with Horizontal():
                yield Button(f"{self.yes_label} (y)", id="yes", variant="warning", compact=True)
                yield Button(f"{self.no_label} (n, Esc)", id="no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed, "#yes")
    def action_yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def action_no(self) -> None:
        self.dismiss(False)
