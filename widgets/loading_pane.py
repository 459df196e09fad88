"""`LoadingPane`: what the explorer shows while a session loads — its name and a progress bar fed by the load
worker (the UI keeps answering keys meanwhile), beside the session's kept first screen when it has one
(`TreePreview`) — or why there is nothing yet: the file is not created, or cannot be read. It runs the load
itself and posts `Loaded` or `LoadFailed` when done."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pitree.session.gcpause import LoadPause
from pitree.session.load import SessionBuilder
from pitree.session.text import count, make_safe
from pitree.session.tree import SessionTree
from pitree.store import first_screen
from pitree.store.leaf_branch import read_leaf_branch
from pitree.store.session_file import LoadCancelled, SessionFileError, load_session_fast
from pitree.widgets.panes import STACK_BELOW
from pitree.widgets.tree_header import TreeHeader
from pitree.widgets.tree_preview import TreePreview, branch_screen
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import ProgressBar, Static
from textual.worker import get_current_worker

PROGRESS_EVERY = 0.1  # seconds between redraws of the loading bar


class LoadingPane(Vertical):
    """The loading screen of one session; `load(path)` starts reading it."""

    kept: first_screen.FirstScreen | None = None  # the session's kept first screen (or leaf's branch), shown meanwhile
    kept_is_branch = False  # `kept` is the leaf's branch read from the end (a first open), not a kept first screen
    _path: Path | None = None  # the session being loaded (None once it is loaded or failed)
    _failed = False  # the file could not be read (until another is opened)

    class Progress(Message):
        """Posted by the load worker as bytes are parsed."""

        def __init__(self, done: int, total: int) -> None:
            self.done, self.total = done, total
            super().__init__()

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, LoadingPane.Progress)

    class Loaded(Message):
        """Posted when the load worker has built the tree."""

        def __init__(self, path: Path, tree: SessionTree, builder: SessionBuilder) -> None:
            self.path, self.stree, self.builder = path, tree, builder
            super().__init__()

    class LoadFailed(Message):
        """Posted when the file could not be read."""

        def __init__(self, error: str) -> None:
            self.error = error
            super().__init__()

    def compose(self) -> ComposeResult:
        with Vertical(id="preview-pane"):
            yield TreeHeader(id="preview-head")
            yield TreePreview(id="preview")
        with Vertical(id="loading-box"):
            yield Static(id="loading-label")
            yield ProgressBar(id="progress", show_eta=False)

    @property
    def preview(self) -> TreePreview:
        return self.query_one(TreePreview)

    def start(self, path: Path, at_leaf: bool = True) -> int:
        """Show `path` as loading (the bar empty), beside its kept first screen if it has one (`kept`) and it opens
        at the leaf as that screen did (`at_leaf`); returns its size in bytes (0 when it cannot be read)."""
        self.cancel()
        self._path, self._failed = path, False
        self.kept = first_screen.load(path) if at_leaf else None
        self.kept_is_branch = False
        self.set_class(self.kept is not None, "-preview")
        self.set_class(self.app.size.width < STACK_BELOW, "-stacked")
        name = make_safe(path.name, keep_newlines=False)
        if self.kept is not None:
            self.preview.show(self.kept)
            label = f"Reading {name} …\nShown meanwhile: its tree as it opened last time."
        else:
            label = f"Loading {name} …"
        self.query_one("#loading-label", Static).update(Text(label))
        progress = self.query_one("#progress", ProgressBar)
        progress.display = True
        # The file's size as the total from the start: the bar fills as the worker reports bytes read (an
        # indeterminate bar would animate every frame, drawing while the worker needs the interpreter).
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        progress.update(total=max(size, 1), progress=0)
        if self.kept is None and at_leaf and size >= first_screen.MIN_BYTES:
            self.read_branch(path)
        return size

    @work(thread=True, exclusive=True, group="leaf-branch", description="Reading the leaf's path", exit_on_error=False)
    def read_branch(self, path: Path) -> None:
        """A first open of a big session: its leaf's branch, read from the end of the file while the tree loads."""
        worker = get_current_worker()
        branch = read_leaf_branch(path, cancelled=lambda: worker.is_cancelled)
        screen = branch_screen(branch) if branch is not None else None
        if screen is not None and not worker.is_cancelled:
            self.app.call_from_thread(self._show_branch, path, screen, branch is not None and branch.complete)

    def _show_branch(self, path: Path, screen: first_screen.FirstScreen, complete: bool) -> None:
        if path != self._path or self.kept is not None:
            return  # loaded, failed or left meanwhile
        self.kept, self.kept_is_branch = screen, True
        self.add_class("-preview")
        self.preview.show(screen)
        name = make_safe(path.name, keep_newlines=False)
        what = "its leaf's branch" if complete else f"its leaf's branch, the last {count(len(screen.rows), 'row')}"
        self.query_one("#loading-label", Static).update(
            Text(f"Reading {name} …\nShown meanwhile: {what},\nread from the end of the file. The tree comes next.")
        )
        if self.screen.focused is None:
            self.preview.focus()

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < STACK_BELOW, "-stacked")  # as `Panes.fit` does for the tree

    def preview_cursor(self) -> tuple[str, int] | None:
        """The entry under the shown preview's cursor and the screen row it is drawn on: a kept first screen's
        (the tree's own first screen, so its rows stay put), a leaf's branch's where the user moved it (left on
        the leaf, the tree centres it as it does any new session); None when no preview is shown."""
        preview, kept = self.preview, self.kept
        if kept is None or preview.cursor_id is None or (self.kept_is_branch and preview.cursor == kept.leaf_row):
            return None
        return preview.cursor_id, preview.cursor_row

    def waiting_for(self) -> str | None:
        """What the tree waits for, for a key that needs it: the rest of the file read, or the file itself;
        None when the file could not be read."""
        if self._failed:
            return None
        progress = self.query_one("#progress", ProgressBar)
        if not progress.display:
            return "once the session file exists and is read"
        share = (progress.progress or 0) / (progress.total or 1)
        return f"once the tree is read ({min(99, int(share * 100))}% so far)"

    def cancel(self) -> None:
        self.workers.cancel_group(self, "load")
        self.workers.cancel_group(self, "leaf-branch")

    def show_waiting(self, path: Path) -> None:
        self.query_one("#loading-label", Static).update(
            Text(
                f"Waiting for {make_safe(str(path), keep_newlines=False)} to be created "
                "(Pi writes nothing before the first answer) …"
            )
        )
        self.query_one("#progress", ProgressBar).display = False

    @work(thread=True, exclusive=True, group="load", description="Loading session", exit_on_error=False)
    def load(self, path: Path, pause: LoadPause | None = None) -> None:
        """Read `path` into a tree; `pause` (collection held off for this load) is released here only if the
        worker dies: otherwise the first screen or the failure notice ends it."""
        worker = get_current_worker()
        try:
            tree, builder = load_session_fast(
                path, progress=self.progress_poster(), cancelled=lambda: worker.is_cancelled
            )
        except LoadCancelled:
            return
        except SessionFileError as exc:
            self.post_message(self.LoadFailed(str(exc)))
            return
        except BaseException:
            if pause is not None:  # no first screen will end it: collection must not stay off
                pause.release()
            raise
        finally:
            if self._path == path:  # a leaf's branch that comes from now on is not shown
                self._path = None
        self.post_message(self.Loaded(path, tree, builder))

    def progress_poster(self, every: float = PROGRESS_EVERY) -> Callable[[int, int], None]:
        """The load's progress callback: a Progress message at most every `every` seconds (and at the end).
        Each one redraws the bar on the UI thread, which takes the interpreter from the parse."""
        last = [0.0]

        def post(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= every or done >= total:
                last[0] = now
                self.post_message(self.Progress(done, total))

        return post

    def on_loading_pane_progress(self, message: Progress) -> None:
        message.stop()
        self.query_one("#progress", ProgressBar).update(total=message.total, progress=message.done)

    def on_loading_pane_load_failed(self, message: LoadFailed) -> None:
        self.kept, self._failed = None, True
        self.remove_class("-preview")
        self.query_one("#loading-label", Static).update(
            Text(f"Cannot open the session: {make_safe(message.error, keep_newlines=False)}", "bold red")
        )
        self.notify(message.error, title="pitree", severity="error")
