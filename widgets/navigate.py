"""`NavigateMixin`: how the explorer moves the tree cursor for the user — go to an id (`g`), an entry the pane
names (`o`, the context view's Enter), search (`/`, `n`, `N`), follow (`f`) — and the passing notices
("3 new entries") in the status bar that a move clears; and what a move shows: the entry pane, and the entries
a selected compaction summarized and kept."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pitree.session.entries import Node
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader
from pitree.widgets.entry_link import EntryLink
from pitree.widgets.entry_view import EntryView
from pitree.widgets.explorer_base import ExplorerBase
from pitree.widgets.prompt_bar import PromptBar
from pitree.widgets.status_bar import StatusBar
from pitree.widgets.tree_view import TreeView
from textual import on
from textual.timer import Timer


class NavigateMixin(ExplorerBase):
    """Part of `PitreeApp` (see `app.py`): the state it reads is the app's."""

    follow_off: bool
    _transient: bool
    _unseen: int
    _entry_timer: Timer | None

    if TYPE_CHECKING:  # the app's own

        def _status(self, **changes: object) -> None: ...

    @property
    def following(self) -> bool:
        """On the leaf's row, put there by the user (or the follow itself). A filter that hides the entry the
        user chose and shows the leaf's row in its place does not turn following on, nor does a fold that hides
        the leaf under the cursor; a filter that hides the leaf itself makes its nearest shown ancestor its row."""
        view = self.tree_view
        node, tree, layout = view.cursor_node, self.stree, view.layout_
        if self.follow_off or node is None or tree is None or tree.leaf is None or node is not view.leaf_row_node():
            return False
        leaf_filtered = layout is not None and layout.index_of(tree.leaf.id) is None
        return view.anchor_id == tree.leaf.id or (leaf_filtered and view.anchor_id == node.id)

    def _news(self, text: str, expire: float | None = None) -> None:
        """A passing notice in the status bar: gone when the user moves the cursor (or after `expire` s)."""
        self._transient = bool(text)
        self._status(file_state=text)
        if text and expire is not None:
            self.set_timer(expire, lambda: self._expire_news(text))

    def _expire_news(self, text: str) -> None:
        bars = self.query(StatusBar)
        if self._transient and bars and bars.first().status.file_state == text:
            self._news("")

    def action_search(self) -> None:
        self.query_one(PromptBar).ask("search", "search: words (all must match) — Enter to keep, Esc to clear")

    def action_goto(self) -> None:
        self.query_one(PromptBar).ask("goto", "go to entry id (or unique prefix)")

    def action_entry_link(self) -> None:
        self.query_one(EntryView).action_go_to()

    @on(EntryLink.Chosen)
    def _entry_link_chosen(self, message: EntryLink.Chosen) -> None:
        """A line of the entry pane naming another entry (a context edit's target, say) was chosen."""
        if self.go_to_entry(message.entry_id):
            self.tree_view.focus()

    def _match_text(self) -> str:
        view = self.tree_view
        if not view.search_tokens:
            return ""
        return f"match {view.match_position()}/{len(view.matches)}"

    @on(PromptBar.Edited)
    def _prompt_changed(self, message: PromptBar.Edited) -> None:
        if message.purpose == "search":
            count = self.tree_view.set_search(message.value)
            self._status(matches=f"{count} matches" if message.value.strip() else "")

    @on(PromptBar.Entered)
    def _prompt_submitted(self, message: PromptBar.Entered) -> None:
        view = self.tree_view
        view.focus()
        if message.purpose == "search":
            if view.matches:
                view.next_match(1)
            self._status(matches=self._match_text())
        elif message.purpose == "goto" and self.stree is not None and message.value.strip():
            try:
                node = self.stree.resolve(message.value.strip())
            except ValueError as exc:
                self.notify(str(exc), severity="error")
                return
            self.go_to_entry(node.id)

    @on(PromptBar.Cancelled)
    def _prompt_cancelled(self, message: PromptBar.Cancelled) -> None:
        if message.purpose == "search":
            self.tree_view.set_search("")
            self._status(matches="")
        self.tree_view.focus()

    def action_next_match(self, direction: int) -> None:
        if not self.tree_view.next_match(direction):
            self.notify("no matches (press / to search)", severity="information")
        self._status(matches=self._match_text())

    def action_toggle_follow(self) -> None:
        view = self.tree_view
        if self.following:
            self.follow_off = True
        else:
            self.follow_off = False
            if self.stree is not None and self.stree.leaf is not None:
                view.select_id(self.stree.leaf.id)
        self._status(follow=self.following)

    # ---- what a move shows -------------------------------------------------------------------------------

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
            from pitree.cli.report import compaction_split

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
