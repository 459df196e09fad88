"""`PitreeApp`: composes the explorer (tree | entry, prompt, status, footer) and routes messages; its writes
(`writing.py`) and its other screens (`screens.py`) are mixins of their own.

Loading runs in a thread worker with a progress bar (the UI keeps answering keys, `q` quits mid-load);
live tailing runs in an async worker fed by `store.watch` and `store.tail`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pitree.session.context import ContextSize
from pitree.session.gcpause import Freezer, LoadPause
from pitree.session.load import SessionBuilder
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader, LoadCancelled, SessionFileError, load_session_fast
from pitree.summary.tokens import encoder_built
from pitree.widgets import textual_fixes
from pitree.widgets.after_load import AfterLoadMixin
from pitree.widgets.commands import CommandsMixin
from pitree.widgets.entry_view import EntryView
from pitree.widgets.live import LiveSession
from pitree.widgets.live_view import LiveViewMixin
from pitree.widgets.panes import PanesMixin
from pitree.widgets.prompt_bar import PromptBar
from pitree.widgets.screens.explorer_screens import ScreensMixin, asset_text
from pitree.widgets.status_bar import Status, StatusBar
from pitree.widgets.tree_header import TreeHeader
from pitree.widgets.tree_view import TreeView
from pitree.widgets.writing import WritingMixin
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Footer, ProgressBar, Static
from textual.worker import get_current_worker

PROGRESS_EVERY = 0.1  # seconds between redraws of the loading bar
# Sessions this big or bigger count tokens with tiktoken only on request (`t`): its tables cost ~30 MB, as
# much as the tree of a 30 MB session, and 15% of what a 100 MB session's explorer holds. Below it, the entry
# pane counts every entry it shows exactly from the start.
EXACT_TOKENS_FROM = 32_000_000

textual_fixes.apply()

if TYPE_CHECKING:
    from pitree.store.session_index import SessionIndex
    from pitree.widgets.screens.browser import BrowserState


class PitreeApp(LiveViewMixin, AfterLoadMixin, CommandsMixin, WritingMixin, ScreensMixin, PanesMixin):
    """The explorer on one session file."""

    TITLE = "pitree"
    CSS = asset_text("app.tcss")

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("n", "next_match(1)", "Next", show=False),
        Binding("N", "next_match(-1)", "Prev", show=False),
        Binding("g", "goto", "Go to id", show=False),
        Binding("o", "entry_link", "Go to the entry the pane names", show=False),
        Binding("f", "toggle_follow", "Follow"),
        Binding("r", "toggle_raw", "Raw JSON", show=False),
        Binding("s", "show_skipped", "Skipped", show=False),
        Binding("tab", "switch_pane", "Pane", show=False, priority=True),  # over the screen's focus_next
        Binding("w", "cycle_layout", "Layout", show=False),
        Binding("L", "label", "Label", key_display="⇧L"),
        Binding("c", "context", "Context"),
        Binding("u", "usage", "Usage"),
        Binding("e", "export", "Export"),
        Binding("t", "exact_tokens", "Exact tokens", show=False),
        Binding("escape", "sessions", "Sessions", show=False),
    ]

    # Keys of the explorer itself: off (and out of the footer) while another screen is on top.
    EXPLORER_ACTIONS = frozenset(
        {"search", "next_match", "goto", "toggle_follow", "toggle_raw", "show_skipped", "switch_pane", "label"}
        | {"cycle_layout"}
        | {"context", "usage", "sessions", "export", "exact_tokens"}
        | {"entry_link"}
    )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.EXPLORER_ACTIONS and len(self.screen_stack) > 1:
            return False
        if action == "sessions" and self.browser_state is None:
            return False
        return True

    class Progress(Message):
        """Posted by the load worker as bytes are parsed."""

        def __init__(self, done: int, total: int) -> None:
            self.done, self.total = done, total
            super().__init__()

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, PitreeApp.Progress)

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

    def __init__(
        self,
        path: Path | None,
        *,
        select_id: str | None = None,
        watch: bool = True,
        config_overrides: dict[str, object] | None = None,
        browser: BrowserState | None = None,
    ) -> None:
        """`path=None` starts in the sessions browser (`browser` says where; default: Pi's folder)."""
        super().__init__()
        self.config_overrides = config_overrides or {}
        if browser is None and path is None:
            from pitree.widgets.screens.browser import BrowserState

            browser = BrowserState()
        self.browser_state = browser
        self.path = path or Path()
        self.select_id = select_id
        self.watch_enabled = watch
        self.stree = None
        self.reader = None
        self.live: LiveSession | None = None
        self._index: SessionIndex | None = None  # the browser's, opened on first use
        self.follow_off = False  # set by `f`: stay put even on the leaf
        self._unseen = 0  # entries appended since the user last moved, while not following
        self._transient = False  # the status bar's file_state is news (new entries, a reload), not a condition
        self.exact_asked = False  # `t` was pressed: count exactly in every session from now on
        self.exact_tokens = False  # the entry pane counts with tiktoken in this session (see EXACT_TOKENS_FROM)
        self._entry_timer: Timer | None = None
        self._select_after_append: str | None = None
        self._appended_id: str | None = None  # the last entry pitree appended itself
        self._freezer = Freezer()  # keeps the loaded tree out of collections (see `_freeze_tree`)
        self._context_size: ContextSize | None = None  # Pi's size at the leaf, for the status bar
        self._freeze_timer: Timer | None = None
        self._load_pause: LoadPause | None = None  # collection off from a load's start to its first screen

    # ---- composition -------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="loading"):
            yield Static(id="loading-label")
            yield ProgressBar(id="progress", show_eta=False)
        with Horizontal(id="panes"):
            with Vertical(id="tree-pane"):
                yield TreeHeader(id="tree-head")
                yield TreeView(id="tree")
            yield EntryView(id="entry")
        yield PromptBar(id="prompt")
        yield StatusBar(id="status")
        yield Footer()

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    def _status(self, **changes: object) -> None:
        # Messages can still arrive while the app shuts down, after the screen and its status bar are gone.
        for bar in self.query(StatusBar):
            bar.update_status(**changes)

    def on_mount(self) -> None:
        if self.path == Path():
            self.query_one("#panes").display = False
            self.open_browser()
        else:
            self.open_session(self.path, self.select_id)

    def open_session(self, path: Path, select_id: str | None = None) -> None:
        """Show `path` in the explorer (a session from the browser, or the one given on the command line)."""
        if self.stree is not None and path == self.path:
            if select_id is not None:
                self.go_to_entry(select_id)
            return
        if self.live is not None:
            self.live.stop()
            self.live = None
        self.workers.cancel_group(self, "load")
        self.path, self.select_id = path, select_id
        self._freezer.leaving(self.stree)  # the tree left must be freed: never freeze it again
        self.stree = self.reader = None
        self.follow_off = False
        self._unseen, self._transient = 0, False
        if self._entry_timer is not None:
            self._entry_timer.stop()
        self.tree_view.forget_tree()
        self.query_one(EntryView).forget()
        self.title = f"pitree — {make_safe(path.name, keep_newlines=False)}"
        self.query_one(StatusBar).status = Status(file=path.name)
        self.query_one("#panes").display = False
        self.query_one("#loading").display = True
        self.query_one("#loading-label", Static).update(Text(f"Loading {make_safe(path.name, keep_newlines=False)} …"))
        progress = self.query_one("#progress", ProgressBar)
        progress.display = True
        # The file's size as the total from the start: the bar fills as the worker reports bytes read (an
        # indeterminate bar would animate every frame, drawing while the worker needs the interpreter).
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        progress.update(total=max(size, 1), progress=0)
        self.exact_tokens = self.exact_asked or size < EXACT_TOKENS_FROM or encoder_built()
        self.query_one(EntryView).exact_tokens = self.exact_tokens
        if path.exists():
            self.pause_collection_until_first_screen()
            self.load_session()
        else:
            self._show_waiting()
            self.start_live(None)

    def open_browser(self) -> None:
        """The sessions browser on top; choosing a session opens it here, Esc in the explorer comes back."""
        from pitree.widgets.screens.browser import BrowserScreen

        state = self.browser_state
        assert state is not None
        if self._index is None:
            from pitree.store.session_index import SessionIndex

            self._index = SessionIndex()

        def chosen(result: tuple[Path, str | None] | None) -> None:
            if result is None:
                self.exit(0)
            else:
                self.open_session(*result)

        self.push_screen(BrowserScreen(state, self._index), callback=chosen)

    def action_sessions(self) -> None:
        if self.browser_state is not None:
            if self.stree is not None:
                self.browser_state.selected = str(self.path)
            self.open_browser()

    def _show_waiting(self) -> None:
        label = self.query_one("#loading-label", Static)
        label.update(
            Text(
                f"Waiting for {make_safe(str(self.path), keep_newlines=False)} to be created "
                "(Pi writes nothing before the first answer) …"
            )
        )
        self.query_one("#progress", ProgressBar).display = False
        self._status(file_state="waiting for file")

    # ---- loading -----------------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load", description="Loading session", exit_on_error=False)
    def load_session(self) -> None:
        worker = get_current_worker()
        path = self.path
        pause = self._load_pause  # this load's, set by open_session before the worker started
        try:
            tree, builder = load_session_fast(
                path, progress=self._progress_poster(), cancelled=lambda: worker.is_cancelled
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
        self.post_message(self.Loaded(path, tree, builder))

    def _progress_poster(self, every: float = PROGRESS_EVERY) -> Callable[[int, int], None]:
        """The load's progress callback: a Progress message at most every `every` seconds (and at the end).
        Each one redraws the bar on the UI thread, which takes the interpreter from the parse: at one a
        megabyte, a 100 MB load took ~25% longer."""
        last = [0.0]

        def post(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= every or done >= total:
                last[0] = now
                self.post_message(self.Progress(done, total))

        return post

    def on_pitree_app_progress(self, message: Progress) -> None:
        self.query_one("#progress", ProgressBar).update(total=message.total, progress=message.done)

    def on_pitree_app_load_failed(self, message: LoadFailed) -> None:
        self.end_collection_pause()
        label = self.query_one("#loading-label", Static)
        label.update(Text(f"Cannot open the session: {make_safe(message.error, keep_newlines=False)}", "bold red"))
        self.notify(message.error, title="pitree", severity="error")

    def on_pitree_app_loaded(self, message: Loaded) -> None:
        if message.path != self.path:
            return  # a load that finished after another session was opened
        # Before anything else runs: a tree not yet frozen makes every collection walk it (seconds in all,
        # at 100,000 entries, while the first screen is drawn). Only the one session named on the command
        # line freezes at once; after the browser (its index made garbage) or a session left, freezing
        # waits for a collection, and that waits for the first screen.
        frozen = self.browser_state is None and self._freezer.freeze(collect=False)
        self.stree = message.stree
        self.reader = EntryReader(self.path, message.stree)
        self.query_one("#loading").display = False
        self.query_one("#panes").display = True
        view = self.tree_view
        view.show_tree(message.stree, select_id=self.select_id)
        chosen = view.cursor_node
        if self.select_id is not None and (chosen is None or chosen.id != self.select_id):
            self.go_to_entry(self.select_id)  # a filtered entry, or one without a row: say where the cursor went
        view.focus()
        self._update_status(context=False)
        self.call_after_refresh(self._after_first_screen, message.stree, frozen)
        if self.live is None:
            self.start_live(message.builder)
        else:
            self.live.builder = message.builder

    def start_live(self, builder: SessionBuilder | None) -> None:
        """Follow the file. Without watching (tests, --no-watch) `live.check()` still applies changes."""
        self.live = LiveSession(self, self.path, builder)
        if self.watch_enabled:
            self.live.start()

    # ---- routing -----------------------------------------------------------------------------------------

    @on(TreeView.LayoutChanged)
    def _layout_changed(self) -> None:
        if not self.query(TreeView):
            return  # shutting down
        for header in self.query(TreeHeader):
            header.refresh()
        self._status(filter=self.tree_view.filter_mode, matches=self._match_text(), follow=self.following)

    def action_toggle_raw(self) -> None:
        self.query_one(EntryView).toggle_raw()

    def action_exact_tokens(self) -> None:
        """Count tokens with tiktoken from now on (`t`), for a session too big for that to be on by default."""
        if self.exact_tokens:
            self.notify("Exact token counts (tiktoken cl100k) are on.", title="tokens")
            return
        self.exact_asked = self.exact_tokens = True
        self.query_one(EntryView).count_exactly()
        self.notify("Exact token counts (tiktoken cl100k) on: its tables take ~30 MB.", title="tokens")

    def action_switch_pane(self) -> None:
        entry = self.query_one(EntryView)
        if self.pane_layout == "tree":
            self.set_pane_layout("split")  # Tab asks for the entry pane: bring it back
        (self.tree_view if entry.has_focus else entry).focus()


def run_app(path: Path | None, select_id: str | None = None, browser: BrowserState | None = None) -> int:
    """The explorer on `path`, or (path None) the sessions browser first."""
    app = PitreeApp(path, select_id=select_id, browser=browser)
    app.run()
    return app.return_code or 0
