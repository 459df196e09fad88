"""`ExportDialog`: export root → the selected entry as Markdown, HTML or a new Pi session (key `e`).

Asks for the format, the output file and whether thinking is included, and returns an `ExportChoice`; the
app does the writing in a worker. Every choice has a key (m h j format, f file name, t thinking, o overwrite,
e export, Esc cancel); the first focus is on Cancel, so a stray Enter writes nothing. Where it writes by
default: a Pi session (.jsonl) next to the session it comes from, where Pi lists it, as Pi's own fork does;
Markdown and HTML (and anything from the demo's temporary copy, which is deleted on exit) in the home folder,
never the current folder (under `make run` that was the checkout). An existing file is only replaced when
"overwrite" is ticked.
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


def default_folder(session: Path, fmt: str, home: Path | None = None) -> Path:
    """Where an export goes unless the user types another path (see the module docstring)."""
    demo = session.parent.name.startswith("pitree-demo-")  # `pitree --demo`'s copy, removed at exit
    if fmt == "jsonl" and not demo:
        return session.parent
    return home if home is not None else Path.home()


def default_path(session: Path, leaf_id: str, fmt: str) -> Path:
    return default_folder(session, fmt) / default_name(session, leaf_id, fmt)


class ExportDialog(ModalScreen[ExportChoice | None]):
    DEFAULT_CSS = """
    ExportDialog { align: center middle; }
    ExportDialog > Vertical {
        width: 90; max-width: 100%; height: auto; max-height: 100%; overflow-y: auto;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    ExportDialog RadioSet { width: 100%; margin: 1 0; }
    ExportDialog Input { margin-bottom: 1; background: $boost; }
    ExportDialog Horizontal { height: auto; margin-top: 1; }
    ExportDialog Button { margin-right: 1; }
    """
    # Letters act while the file name box does not have the focus (there they are typed); Enter in the box exports.
    BINDINGS = [
        Binding("escape", "cancel", "Cancel (nothing is written)"),
        Binding("m", "format('md')", "Markdown"),
        Binding("h", "format('html')", "HTML"),
        Binding("j", "format('jsonl')", "Pi session"),
        Binding("f", "edit_name", "File name"),
        Binding("t", "tick('thinking')", "Thinking"),
        Binding("o", "tick('force')", "Overwrite"),
        Binding("e", "export", "Export"),
    ]
    KEYS = "m Markdown · h HTML · j Pi session · f file name · t thinking · o overwrite · e export · Esc cancel"

    def __init__(self, session: Path, leaf_id: str) -> None:
        super().__init__()
        self.session, self.leaf_id = session, leaf_id
        self.fmt = "md"

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text("Export the path root → ", "bold")
            title.append(make_safe(self.leaf_id, keep_newlines=False), "bold cyan")
            yield Static(title)
            with RadioSet(id="format", compact=True):
                for i, (fmt, label) in enumerate(FORMATS):
                    yield RadioButton(f"{label}  ({fmt[0]})", value=i == 0, name=fmt, id=f"format-{fmt}", compact=True)
            yield Static(Text("file name (f)", "dim"))
            yield Input(
                value=str(default_path(self.session, self.leaf_id, "md")), id="out", select_on_focus=False, compact=True
            )
            yield Checkbox("include thinking (md, html)  (t)", id="thinking", compact=True)
            yield Checkbox("overwrite the file if it exists  (o)", id="force", compact=True)
            with Horizontal():
                yield Button("Export (e)", variant="primary", id="export", compact=True)
                yield Button("Cancel (Esc)", id="cancel", compact=True)
            yield Static(Text(self.KEYS, "dim"))

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def action_format(self, fmt: str) -> None:
        self.query_one(f"#format-{fmt}", RadioButton).value = True

    def action_edit_name(self) -> None:
        self.query_one("#out", Input).focus()

    def action_tick(self, box: str) -> None:
        self.query_one(f"#{box}", Checkbox).toggle()

    @on(RadioSet.Changed)
    def _format(self, event: RadioSet.Changed) -> None:
        new = event.pressed.name or "md"
        box = self.query_one("#out", Input)
        path = Path(box.value)
        if path == default_path(self.session, self.leaf_id, self.fmt):  # untouched: the new format's default
            box.value = str(default_path(self.session, self.leaf_id, new))
        elif path.suffix in {f".{f}" for f, _ in FORMATS}:  # follow the format unless the user typed another name
            box.value = str(path.with_suffix(f".{new}"))
        self.fmt = new

    @on(Input.Submitted, "#out")
    @on(Button.Pressed, "#export")
    def action_export(self) -> None:
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
