"""`TextScreen`: a modal that shows a block of text (help, skipped lines, problems); Esc or q closes it."""

from __future__ import annotations

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


class TextScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    TextScreen { align: center middle; }
    TextScreen > VerticalScroll { width: 90%; height: 85%; border: thick $accent; background: $surface; padding: 0 1; }
    TextScreen .title { text-style: bold; color: $accent; margin-bottom: 1; }
    """
    BINDINGS = [Binding("escape,q", "dismiss_screen", "Close")]

    def __init__(self, title: str, body: RenderableType) -> None:
        super().__init__()
        self.title_text = title
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(self.title_text, classes="title", markup=False)
            yield Static(self.body)

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
