"""`SearchMixin`: the explorer's search and go-to prompt (`/`, `g`, `n`/`N`) and what it says of the matches.

A big tree's search runs in a thread (`TreeNav`): while it runs the status says "searching…", and Enter pressed
meanwhile goes to the first match once they are found. So does a big tree's go-to by id prefix (every id is looked at).
"""

from __future__ import annotations

from pitree.session.entries import Node
from pitree.session.tree import SessionTree
from pitree.widgets import explorer_status
from pitree.widgets.explorer_state import ExplorerState
from pitree.widgets.loading_pane import LoadingPane
from pitree.widgets.prompt_bar import PromptBar
from pitree.widgets.tree_view import TreeView
from textual import on, work
from textual.worker import get_current_worker

WAITS_FOR_TREE = "search: once the tree is read"
FINDING = "finding the entry…"


class SearchMixin(ExplorerState):
    """Part of `Explorer` (see `explorer.py`): the session state it reads is `ExplorerState`'s."""

    _jump_when_found = False  # Enter was pressed on a search still running: go to its first match when it ends

    def _match_text(self) -> str:
        view = self.tree_view
        if not view.search_tokens:
            return ""
        if self.stree is None:
            return WAITS_FOR_TREE
        if view.searching and not view.matches:
            return "searching…"
        where = f"match {view.match_position()}/{len(view.matches)}"
        return f"{where} · searching…" if view.searching else where

    @on(PromptBar.Edited)
    def _prompt_changed(self, message: PromptBar.Edited) -> None:
        if message.purpose == "search":
            view = self.tree_view
            count = view.set_search(message.value)
            self._jump_when_found = False
            self._status(matches=self._count_text(count) if message.value.strip() else "")

    def _count_text(self, count: int) -> str:
        if self.stree is None:
            return WAITS_FOR_TREE
        return "searching…" if self.tree_view.searching else f"{count} matches"

    def _focus_tree(self) -> None:
        """Back from the prompt to the tree, or to the preview shown while the tree is read."""
        loading = self.query_one(LoadingPane)
        if self.stree is None and loading.display and loading.kept is not None:
            loading.preview.focus()
        else:
            self.tree_view.focus()

    @on(TreeView.Searched)
    def _searched(self, message: TreeView.Searched) -> None:
        """A big tree's search ended (it ran in a thread): its count while the words are typed, else the match
        the cursor is at (the first one if Enter was pressed meanwhile)."""
        view = self.tree_view
        prompt = self.query_one(PromptBar)
        if self._jump_when_found and view.matches:
            view.next_match(1)
        self._jump_when_found = False
        typing = prompt.display and prompt.purpose == "search"
        self._status(matches=self._count_text(message.count) if typing else self._match_text())

    @on(PromptBar.Entered)
    def _prompt_submitted(self, message: PromptBar.Entered) -> None:
        view = self.tree_view
        self._focus_tree()
        if message.purpose == "search":
            if view.searching:
                self._jump_when_found = True  # the matches are not found yet: go to the first when they are
            elif view.matches:
                view.next_match(1)
            self._status(matches="searching…" if view.searching else self._match_text())
        elif message.purpose == "goto" and self.stree is not None and message.value.strip():
            tree, wanted = self.stree, message.value.strip()
            if tree.get(wanted) is None and len(tree.nodes) >= explorer_status.MEASURE_IN_THREAD:
                self._news(FINDING)
                self._resolve_in_thread(tree, wanted)
                return
            try:
                node = tree.resolve(wanted)
            except ValueError as exc:
                self.notify(str(exc), severity="error")
                return
            self.go_to_entry(node.id)

    @work(thread=True, exclusive=True, group="goto", description="Finding an entry", exit_on_error=False)
    def _resolve_in_thread(self, tree: SessionTree, wanted: str) -> None:
        # A prefix is looked for among every id: a few hundred ms at a million entries, so not on the UI thread.
        try:
            found: Node | str = tree.resolve(wanted)
        except ValueError as exc:
            found = str(exc)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._resolved, tree, found)

    def _resolved(self, tree: SessionTree, found: Node | str) -> None:
        self._expire_news(FINDING)
        if tree is not self.stree:  # another session meanwhile
            return
        if isinstance(found, str):
            self.notify(found, severity="error")
        else:
            self.go_to_entry(found.id)

    @on(PromptBar.Cancelled)
    def _prompt_cancelled(self, message: PromptBar.Cancelled) -> None:
        if message.purpose == "search":
            self.tree_view.set_search("")
            self._status(matches="")
        self._focus_tree()

    def action_search(self) -> None:
        self.query_one(PromptBar).ask("search", "search: words (all must match) — Enter to keep, Esc to clear")

    def action_goto(self) -> None:
        self.query_one(PromptBar).ask("goto", "go to entry id (or unique prefix)")

    def action_next_match(self, direction: int) -> None:
        if not self.tree_view.next_match(direction):
            self.notify("no matches (press / to search)", severity="information")
        self._status(matches=self._match_text())
