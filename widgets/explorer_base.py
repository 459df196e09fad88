"""`ExplorerBase`: what `PitreeApp` and its mixins (`writing.py`, `screens.py`) share: the open session's state,
the tree view, and notifications that never parse markup."""

from __future__ import annotations

from pathlib import Path

from pitree.session.text import make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader
from pitree.widgets.tree_view import TreeView
from textual.app import App
from textual.notifications import SeverityLevel


class ExplorerBase(App[int]):
    path: Path
    stree: SessionTree | None
    reader: EntryReader | None

    @property
    def tree_view(self) -> TreeView:
        return self.query_one(TreeView)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification (widgets' and screens' go through here) as plain text: they quote ids, names and
        paths from session files, and a `[@click=app.quit]` in one must be neither parsed nor clickable."""
        super().notify(
            make_safe(str(message)),
            title=make_safe(str(title), keep_newlines=False),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

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
