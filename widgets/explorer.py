"""`Explorer`: one session on screen — the tree and the entry pane (`Panes`), the loading screen, the prompt and
the status bar — and what its keys do. It loads the file (`LoadingPane`), follows it (`LiveSession`, whose
messages it handles) and routes what its widgets post; its writes are `WritingMixin`'s (`writing.py`), its state
`ExplorerState`'s (`explorer_state.py`). The App above it opens the browser and shows the title it posts.
"""

from __future__ import annotations

from pathlib import Path

from pitree.memory import return_freed_memory
from pitree.session.entries import Node
from pitree.session.layout import TRIM_ROWS
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader
from pitree.summary.tokens import load_encoder
from pitree.widgets import explorer_status
from pitree.widgets.compare import CompareMixin
from pitree.widgets.entry_link import EntryLink
from pitree.widgets.entry_view import EntryView
from pitree.widgets.explorer_search import SearchMixin
from pitree.widgets.explorer_status import compaction_marks
from pitree.widgets.live import LiveSession
from pitree.widgets.loading_pane import LoadingPane
from pitree.widgets.panes import Panes
from pitree.widgets.prompt_bar import PromptBar
from pitree.widgets.screens import explorer_screens
from pitree.widgets.screens.text_screen import TextScreen, text_width
from pitree.widgets.status_bar import Status, StatusBar
from pitree.widgets.tree_header import TreeHeader
from pitree.widgets.tree_view import TreeView
from pitree.widgets.writing import WritingMixin
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.worker import get_current_worker

COUNTING_USAGE = "counting usage…"
# Seconds between a big session's first screen and the preparation of its other filters (and its context size):
# run at once, beside what the first screen still does on the UI thread, their allocations interleaved and ~16 MB
# stayed taken at 1M entries (freed objects scattered over blocks that live on).
PREPARE_AFTER = 0.5


class Explorer(CompareMixin, WritingMixin, SearchMixin):
    """The explorer on one session file at a time (`open_session`)."""

    DEFAULT_CSS = "Explorer { height: 1fr; }"

    BINDINGS = [
        # The app's own keys, bound here too so that the footer lists them before the explorer's, as it always has.
        Binding("q", "app.quit", "Quit"),
        Binding("question_mark", "app.help", "Help", key_display="?"),
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
        Binding("m", "mark", "Mark", show=False),
        Binding("d", "compare", "Compare", show=False),
    ]

    class SessionOpened(Message):
        """Posted when the explorer starts showing another session file (loading it, or waiting for it)."""

        def __init__(self, path: Path) -> None:
            self.path = path
            super().__init__()

    def compose(self) -> ComposeResult:
        yield LoadingPane(id="loading")
        yield Panes(id="panes")
        yield PromptBar(id="prompt")
        yield StatusBar(id="status")

    def on_mount(self) -> None:
        if self.path == Path():
            self.query_one(Panes).display = False
        else:
            self.open_session(self.path, self.select_id)

    def on_resize(self, event: events.Resize) -> None:
        self.query_one(Panes).fit(event.size.width)  # hidden while loading: it gets no resize of its own

    # ---- opening and loading -----------------------------------------------------------------------------

    def open_session(self, path: Path, select_id: str | None = None) -> None:
        """Show `path` (a session from the browser, or the one given on the command line)."""
        if self.stree is not None and path == self.path:
            if select_id is not None:
                self.go_to_entry(select_id)
            return
        self.keep_first_screen()
        self._open(path, select_id)

    def _open(self, path: Path, select_id: str | None) -> None:
        loading = self.query_one(LoadingPane)
        self.freezer.leaving(self.stree)  # the tree left must be freed: never freeze it again
        self._leave(path, select_id)
        self.post_message(self.SessionOpened(path))
        self.query_one(StatusBar).status = Status(file=path.name)
        self.query_one(Panes).display = False
        loading.display = True
        size = loading.start(path, at_leaf=select_id is None)
        self.query_one(EntryView).exact_tokens = self._count_exactly(size)
        if loading.kept is not None:  # shown first: the load takes the interpreter from the UI
            self._status(**loading.kept.status)
            loading.preview.focus()
            self.call_after_refresh(loading.load, path, self.freezer.pause_collection())
        elif path.exists():
            loading.load(path, self.freezer.pause_collection())
        else:
            loading.show_waiting(path)
            self._status(file_state="waiting for file")
            self.start_live(None)

    @on(LoadingPane.Loaded)
    def _loaded(self, message: LoadingPane.Loaded) -> None:
        if message.path != self.path:
            return  # a load that finished after another session was opened
        # Before anything else runs: a tree not yet frozen makes every collection walk it while the first screen
        # is drawn. Only the one session named on the command line freezes at once; after the browser (its index
        # made garbage) or a session left, freezing waits for a collection, and that waits for the first screen.
        frozen = self.freeze_first and self.freezer.freeze_now()
        # The preview's cursor (the leaf's, or where the user moved it), unless another entry was asked for: the
        # tree's goes to the same entry on the same screen row, so nothing moves when the tree replaces the preview.
        loading = self.query_one(LoadingPane)
        at = None if self.select_id else loading.preview_cursor()
        select = self.select_id or (at[0] if at else None)
        height = loading.preview.size.height if loading.kept is not None else 0  # where the tree is drawn next
        self._show(message.stree)
        view = self.tree_view
        view.show_tree(message.stree, select_id=select, screen_row=at[1] if at else None, height=height)
        chosen = view.cursor_node
        if select is not None and (chosen is None or chosen.id != select):
            self.go_to_entry(select)  # a filtered entry, or one without a row: say where the cursor went
        view.focus()
        self._update_status(context=False)
        self.call_after_refresh(self._after_first_screen, message.stree, frozen)
        if self.live is None:
            self.start_live(message.builder)
        else:
            self.live.builder = message.builder
        self._reopened_news()

    def _show(self, tree: SessionTree) -> None:
        self._hold(tree)
        self.query_one(LoadingPane).display = False
        self.query_one(Panes).display = True

    def _after_first_screen(self, tree: SessionTree, frozen: bool) -> None:
        """What the first screen of a session need not wait for: the context size in the status bar, the
        other filters' layouts and, after a session was left, collecting it and freezing the new tree."""
        if tree is not self.stree:
            return  # another session was opened meanwhile; its own load does this
        try:
            measure = self._update_status(later=True)
            self.keep_first_screen()
            if not frozen:
                self.freezer.freeze()
        finally:
            self.freezer.end_pause()  # collection comes back once the tree is frozen (or found not freezable yet)
        if len(tree.nodes) < explorer_status.MEASURE_IN_THREAD:
            self.prewarm_layouts(measure)
        else:  # once the first screen has settled (its entry pane read, its rows drawn): see PREPARE_AFTER
            self.set_timer(PREPARE_AFTER, lambda: self.prewarm_layouts(measure) if tree is self.stree else None)

    @work(thread=True, exclusive=True, group="prewarm", description="Preparing filters", exit_on_error=False)
    def prewarm_layouts(self, measure: bool = False) -> None:
        """The status bar's context size first (`measure`: the first screen asked for it), then the other filters'
        layouts and the search index."""
        tree = self.stree
        if measure and tree is not None:
            self.measure_context(tree, tree.leaf)
        self._prepare()

    @on(LoadingPane.LoadFailed)
    def _load_failed(self) -> None:
        self.freezer.end_pause()

    def on_unmount(self) -> None:
        self.freezer.end_pause()
        if self.live is not None:
            self.live.stop()  # its check of the file runs in a task and a thread of its own

    def _prepare(self) -> None:
        # The token encoder first (the entry pane asks for it right away): the dict its build holds for a
        # moment is then reused by the layouts and the search index, not added to them.
        if self.exact_tokens:
            load_encoder()
        pace = getattr(self.app, "pause_for_input", None)  # PitreeApp's: this work waits while keys are pressed
        self.tree_view.prewarm(pace)
        tree = self.stree
        if tree is not None:
            tree.search_index.update(pace)  # so the first search is as fast as the next
            if len(tree.nodes) > TRIM_ROWS:
                return_freed_memory()  # what the builds freed (pass 1's arrays, the index's blocks), not kept

    # ---- what the live tail brings -----------------------------------------------------------------------

    @on(LiveSession.EntriesAppended)
    def entries_added(self, message: LiveSession.EntriesAppended) -> None:
        tree, added = self.stree, message.added
        if tree is None or not added or tree.get(added[0].id) is not added[0]:
            return  # entries of a session left meanwhile
        view = self.tree_view
        was_following = self.following  # at the leaf the view still shows
        new_leaf = tree.leaf
        old_leaf = message.old_leaf
        extends = old_leaf is None or (new_leaf is not None and old_leaf in tree.branch(new_leaf))
        ours = self._take_appended(tree)
        if ours is not None:
            # The entry pitree itself just appended (a jump or a label): show where Pi will continue.
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

    @on(LiveSession.FileRewritten)
    def _file_rewritten(self, message: LiveSession.FileRewritten) -> None:
        """Read the file again as a session is opened (both cores, progress, cancel, the tree cache; the tree left
        is freed first), the selection kept by id; not its kept first screen, made from what is stale."""
        if message.live is not self.live:
            return  # the tail of a session left meanwhile
        node = self.tree_view.cursor_node
        self.reopened = message.why
        self._open(self.path, node.id if node is not None else self.select_id)

    @on(LiveSession.FileStateChanged)
    def _file_state_changed(self, message: LiveSession.FileStateChanged) -> None:
        self._transient = False
        self._status(file_state=message.state)
        if message.state:
            self.notify(message.state, title="session file", severity=message.severity)  # type: ignore[arg-type]

    @on(LiveSession.TitleChanged)
    def _title_changed(self, message: LiveSession.TitleChanged) -> None:
        self._status(name=message.name)

    # ---- what the tree and the prompt post ---------------------------------------------------------------

    @on(TreeView.Highlighted)
    def _highlighted(self, message: TreeView.Highlighted) -> None:
        if not self.query(TreeView):
            return  # shutting down
        if self.stree is not None and self.reader is not None:
            node, tree, reader = message.node, self.stree, self.reader
            self._when_still(lambda: self._show_entry(node, tree, reader))  # the entry pane follows the rested cursor
        if message.moved and self._transient:
            self._unseen = 0
            self._news("")
        self._status(follow=self.following, matches=self._match_text())

    def _show_entry(self, node: Node | None, tree: SessionTree, reader: EntryReader) -> None:
        for view in self.query(EntryView):
            view.show(node, tree, reader)
        self.workers.cancel_group(self, "marks")
        if "compaction_split" in tree.memo:  # the split of a compaction left (two contexts), not kept for later
            from pitree.cli.report_context import forget_split

            forget_split(tree, node)
        if node is not None and node.type == "compaction" and len(tree.nodes) >= explorer_status.MEASURE_IN_THREAD:
            self._set_marks({}, "")  # the last compaction's marks go at once; this one's come from a thread
            self._mark_compaction(tree, node)
            return
        self._set_marks(*compaction_marks(tree, node))

    @work(thread=True, exclusive=True, group="marks", description="Splitting the compaction", exit_on_error=False)
    def _mark_compaction(self, tree: SessionTree, node: Node) -> None:
        """A compaction's marks: its split builds Pi's context before and after it (a second at 1M entries)."""
        marks, legend = compaction_marks(tree, node)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._marked, tree, node, marks, legend)

    def _marked(self, tree: SessionTree, node: Node, marks: dict[str, str], legend: str) -> None:
        if tree is self.stree and self.tree_view.cursor_node is node:  # else the cursor moved on meanwhile
            self._set_marks(marks, legend)

    def _set_marks(self, marks: dict[str, str], legend: str) -> None:
        for tree_view in self.query(TreeView):
            tree_view.set_marks(marks)
        self._status(audit=legend)

    @on(TreeView.LayoutChanged)
    def _layout_changed(self) -> None:
        if not self.query(TreeView):
            return  # shutting down
        for header in self.query(TreeHeader):
            header.refresh()
        self._status(filter=self.tree_view.filter_mode, matches=self._match_text(), follow=self.following)

    @on(EntryLink.Chosen)
    def _entry_link_chosen(self, message: EntryLink.Chosen) -> None:
        """A line of the entry pane naming another entry (a context edit's target, say) was chosen."""
        if self.go_to_entry(message.entry_id):
            self.tree_view.focus()

    # ---- keys --------------------------------------------------------------------------------------------

    def action_entry_link(self) -> None:
        self.query_one(EntryView).action_go_to()

    def action_toggle_follow(self) -> None:
        if self.following:
            self.follow_off = True
        else:
            self.follow_off = False
            if self.stree is not None and self.stree.leaf is not None:
                self.tree_view.select_id(self.stree.leaf.id)
        self._status(follow=self.following)

    def action_toggle_raw(self) -> None:
        self.query_one(EntryView).toggle_raw()

    def action_switch_pane(self) -> None:
        self.query_one(Panes).switch_focus()

    def action_cycle_layout(self) -> None:
        self.notify(self.query_one(Panes).cycle(), title="layout (w)", timeout=2)

    def action_context(self) -> None:
        """The exact context the model gets with the selected entry as the leaf."""
        from pitree.widgets.screens.context_view import ContextScreen

        if self.stree is None or self.reader is None:
            return

        def back(entry_id: str | None) -> None:
            if entry_id is not None:
                self.go_to_entry(entry_id)

        self.push_screen(ContextScreen(self.stree, self.reader, self.tree_view.cursor_node), callback=back)

    def action_usage(self) -> None:
        if self.stree is not None:
            self._news(COUNTING_USAGE)
            self._count_usage(self.stree)

    @work(thread=True, exclusive=True, group="usage", description="Counting usage", exit_on_error=False)
    def _count_usage(self, tree: SessionTree) -> None:
        # A walk of the whole session: seconds at a million entries, so never on the UI thread.
        body = explorer_screens.usage_text(tree, text_width(self.app.size.width))
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_usage, tree, body)

    def _show_usage(self, tree: SessionTree, body: Text) -> None:
        self._expire_news(COUNTING_USAGE)
        if tree is self.stree:  # not a session left meanwhile
            self.push_screen(TextScreen(explorer_screens.USAGE_TITLE, body))

    def action_show_skipped(self) -> None:
        if self.stree is not None:
            builder = self.live.builder if self.live is not None else None
            self.push_screen(explorer_screens.skipped_screen(self.stree, self.path, builder))

    def action_export(self) -> None:
        """Export root → the selected entry (Markdown, HTML or a new Pi session file)."""
        from pitree.widgets.screens.export_dialog import ExportChoice, ExportDialog
        from pitree.widgets.screens.export_progress import run_export

        node = self.tree_view.cursor_node
        if self.stree is None or self.reader is None or node is None:
            return

        def chosen(choice: ExportChoice | None) -> None:
            if choice is not None and self.stree is not None and self.reader is not None and node is not None:
                run_export(self, self.stree, self.reader, node, choice)

        self.push_screen(ExportDialog(self.path, node.id), callback=chosen)
