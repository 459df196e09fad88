"""`PitreeApp`: composes the explorer (tree | entry, prompt, status, footer) and routes messages; its writes
(`writing.py`) and its other screens (`screens.py`) are mixins of their own.

Loading runs in a thread worker with a progress bar (the UI keeps answering keys, `q` quits mid-load);
live tailing runs in an async worker fed by `store.watch` and `store.tail`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pitree.session.context import ContextSize, build_context, grown_size
from pitree.session.entries import Node
from pitree.session.gcpause import Freezer
from pitree.session.load import SessionBuilder
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader, LoadCancelled, SessionFileError, load_session_fast
from pitree.summary.tokens import encoder_built, load_encoder
from pitree.widgets.entry_view import EntryView
from pitree.widgets.prompt_bar import PromptBar
from pitree.widgets.status_bar import Status, StatusBar
from pitree.widgets.tree_header import TreeHeader
from pitree.widgets.tree_view import TreeView
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, ProgressBar, Static
from textual.worker import get_current_worker

from . import textual_fixes
from .live import LiveSession
from .navigate import NavigateMixin
from .panes import PanesMixin
from .screens import ScreensMixin, asset_text
from .writing import WritingMixin

PROGRESS_EVERY = 0.1  # seconds between redraws of the loading bar
# Sessions this big or bigger count tokens with tiktoken only on request (`t`): its tables cost ~30 MB, as
# much as the tree of a 30 MB session, and 15% of what a 100 MB session's explorer holds. Below it, the entry
# pane counts every entry it shows exactly from the start.
EXACT_TOKENS_FROM = 32_000_000
NEWS_SECONDS = 15  # how long "the file was rewritten" stays in the status bar if the user does not move

textual_fixes.apply()

if TYPE_CHECKING:
    from pitree.store.session_index import SessionIndex

    from .browser import BrowserState


class PitreeApp(NavigateMixin, WritingMixin, ScreensMixin, PanesMixin):
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
            from .browser import BrowserState

            browser = BrowserState()
        self.browser_state = browser
        self.path = path or Path()
        self.select_id = select_id
        self.watch_enabled = watch
        self.stree: SessionTree | None = None
        self.reader: EntryReader | None = None
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
            self.load_session()
        else:
            self._show_waiting()
            self.start_live(None)

    def open_browser(self) -> None:
        """The sessions browser on top; choosing a session opens it here, Esc in the explorer comes back."""
        from .browser import BrowserScreen

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
        try:
            tree, builder = load_session_fast(
                path, progress=self._progress_poster(), cancelled=lambda: worker.is_cancelled
            )
        except LoadCancelled:
            return
        except SessionFileError as exc:
            self.post_message(self.LoadFailed(str(exc)))
            return
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

    def _after_first_screen(self, tree: SessionTree, frozen: bool) -> None:
        """What the first screen of a session need not wait for: the context size in the status bar, the
        other filters' layouts and, after a session was left, collecting it and freezing the new tree."""
        if tree is not self.stree:
            return  # another session was opened meanwhile; its own load does this
        self._update_status()
        if not frozen:
            self._freeze_tree()
        self.prewarm_layouts()

    def _freeze_tree(self, tries: int = 5) -> None:
        """Freeze the loaded tree (fewer collector walks), once the tree left before it has been freed.

        A worker may still be finishing with the old tree: try again each second, `tries` times, then stay
        unfrozen (only collection time is lost, never memory)."""
        if self._freeze_timer is not None:
            self._freeze_timer.stop()
            self._freeze_timer = None
        if not self._freezer.freeze() and tries > 0:
            self._freeze_timer = self.set_timer(1.0, lambda: self._freeze_tree(tries - 1))

    @work(thread=True, exclusive=True, group="prewarm", description="Preparing filters", exit_on_error=False)
    def prewarm_layouts(self) -> None:
        # The token encoder first (the entry pane asks for it right away): the ~12 MB dict its build holds for
        # a moment is then reused by the layouts and the search index, not added to them (peak ~8 MB lower).
        if self.exact_tokens:
            load_encoder()
        self.tree_view.prewarm()
        if self.stree is not None:
            self.stree.search_index.update()  # so the first search is as fast as the next

    def _update_status(self, grown: list[Node] | None = None, context: bool = True) -> None:
        """The status bar from the tree. `grown`: entries that only extended the leaf, so the branch count
        stays and the context size grows by theirs (no walk over the tree or the path at 100k entries).
        `context=False` leaves the context size as it is (the first screen; it follows right after)."""
        tree = self.stree
        if tree is None:
            return
        leaf = tree.leaf
        bars = self.query(StatusBar)
        before = bars.first().status if bars else None
        branches = before.branches if grown and before else tree.leaf_count()
        size = None
        if grown and self._context_size is not None and tree.dialect == "pi":  # omp's rules look back: rebuild
            size = grown_size(self._context_size, grown)
        if size is None and context:
            size = build_context(tree, None).size  # Pi's estimateProjectedContextTokens at the leaf
        if size is not None:
            self._context_size = size
        tokens = size.tokens if size is not None else before.context_tokens if before is not None else None
        self._status(
            name=tree.name,
            entries=tree.entry_count,
            branches=branches,
            leaf=leaf.id if leaf else None,
            skipped=len(tree.skipped),
            context_tokens=tokens,
            filter=self.tree_view.filter_mode,
            follow=self.following,
        )

    # ---- live tail ---------------------------------------------------------------------------------------

    def start_live(self, builder: SessionBuilder | None) -> None:
        """Follow the file. Without watching (tests, --no-watch) `live.check()` still applies changes."""
        self.live = LiveSession(self, self.path, builder)
        if self.watch_enabled:
            self.live.start()

    def entries_added(self, added: list[Node], old_leaf: Node | None, was_following: bool) -> None:
        """Called by LiveSession on the UI thread after new entries joined the tree."""
        tree = self.stree
        if tree is None or not added:
            return
        view = self.tree_view
        new_leaf = tree.leaf
        extends = old_leaf is None or (new_leaf is not None and old_leaf in tree.branch(new_leaf))
        ours = self._select_after_append
        if ours is not None and tree.get(ours) is not None:
            # The entry pitree itself just appended (a jump or a label): show where Pi will continue.
            self._select_after_append = None
            view.show_tree(tree, select_id=ours)
            self._update_status()
            return
        view.show_tree(tree, select_id=new_leaf.id if (was_following and new_leaf) else None, added=added)
        if not extends and new_leaf is not None:
            self.notify(
                f"new leaf on another branch: {new_leaf.id} "
                f"({make_safe(tree.row_text(new_leaf), keep_newlines=False)[:60]})",
                title="session changed",
            )
        news = [n for n in added if n.id != self._appended_id]  # not the label pitree itself just wrote
        if not was_following and new_leaf is not None and news:
            self._unseen += len(news)
            self._news(f"{self._unseen} new entr{'y' if self._unseen == 1 else 'ies'}")
        self._update_status(grown=added if view.extended else None)
        entry = self.query_one(EntryView)
        if self.reader is not None and entry.node is not None and entry.node is view.cursor_node:
            # A label entry changes the header of the entry shown (a moved cursor loads through Highlighted).
            entry.show(entry.node, tree, self.reader)

    def session_reloaded(self, tree: SessionTree, builder: SessionBuilder, why: str) -> None:
        """Called by LiveSession after the file was rewritten or replaced: keep the selection by id."""
        node = self.tree_view.cursor_node
        self._freezer.leaving(self.stree)
        self.stree = tree
        self.reader = EntryReader(self.path, tree)
        if not self.query_one("#panes").display:
            self.query_one("#loading").display = False
            self.query_one("#panes").display = True
        self.tree_view.show_tree(tree, select_id=node.id if node else None)
        self._news(why, expire=NEWS_SECONDS)
        self.notify(why, title="session reloaded")
        self._update_status()
        self.call_after_refresh(self._freeze_tree)

    def file_state(self, state: str, severity: str = "warning") -> None:
        self._transient = False
        self._status(file_state=state)
        if state:
            self.notify(state, title="session file", severity=severity)  # type: ignore[arg-type]

    # ---- routing -----------------------------------------------------------------------------------------

    @on(TreeView.Highlighted)
    def _highlighted(self, message: TreeView.Highlighted) -> None:
        if not self.query(TreeView):
            return  # shutting down
        if self.stree is not None and self.reader is not None:
            # The entry pane follows once the cursor rests (80 ms): holding ↓ redraws only the tree.
            if self._entry_timer is not None:
                self._entry_timer.stop()
            node, tree, reader = message.node, self.stree, self.reader
            self._entry_timer = self.set_timer(0.08, lambda: self._show_entry(node, tree, reader))
        if message.moved and self._transient:
            self._unseen = 0
            self._news("")
        self._status(follow=self.following, matches=self._match_text())

    def _show_entry(self, node: Node | None, tree: SessionTree, reader: EntryReader) -> None:
        for view in self.query(EntryView):
            view.show(node, tree, reader)
        self._mark_compaction(node, tree)

    def _mark_compaction(self, node: Node | None, tree: SessionTree) -> None:
        """A selected compaction marks, in the tree, the entries it summarized and those it kept."""
        marks: dict[str, str] = {}
        legend = ""
        if node is not None and node.type == "compaction":
            from pitree.report import compaction_split

            split = compaction_split(tree, node)
            marks = {m.node.id: "summarized" for m in split.summarized + split.dropped}
            marks.update((m.node.id, "kept") for m in split.kept)
            legend = f"▒ summarized {len(split.summarized)} · ▌ kept {len(split.kept)}"
            if split.dropped:  # Pi 1.x: system messages never stay; the checkpoint replays them
                legend += f" · ▒ system dropped {len(split.dropped)}"
            if split.retain_none:
                legend += " (retain-none)"
            elif not split.first_kept_on_path:
                legend += " (first kept entry not on the path)"
        for view in self.query(TreeView):
            view.set_marks(marks)
        self._status(audit=legend)

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

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        view = self.tree_view
        yield SystemCommand("Search entries", "Highlight entries matching words (/)", self.action_search)
        yield SystemCommand("Go to entry id", "Jump to an entry by id or prefix (g)", self.action_goto)
        yield SystemCommand("Toggle follow", "Follow new entries at the leaf (f)", self.action_toggle_follow)
        yield SystemCommand("Toggle raw JSON", "Show the selected line as stored (r)", self.action_toggle_raw)
        yield SystemCommand("Skipped lines and notes", "Lines that are not entries (s)", self.action_show_skipped)
        yield SystemCommand("Context view", "What the model gets at the selected entry (c)", self.action_context)
        yield SystemCommand("Usage", "Tokens and cost per model and per branch (u)", self.action_usage)
        yield SystemCommand(
            "Exact token counts", "Count the entry pane's tokens with tiktoken cl100k (t)", self.action_exact_tokens
        )
        yield SystemCommand("Export", "Root → selected entry as Markdown, HTML or a Pi session (e)", self.action_export)
        for mode in ("default", "no-tools", "user-only", "labeled-only", "all"):
            yield SystemCommand(
                f"Filter: {mode}", f"Show the {mode} view of the tree", lambda m=mode: view.action_filter(m)
            )
        for col in ("time", "model", "tokens"):
            yield SystemCommand(
                f"Toggle {col} column", f"Show or hide the {col} column", lambda c=col: view.action_toggle_column(c)
            )


def run_app(path: Path | None, select_id: str | None = None, browser: BrowserState | None = None) -> int:
    """The explorer on `path`, or (path None) the sessions browser first."""
    app = PitreeApp(path, select_id=select_id, browser=browser)
    app.run()
    return app.return_code or 0
