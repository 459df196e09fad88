"""Comparing two branches from the explorer: `m` marks the entry under the cursor, `d` compares the cursor's entry
with the marked one (or with the leaf when none is marked). Both post `CompareRequested`; the explorer answers it
by pushing `DiffScreen`, and selects in the tree the entry that the screen closes on."""

from __future__ import annotations

from pitree.session.text import make_safe
from pitree.widgets.explorer_state import ExplorerState
from textual.message import Message


class CompareRequested(Message, bubble=False):
    """Posted when the user asks to compare the branches ending at entries `a` and `b`; the explorer that posts it
    answers it, so it does not bubble."""

    def __init__(self, a: str, b: str) -> None:
        self.a, self.b = a, b
        super().__init__()


class CompareMixin(ExplorerState):
    """Part of `Explorer`: the mark and the compare actions, and the screen they open."""

    @property
    def marked_id(self) -> str | None:
        """The entry marked with `m`: the tree view holds it, drawn `◆`, and forgets it with the session."""
        return self.tree_view.compare_mark

    def action_mark(self) -> None:
        """Mark the cursor's entry as the first of a comparison (again on it: unmark)."""
        node = self.tree_view.cursor_node if self.stree is not None else None
        if node is None:
            return
        shown = make_safe(node.id, keep_newlines=False)
        if self.marked_id == node.id:
            self.tree_view.set_compare_mark(None)
            self.notify(f"unmarked {shown}", title="compare")
            return
        self.tree_view.set_compare_mark(node.id)
        self.notify(f"marked {shown}: press d on another entry to compare the two branches", title="compare")

    def action_compare(self, with_leaf: bool = False) -> None:
        """Compare the cursor's entry (B) with the marked one, or with the leaf (A)."""
        tree, node = self.stree, self.tree_view.cursor_node if self.stree is not None else None
        if tree is None or node is None:
            return
        marked = None if with_leaf else tree.get(self.marked_id)
        first = marked or tree.leaf
        if first is None:
            return
        self.post_message(CompareRequested(first.id, node.id))

    def action_compare_marked(self) -> None:
        if self.stree is None or self.stree.get(self.marked_id) is None:
            self.notify("no entry is marked: press m on one first", title="compare", severity="warning")
            return
        self.action_compare()

    def on_compare_requested(self, message: CompareRequested) -> None:
        from pitree.widgets.screens.diff_screen import DiffScreen

        tree, reader = self.stree, self.reader
        a, b = (tree.get(message.a), tree.get(message.b)) if tree is not None else (None, None)
        if tree is None or reader is None or a is None or b is None:
            return

        def back(entry_id: str | None) -> None:
            if entry_id is not None:
                self.go_to_entry(entry_id)

        self.push_screen(DiffScreen(tree, reader, a, b), callback=back)
