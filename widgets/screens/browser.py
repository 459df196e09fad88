"""`BrowserScreen`: every Pi session on disk (`pitree` with no file), and full-text search across them.

The list comes from the SQLite index (`store.session_index`): what it already holds is on screen at once, then
a refresh in a process of its own (`store.index_thread`, `store.index_child`: drawing never takes the GIL from
it) brings it up to date with a progress bar (cold: every file is read, and rows are listed as they are written,
newest first; warm: only new and changed ones; `x` stops it; a failure is said in the head), and a watch on the
sessions folder refreshes it whenever Pi writes. The current folder's sessions come first (Pi's cwd match); Tab
shows all of them. Forked sessions sit under their parent (header `parentSession`). `/` searches every session
(words, "phrase", re:regex); Enter opens the selected session, or a search hit at its entry. The screen
dismisses with (path, entry id or None).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from pitree.session.summary_info import SessionInfo, thread_sessions
from pitree.session.text import count, make_safe
from pitree.store.catalog import session_roots
from pitree.store.index_thread import IndexRefresh
from pitree.store.session_index import RefreshStats, SearchHit, SessionIndex
from pitree.store.watch import watch_sessions
from pitree.widgets.screens import browser_messages as msgs
from pitree.widgets.screens.browser_columns import HIT_COLUMNS, head_start, hit_cells, session_cells, session_columns
from pitree.widgets.screens.rows_table import RowsTable
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, ProgressBar, Static
from textual.worker import get_current_worker

SEARCH_DELAY = 0.2  # seconds of no typing before a search runs
# Seconds between relists while indexing adds rows: each reads and sorts the whole index again (~35 ms at 3,000
# sessions), the table draws only what is on screen.
RELIST_EVERY = 1.0
STOPPED = "indexing stopped: the list holds what was read (it resumes when Pi writes)"
PROGRESS_EVERY = 0.25  # seconds between the index refresh's progress messages (each one costs the UI a redraw)


@dataclass
class BrowserState:
    """What the browser remembers while a session is open, so Esc comes back to the same place."""

    session_dir: str | None = None
    cwd: str = field(default_factory=os.getcwd)
    show_all: bool = False
    query: str = ""
    selected: str | None = None  # path of the selected row


class BrowserScreen(Screen[tuple[Path, str | None] | None]):
    """The sessions list and search. Dismisses with (path, entry id) to open, or None (quit)."""

    DEFAULT_CSS = """
    BrowserScreen { layout: vertical; }
    BrowserScreen #browser-head { height: auto; padding: 0 1; background: $panel; }
    BrowserScreen #browser-search { display: none; }
    BrowserScreen #browser-progress { height: 1; margin: 0 1; display: none; }
    BrowserScreen RowsTable { height: 1fr; }
    """
    # The refresh runs in a child process (see the module docstring); a test that stalls the reading in this
    # process sets it False.
    refresh_in_own_process = True
    BINDINGS = [
        Binding("tab", "toggle_scope", "This folder / all", priority=True),
        Binding("slash", "search", "Search all", key_display="/"),
        Binding("escape", "clear_search", "Back to the list", show=False),
        Binding("x", "stop_indexing", "Stop indexing"),
        Binding("q", "quit_browser", "Quit"),
    ]

    # The messages its workers post (`browser_messages`), by the names handlers use.
    Refreshed, Progress, Written, Found = msgs.Refreshed, msgs.Progress, msgs.Written, msgs.Found

    def __init__(self, state: BrowserState, index: SessionIndex | None = None) -> None:
        super().__init__()
        self.state = state
        # Pi's sessions and oh-my-pi's (one folder when they are the same); the first is Pi's
        self.roots = [root for root, _ in session_roots(state.session_dir)]
        self.root = self.roots[0]
        self.index = index or SessionIndex()
        self.sessions: list[SessionInfo] = []
        self.rows: list[tuple[SessionInfo, int]] = []
        self.hits: list[SearchHit] = []
        self.mode = "sessions"  # or "hits"
        self._columns_for = 0  # the width the session columns were chosen for
        self.refreshing = False
        self._refresh: IndexRefresh | None = None  # the running (or last) index refresh
        self._refresh_error: str | None = None
        self._indexing: tuple[int, int] | None = None  # (files read, files to read) while indexing
        self.stats: RefreshStats | None = None
        self._search_timer: Timer | None = None
        self._stop_watch = asyncio.Event()
        self._listed_at = 0.0  # monotonic time of the last show_sessions
        self._head_shape: tuple[int, ...] = ()  # where the head's spaces are: the same, it wraps the same
        self._by_path_of: list[SessionInfo] | None = None
        self._by_path_cache: dict[str, SessionInfo] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="browser-head")
        yield Input(placeholder='search every session: words, "a phrase", re:regex — Enter opens', id="browser-search")
        yield ProgressBar(id="browser-progress", show_eta=False)
        yield RowsTable(id="browser-table")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(RowsTable).focus()
        self.show_sessions()
        self.refreshing = True
        # After the first frame: the refresh's process starting would otherwise compete with drawing the rows.
        self.call_after_refresh(self._first_refresh)
        for i, root in enumerate(self.roots):
            self.run_worker(self._watch(root), group=f"browser-watch-{i}", exclusive=True, exit_on_error=False)
        if self.state.query:
            box = self.query_one(Input)
            box.display = True
            box.value = self.state.query
            self.run_search(self.state.query)

    def on_unmount(self) -> None:
        self._stop_watch.set()
        self._stop_refresh()

    def on_resize(self, event: events.Resize) -> None:
        if self.mode == "sessions" and event.size.width != self._columns_for:
            self.show_sessions()  # the columns that fit the new width

    # ---- the index ------------------------------------------------------------------------------------------

    def refresh_index(self) -> None:
        """Bring the index up to date in a process of its own (`refresh_in_own_process`); its messages come as the
        ones below."""
        self._stop_refresh()
        poster, own = msgs.Poster(self.post_message), self.refresh_in_own_process
        self._refresh = IndexRefresh(self.index, self.roots, poster, PROGRESS_EVERY, own_process=own).start()

    def _first_refresh(self) -> None:
        if self.refreshing and self._refresh is None:  # not stopped (`x`) nor started by a watch meanwhile
            self.refresh_index()

    def _stop_refresh(self) -> None:
        """Stop the running refresh, if any; it is told nothing more (what it read is kept in the index)."""
        if self._refresh is not None:
            self._refresh.cancel()

    async def _watch(self, root: Path) -> None:
        async for _ in watch_sessions(root, self._stop_watch, poll_fallback=30.0):
            if not self.refreshing:
                self.refreshing = True
                self.refresh_index()

    def on_browser_screen_progress(self, message: msgs.Progress) -> None:
        if self.refreshing and message.total and message.done < message.total:
            self._indexing = (message.done, message.total)
            bar = self.query_one(ProgressBar)
            if not bar.display:
                bar.display = True
            bar.update(total=message.total, progress=message.done)
            self._update_head()

    def on_browser_screen_written(self, message: msgs.Written) -> None:
        # What is indexed so far, so a cold start shows rows at once: the first batch right away, then what has
        # been written since, every RELIST_EVERY seconds.
        due = not self.sessions or time.monotonic() - self._listed_at > RELIST_EVERY
        if self.refreshing and self.mode == "sessions" and due:
            self.show_sessions()

    def _busy(self) -> str | None:
        if not self.refreshing or self._indexing is None:
            return None
        return f"indexing {self._indexing[0]:,}/{self._indexing[1]:,} sessions … (x stops)"

    def action_stop_indexing(self) -> None:
        if not self.refreshing:
            return
        self._stop_refresh()
        self.refreshing = False
        self._indexing = None
        self.query_one(ProgressBar).display = False
        if self.mode == "sessions":
            self.show_sessions()
        self._update_head(STOPPED)
        if self._refresh is not None:
            self._list_when_stopped(self._refresh)

    @work(group="browser-stopped", exclusive=True, exit_on_error=False)
    async def _list_when_stopped(self, refresh: IndexRefresh) -> None:
        """A stopped refresh finishes the files it was reading and writes them: list them too once it has ended."""
        await asyncio.to_thread(refresh.join)
        if refresh is self._refresh and not self.refreshing and self.mode == "sessions":
            self.show_sessions()
            self._update_head(STOPPED)

    def on_browser_screen_refreshed(self, message: msgs.Refreshed) -> None:
        self.refreshing = False
        self._indexing = None
        self._refresh_error = message.error
        self.stats = message.stats
        self.query_one(ProgressBar).display = False
        stats = message.stats
        changed = stats.added or stats.updated or stats.removed or not self.sessions
        if self.mode == "sessions" and changed:
            self.show_sessions()
        else:
            self._update_head()

    # ---- the sessions list ----------------------------------------------------------------------------------

    def _scoped(self) -> list[SessionInfo]:
        everything = [s for root in self.roots for s in self.index.sessions(root=root)]
        everything.sort(key=lambda s: (-s.last_activity, str(s.path)))
        self.sessions = everything
        if self.state.show_all:
            return everything
        return [s for s in everything if s.cwd == self.state.cwd]

    def show_sessions(self) -> None:
        """List the sessions, the cursor on the one selected (it keeps its place on screen when it can)."""
        self.mode = "sessions"
        self._listed_at = time.monotonic()
        rows = thread_sessions(self._scoped())
        agents = {s.agent for s, _ in rows}
        columns = session_columns(self.size.width, self.state.show_all, agents)
        self._columns_for = self.size.width
        self.rows = rows
        keep, cursor = self.state.selected, 0
        if keep is not None:
            cursor = next((i for i, (s, _) in enumerate(rows) if str(s.path) == keep), 0)
        names = [name for name, _ in columns]
        now = time.time()

        def cells(row: tuple[SessionInfo, int]) -> list[str | Text]:
            by_name = session_cells(row[0], row[1], now)
            return [by_name[n] for n in names]

        self.query_one(RowsTable).show(columns, rows, cells, cursor)
        self._update_head()

    def _update_head(self, busy: str | None = None) -> None:
        busy = busy if busy is not None else self._busy()
        head = head_start(self.roots, self.state.show_all, self.state.cwd)
        if self.mode == "sessions":
            head.append(f"  ·  {len(self.rows):,} of {len(self.sessions):,} sessions")
        else:
            head.append(f"  ·  {len(self.hits):,} hits")
        if busy:
            head.append(f"  ·  {busy}", "yellow")
        elif self._refresh_error is not None:
            head.append(f"  ·  indexing failed: {make_safe(self._refresh_error, keep_newlines=False)}", "yellow")
        elif self.stats is not None and self.stats.errors:
            head.append(f"  ·  {count(self.stats.errors, 'file')} could not be read", "yellow")
        if not self.root.exists():
            head.append("\nno sessions folder yet: waiting for Pi to create it", "yellow")
        elif self.mode == "sessions" and not self.rows and self.sessions and not self.state.show_all:
            head.append("\nno session started in this folder: Tab shows every folder's", "yellow")
        # A head the same but for its figures wraps the same: no layout pass (one a progress step costs otherwise).
        plain = head.plain
        shape = (len(plain), *(i for i, c in enumerate(plain) if c.isspace()))
        self.query_one("#browser-head", Static).update(head, layout=shape != self._head_shape)
        self._head_shape = shape

    # The rows may be listed again between a key and its message: the message's row (a session's (info, depth),
    # or a search hit) is the one to use, not what is at its position now.
    @on(RowsTable.Highlighted)
    def _highlighted(self, event: RowsTable.Highlighted) -> None:
        if not isinstance(event.item, SearchHit):
            self.state.selected = str(event.item[0].path)

    @on(RowsTable.Selected)
    def _selected(self, event: RowsTable.Selected) -> None:
        event.stop()
        item = event.item
        self.dismiss((item.path, item.entry_id) if isinstance(item, SearchHit) else (item[0].path, None))

    def action_toggle_scope(self) -> None:
        self.state.show_all = not self.state.show_all
        if self.mode == "sessions":
            self.show_sessions()
        else:
            self.run_search(self.state.query)

    def action_quit_browser(self) -> None:
        if self.query_one(Input).has_focus:
            return
        self.dismiss(None)

    # ---- search ---------------------------------------------------------------------------------------------

    def action_search(self) -> None:
        box = self.query_one(Input)
        box.display = True
        box.focus()

    def action_clear_search(self) -> None:
        box = self.query_one(Input)
        if not box.display:
            return
        box.value = ""
        box.display = False
        self.state.query = ""
        self.workers.cancel_group(self, "browser-search")
        self.show_sessions()
        self.query_one(RowsTable).focus()

    @on(Input.Changed, "#browser-search")
    def _typed(self, event: Input.Changed) -> None:
        self.state.query = event.value
        if self._search_timer is not None:
            self._search_timer.stop()
        if not event.value.strip():
            self.workers.cancel_group(self, "browser-search")
            self.show_sessions()
            return
        self._search_timer = self.set_timer(SEARCH_DELAY, lambda: self.run_search(event.value))

    @on(Input.Submitted, "#browser-search")
    def _submitted(self, event: Input.Submitted) -> None:
        table = self.query_one(RowsTable)
        table.focus()
        if self.mode == "hits" and self.hits and event.value == self.state.query:
            table.action_select()  # opens the hit under the cursor

    @work(thread=True, exclusive=True, group="browser-search", description="Searching sessions", exit_on_error=False)
    def run_search(self, query: str) -> None:
        worker = get_current_worker()
        cwd = None if self.state.show_all else self.state.cwd
        try:
            hits = [h for root in self.roots for h in self.index.search(query, limit=500, cwd=cwd, root=root)][:500]
            error = None
        except ValueError as exc:
            hits, error = [], str(exc)
        if not worker.is_cancelled:
            self.post_message(self.Found(query, hits, error))

    @property
    def _by_path(self) -> dict[str, SessionInfo]:
        if self._by_path_of is not self.sessions:
            self._by_path_cache = {str(s.path): s for s in self.sessions}
            self._by_path_of = self.sessions
        return self._by_path_cache

    def on_browser_screen_found(self, message: msgs.Found) -> None:
        if message.query != self.state.query:
            return  # typed on since
        self.mode = "hits"
        self.hits = message.hits
        by_path = self._by_path
        table = self.query_one(RowsTable)
        table.show(HIT_COLUMNS, message.hits, lambda hit: hit_cells(hit, by_path.get(str(hit.path))))
        self._update_head(make_safe(message.error, keep_newlines=False) if message.error else None)
