"""`ExplorerBase`: what `PitreeApp` and its mixins (`writing.py`, `screens.py`) share: the open session's state
and the tree view."""

from __future__ import annotations

from pathlib import Path

from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader
from pitree.widgets.tree_view import TreeView
from textual.app import App


class ExplorerBase(App[int]):
    path: Path
    stree: SessionTree | None
    reader: EntryReader | None

    @property
    def tree_view(self) -> TreeView:
        return self.query_one(TreeView)
