"""An export on its way: the explorer's `e` writes root → the entry in a thread worker (`run_export`), and an
export that takes longer than SHOW_AFTER seconds (a long path) shows this screen with its progress; Esc stops it
and nothing is written (the export's temporary file is removed). A short export shows only its result."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from pitree.session.entries import Node
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import ProgressBar, Static
from textual.worker import Worker, get_current_worker

if TYPE_CHECKING:
    from pitree.widgets.screens.export_dialog import ExportChoice

SHOW_AFTER = 0.4  # seconds of exporting before the progress screen appears
REDRAW_EVERY = 0.1  # seconds between two progress updates sent to the UI
FORMAT_NAMES = {"md": "Markdown", "html": "HTML", "jsonl": "a Pi session"}


class ExportProgress(ModalScreen[None]):
    DEFAULT_CSS = """
    ExportProgress { align: center middle; }
    ExportProgress > Vertical {
        width: 90; max-width: 100%; height: auto; border: thick $accent; background: $surface; padding: 0 1;
    }
    ExportProgress ProgressBar { margin: 1 0; }
    """
    BINDINGS = [Binding("escape", "stop", "Stop (nothing is written)")]

    def __init__(self, choice: ExportChoice, leaf_id: str, worker: Worker[None]) -> None:
        super().__init__()
        self.choice, self.leaf_id, self.worker = choice, leaf_id, worker
        self.finished = self.left = False
        self._progress: tuple[int, int] | None = None  # the latest (done, total)

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text("Exporting root → ", "bold")
            title.append(make_safe(self.leaf_id, keep_newlines=False), "bold cyan")
            title.append(f" as {FORMAT_NAMES.get(self.choice.fmt, self.choice.fmt)}", "bold")
            yield Static(title)
            yield Static(Text("to " + make_safe(str(self.choice.out), keep_newlines=False)))
            yield ProgressBar(show_eta=True, id="bar")
            yield Static(Text("reading the path …"), id="count")
            yield Static(Text("Esc stops the export; nothing is written", "dim"), id="keys")

    def update_progress(self, done: int, total: int) -> None:
        self._progress = (done, total)
        if self.is_mounted:  # else `on_mount` shows it: the export's progress can come before the screen's widgets
            self._show_progress()

    def on_mount(self) -> None:
        self._show_progress()

    def _show_progress(self) -> None:
        if self._progress is None:
            return
        done, total = self._progress
        self.query_one(ProgressBar).update(total=max(total, 1), progress=done)
        if not self.worker.is_cancelled:
            self.query_one("#count", Static).update(Text(f"{done:,} of {total:,} entries"))

    def action_stop(self) -> None:
        self.worker.cancel()
        self.query_one("#count", Static).update(Text("stopping …", "bold"))

    def done(self) -> None:
        """The export is over: go, now or when the screen on top of this one (the command palette) closes."""
        self.finished = True
        if self.is_active:  # the top screen: dismiss pops the top one
            self._leave()

    def on_screen_resume(self) -> None:
        if self.finished:
            self._leave()

    def _leave(self) -> None:
        if not self.left:  # once: a resume can follow the call that already dismissed it
            self.left = True
            self.dismiss()


def run_export(owner: Widget, tree: SessionTree, reader: EntryReader, leaf: Node, choice: ExportChoice) -> None:
    """Export root → `leaf` in a thread worker of `owner`, which then says where it went (or why not); the
    progress screen comes up if it takes a while."""
    from pitree.ops.export import ExportCancelled, ExportError, export_path

    app = owner.app
    screen: list[ExportProgress] = []  # once shown

    def export() -> None:
        worker = get_current_worker()
        last = 0.0

        def progress(done: int, total: int) -> None:
            nonlocal last
            if worker.is_cancelled:
                raise ExportCancelled()
            now = time.monotonic()
            if now - last >= REDRAW_EVERY or done == total:
                last = now
                app.call_from_thread(shown_progress, done, total)

        try:
            written = export_path(tree, reader, leaf, choice.fmt, choice.out, choice.thinking, choice.force, progress)
        except ExportCancelled as exc:
            app.call_from_thread(finish, str(exc), "not exported", "warning")
        except ExportError as exc:
            app.call_from_thread(finish, str(exc), "not exported", "error")
        except Exception as exc:  # a bug, said as such: the progress screen must not stay up over a dead export
            app.call_from_thread(finish, f"export failed: {type(exc).__name__}: {exc}", "not exported", "error")
            raise
        else:
            app.call_from_thread(finish, f"exported {written}", "export", "information")

    def shown_progress(done: int, total: int) -> None:
        if screen:
            screen[0].update_progress(done, total)

    def show() -> None:
        if worker.is_running and not screen:
            screen.append(ExportProgress(choice, leaf.id, worker))
            app.push_screen(screen[0])

    def finish(message: str, title: str, severity: str) -> None:
        timer.stop()
        if screen:
            screen[0].done()
        owner.notify(message, title=title, severity=severity, timeout=10)  # type: ignore[arg-type]

    owner.notify(f"exporting to {make_safe(str(choice.out), keep_newlines=False)} …")
    worker = owner.run_worker(export, thread=True, group="export", description="Exporting", exit_on_error=False)
    timer = owner.set_timer(SHOW_AFTER, show)
