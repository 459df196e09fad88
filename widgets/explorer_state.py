"""`ExplorerState`: the open session as the explorer holds it — its path, tree, entry reader and live tail, the
follow state — with what every part of the explorer uses: the tree view, going to an entry, the status bar.
`Explorer` (`explorer.py`) builds on it, through `WritingMixin` (`writing.py`) for its writes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pitree.session.context import ContextSize
from pitree.session.context_size import context_size
from pitree.session.entries import Node
from pitree.session.gcpause import release_tree
from pitree.session.load import SessionBuilder
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store import first_screen
from pitree.store.session_file import EntryReader
from pitree.summary.tokens import encoder_built
from pitree.widgets import explorer_status
from pitree.widgets.entry_view import EntryView
from pitree.widgets.explorer_status import session_status
from pitree.widgets.live import LiveSession
from pitree.widgets.loading_pane import LoadingPane
from pitree.widgets.status_bar import StatusBar
from pitree.widgets.tree_freeze import TreeFreezer
from pitree.widgets.tree_preview import TreePreview, screen_of
from pitree.widgets.tree_view import TreeView
from textual import events, work
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget

# Sessions this big or bigger count tokens with tiktoken only on request (`t`): its tables cost as much as the
# tree of a 30 MB session (see the README). Below it, the entry pane counts every entry it shows exactly.
EXACT_TOKENS_FROM = 32_000_000
NEWS_SECONDS = 15  # how long "the file was rewritten" stays in the status bar if the user does not move


class ExplorerState(Widget):
    """The session the explorer shows; see `Explorer`."""

    select_id: str | None  # the entry to select once the session is shown
    # The keys that act on the tree: dimmed in the footer, and doing nothing, while it is read.
    NEEDS_TREE = frozenset(
        {"context", "usage", "export", "label", "mark", "compare", "show_skipped", "goto", "next_match", "entry_link"}
    )

    def __init__(
        self,
        path: Path | None,
        *,
        select_id: str | None = None,
        watch: bool = True,
        config_overrides: dict[str, object] | None = None,
        freeze_first: bool = True,
    ) -> None:
        super().__init__(id="explorer")
        self.freezer = TreeFreezer(self)
        self.path = path or Path()  # Path(): none yet (the sessions browser is open)
        self.select_id = select_id
        self.watch_enabled = watch
        self.config_overrides = config_overrides or {}
        self.freeze_first = freeze_first  # freeze the first tree at once: no browser index was garbage before it
        self.stree: SessionTree | None = None
        self.reader: EntryReader | None = None
        self.live: LiveSession | None = None
        self.reopened: str = ""  # why the session shown is being read again (`FileRewritten`): said once it is
        self.follow_off = False  # set by `f`: stay put even on the leaf
        self._unseen = 0  # entries appended since the user last moved, while not following
        self._transient = False  # the status bar's file_state is news (new entries, a reload), not a condition
        self.exact_asked = False  # `t` was pressed: count exactly in every session from now on
        self.exact_tokens = False  # the entry pane counts with tiktoken in this session (see EXACT_TOKENS_FROM)
        self._entry_timer: Timer | None = None
        self._select_after_append: str | None = None
        self._appended_id: str | None = None  # the last entry pitree appended itself
        self._context_size: ContextSize | None = None  # Pi's size at the leaf, for the status bar

    def _leave(self, path: Path, select_id: str | None) -> None:
        """Let go of the session shown (its tail stopped, its tree dropped) before `path` is opened."""
        old = self.stree
        if self.live is not None:
            self.live.stop()
            self.live = None
        self.path, self.select_id = path, select_id
        self.stree = self.reader = None
        self._context_size = None  # it holds the leaf left, and so that tree's columns (its node class does)
        self.refresh_bindings()
        self.follow_off = False
        self._unseen, self._transient = 0, False
        if self._entry_timer is not None:
            self._entry_timer.stop()
            self._entry_timer = None  # its callback holds the tree left (and its reader): else it lived on
        self.tree_view.forget_tree()
        self.query_one(EntryView).forget()
        if old is not None and self.screen is self.app.screen and not self.tree_workers_running():
            release_tree(old)  # no view over the explorer, nor a worker of its, reads it: its entries go now

    def tree_workers_running(self) -> bool:
        """Whether a worker of the explorer may still be reading its tree off the event loop. Not the tail's: it
        touches the tree only on the event loop (and `_leave` stops it before it asks)."""
        return any(w.node is self and w.group != "tail" and not w.is_finished for w in self.workers)

    def _hold(self, tree: SessionTree) -> None:
        self.stree = tree
        self._context_size = None  # the session left's: never grown by this one's entries
        self.reader = EntryReader(self.path, tree)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if self.stree is None and action in self.NEEDS_TREE else True

    def waiting_keys(self) -> dict[str, str]:
        """Key → what it does, for the keys that wait for the tree: this class's `NEEDS_TREE` bindings and the
        tree view's, but for those the preview shown meanwhile answers."""
        moving = {key for b in TreePreview.BINDINGS for key in b.key.split(",")}  # type: ignore[union-attr]
        needs = [b for b in type(self).BINDINGS if b.action.split("(")[0] in self.NEEDS_TREE]  # type: ignore[union-attr]
        found: dict[str, str] = {}
        for b in [*needs, *TreeView.BINDINGS]:
            for key in b.key.split(","):  # type: ignore[union-attr]
                if key not in moving:
                    found.setdefault(key, b.description)  # type: ignore[union-attr]
        return found

    _waiting_note: tuple[str, float] = ("", 0.0)  # the last such key's note and when: a held key notes it once

    def on_key(self, event: events.Key) -> None:
        """A key that acts on the tree, pressed while the tree is read, says when it will work instead of doing
        nothing. The event goes on: only a binding that is off meanwhile matches it."""
        if self.stree is not None or self.path == Path():
            return
        bound = self.screen.active_bindings.get(event.key)
        if bound is not None and bound.enabled:
            return  # a binding that works meanwhile has it: the search prompt's Enter, Home, word moves
        what = self.waiting_keys().get(event.key)
        loading = self.query(LoadingPane)
        waiting = loading.first().waiting_for() if what and loading else None
        if what is None or waiting is None:
            return
        now = time.monotonic()
        if self._waiting_note[0] != what or now - self._waiting_note[1] >= 2:
            self._waiting_note = (what, now)
            self.notify(f"{what}: {waiting}", timeout=3)

    def start_live(self, builder: SessionBuilder | None) -> None:
        """Follow the file. Without watching (tests, --no-watch) `live.check()` still applies changes."""
        self.live = LiveSession(self, self.path, builder)
        if self.watch_enabled:
            self.live.start()

    def _count_exactly(self, size: int | None) -> bool:
        """Whether the entry pane counts tokens with tiktoken in a session of `size` bytes (None: `t` asked for
        it, in this session and every one after)."""
        if size is None:
            self.exact_asked = True
        self.exact_tokens = self.exact_asked or (size or 0) < EXACT_TOKENS_FROM or encoder_built()
        return self.exact_tokens

    def action_exact_tokens(self) -> None:
        """Count tokens with tiktoken from now on (`t`), for a session too big for that to be on by default."""
        if self.exact_tokens:
            self.notify("Exact token counts (tiktoken cl100k) are on.", title="tokens")
            return
        self._count_exactly(None)
        self.query_one(EntryView).count_exactly()
        self.notify("Exact token counts (tiktoken cl100k) on: its tables take ~30 MB.", title="tokens")

    def _when_still(self, callback: Callable[[], object]) -> None:
        """`callback` once the cursor rests (80 ms): holding ↓ then redraws only the tree."""
        if self._entry_timer is not None:
            self._entry_timer.stop()
        self._entry_timer = self.set_timer(0.08, callback)

    @property
    def tree_view(self) -> TreeView:
        return self.query_one(TreeView)

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    def push_screen(self, screen: Screen[Any], callback: Callable[[Any], None] | None = None) -> None:
        """A dialog or view over the explorer; `callback` gets what it returns."""
        self.app.push_screen(screen, callback=callback)

    @property
    def following(self) -> bool:
        """On the leaf's row, put there by the user (or the follow itself). A filter that hides the entry the
        user chose and shows the leaf's row in its place does not turn following on, nor does a fold that hides
        the leaf under the cursor; a filter that hides the leaf itself makes its nearest shown ancestor its row.
        The leaf is the one the view laid out: entries the live tail added are not followed before it shows them."""
        view = self.tree_view
        node, leaf, layout = view.cursor_node, view.leaf, view.layout_
        if self.follow_off or node is None or leaf is None or node is not view.leaf_row_node():
            return False
        leaf_filtered = layout is not None and layout.index_of(leaf.id) is None
        return view.anchor_id == leaf.id or (leaf_filtered and view.anchor_id == node.id)

    def go_to_entry(self, entry_id: str) -> bool:
        """The tree cursor to an entry, saying so when the filter had to change or the entry has no row of its
        own in Pi's tree; False (after an error notice) when the session has no such entry."""
        notice = self.tree_view.go_to(entry_id) if self.stree is not None else None
        if notice is None:
            shown = make_safe(entry_id, keep_newlines=False)
            self.notify(f"entry {shown} is not in the tree", severity="error", markup=False)
            return False
        if notice:
            self.notify(notice, title="go to", markup=False)
        return True

    def _status(self, **changes: object) -> None:
        # Messages can still arrive while the app shuts down, after the status bar is gone.
        for bar in self.query(StatusBar):
            bar.update_status(**changes)

    def _news(self, text: str, expire: float | None = None) -> None:
        """A passing notice in the status bar: gone when the user moves the cursor (or after `expire` s)."""
        self._transient = bool(text)
        self._status(file_state=text)
        if text and expire is not None:
            self.set_timer(expire, lambda: self._expire_news(text))

    def _reopened_news(self) -> None:
        if self.reopened:
            self._news(self.reopened, expire=NEWS_SECONDS)
            self.notify(self.reopened, title="session reloaded")
            self.reopened = ""

    def _expire_news(self, text: str) -> None:
        bars = self.query(StatusBar)
        if self._transient and bars and bars.first().status.file_state == text:
            self._news("")

    def _update_status(self, grown: list[Node] | None = None, context: bool = True, later: bool = False) -> bool:
        """The status bar from the tree (see `session_status`). True when the context size is to be measured in a
        thread; `later`: the caller's thread measures it (`measure_context`), else a worker of its own."""
        if self.stree is None:
            return False
        bars = self.query(StatusBar)
        before = bars.first().status if bars else None
        tree, old = self.stree, self._context_size
        in_thread = context and len(tree.nodes) >= explorer_status.MEASURE_IN_THREAD
        fields, self._context_size = session_status(tree, before, old, grown, context and not in_thread)
        if in_thread and self._context_size is old:  # not grown from the size before
            self._context_size = None
            fields["context_tokens"] = None
            fields["context_pending"] = True
            if not later:
                self._measure_context(tree, tree.leaf)
        elif self._context_size is not None:
            fields["context_pending"] = False
        self._status(**fields, filter=self.tree_view.filter_mode, follow=self.following)
        return bool(fields.get("context_pending"))

    @work(thread=True, exclusive=True, group="context", description="Measuring the context", exit_on_error=False)
    def _measure_context(self, tree: SessionTree, leaf: Node | None) -> None:
        self.measure_context(tree, leaf)

    def measure_context(self, tree: SessionTree, leaf: Node | None) -> None:
        """Pi's context size at `leaf` for the status bar, from a thread. Only the path from `leaf` is read: entries
        the live tail adds meanwhile never change it, and a leaf that moved meanwhile has its own measure coming."""
        size = context_size(tree, leaf)
        self.app.call_from_thread(self._context_measured, tree, leaf, size)

    def _context_measured(self, tree: SessionTree, leaf: Node | None, size: ContextSize) -> None:
        shown = self.stree
        if shown is None or shown is not tree or shown.leaf is not leaf:
            return  # another session, or a leaf that moved: its own measure is on its way
        self._context_size = size
        self._status(context_tokens=size.tokens, context_pending=False)

    def keep_first_screen(self) -> None:
        """Keep what opening this session shows first (`first_screen`) for its next open, if it is big, read to
        the end of the file as it is now, and shown with the default filter's rows up to date (a best effort)."""
        view, live, bars = self.tree_view, self.live, self.query(StatusBar)
        if self.stree is None or live is None or live.builder is None or not bars:
            return
        size = live.builder.size
        if size < first_screen.MIN_BYTES or not view.has_layout("default"):
            return
        s = bars.first().status
        status = {"name": s.name, "entries": s.entries, "branches": s.branches, "leaf": s.leaf, "skipped": s.skipped,
                  "context_tokens": s.context_tokens}
        screen = screen_of(view, status)
        if screen is not None:
            first_screen.save(self.path, size, screen)

    def _take_appended(self, tree: SessionTree) -> str | None:
        """The entry pitree itself appended to select, once the tail brought it into `tree` (then forgotten)."""
        ours = self._select_after_append
        if ours is None or tree.get(ours) is None:
            return None
        self._select_after_append = None
        return ours
