"""`LiveViewMixin`: what the explorer does with what the live tail brings — new entries (following the leaf
or counting them), a rewritten or replaced file, the file's state — and the status bar's numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pitree.session.context import ContextSize, build_context, grown_size
from pitree.session.entries import Node
from pitree.session.gcpause import Freezer
from pitree.session.load import SessionBuilder
from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader
from pitree.widgets.entry_view import EntryView
from pitree.widgets.live import LiveSession
from pitree.widgets.navigate import NavigateMixin
from pitree.widgets.status_bar import StatusBar

NEWS_SECONDS = 15  # how long "the file was rewritten" stays in the status bar if the user does not move


class LiveViewMixin(NavigateMixin):
    """Part of `PitreeApp` (see `app.py`): the state it reads is the app's."""

    stree: SessionTree | None
    reader: EntryReader | None
    live: LiveSession | None
    watch_enabled: bool
    _select_after_append: str | None
    _appended_id: str | None
    _freezer: Freezer
    _context_size: ContextSize | None

    if TYPE_CHECKING:  # the app's own

        def _freeze_tree(self, tries: int = 5) -> None: ...

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
