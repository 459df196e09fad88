"""`ExportDialog`: export root → the selected entry as Markdown, HTML or a new Pi session (key `e`).

Asks for the format, the output file (a default in the current folder, renamed with the format) and
whether thinking is included, and returns an `ExportChoice`; the app does the writing in a worker.
Esc cancels and nothing is written. An existing file is only replaced when "overwrite" is ticked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pitree.session.text import make_safe, name_safe
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, RadioButton, RadioSet, Static

FORMATS = (
    ("md", "Markdown (.md)"),
    ("html", "one self-contained HTML file (.html)"),
    ("jsonl", "a new Pi session holding only this path (.jsonl, Pi opens it)"),
)


@dataclass(frozen=True)
class ExportChoice:
    fmt: str
    out: Path
    thinking: bool
    force: bool


def default_name(session: Path, leaf_id: str, fmt: str) -> str:
    return name_safe(f"{session.stem}-{leaf_id}") + f".{fmt}"  # ids and names from the file: never raw in the box


class ExportDialog(ModalScreen[ExportChoice | None]):
    DEFAULT_CSS = """
    ExportDialog { align: center middle; }
    ExportDialog > Vertical { width: 90; height: auto; border: thick $accent; background: $surface; padding: 0 1; }
    ExportDialog RadioSet { width: 100%; margin: 1 0; }
    ExportDialog Horizontal { height: auto; margin-top: 1; }
    ExportDialog Button { margin-right: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel (nothing is written)")]

    def __init__(self, session: Path, leaf_id: str, folder: Path) -> None:
        super().__init__()
        self.session, self.leaf_id, self.folder = session, leaf_id, folder
        self.fmt = "md"

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text("Export the path root → ", "bold")
            title.append(make_safe(self.leaf_id, keep_newlines=False), "bold cyan")
            yield Static(title)
            with RadioSet(id="format"):
                for i, (fmt, label) in enumerate(FORMATS):
                    yield RadioButton(label, value=i == 0, name=fmt)
            yield Input(value=str(self.folder / default_name(self.session, self.leaf_id, "md")), id="out")
            yield Checkbox("include thinking (md, html)", id="thinking")
            yield Checkbox("overwrite the file if it exists", id="force")
            with Horizontal():
                yield Button("Export", variant="primary", id="export")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#out", Input).focus()

    @on(RadioSet.Changed)
    def _format(self, event: RadioSet.Changed) -> None:
        new = event.pressed.name or "md"
        box = self.query_one("#out", Input)
        path = Path(box.value)
        if path.suffix in {f".{f}" for f, _ in FORMATS}:  # follow the format unless the user typed another name
            box.value = str(path.with_suffix(f".{new}"))
        self.fmt = new

    @on(Input.Submitted, "#out")
    @on(Button.Pressed, "#export")
    def _export(self) -> None:
        out = self.query_one("#out", Input).value.strip()
        if not out:
            self.notify("give a file to write", severity="error")
            return
        self.dismiss(
            ExportChoice(
                self.fmt,
                Path(out).expanduser(),
                self.query_one("#thinking", Checkbox).value,
                self.query_one("#force", Checkbox).value,
            )
        )

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
