"""`CommandsMixin`: the explorer's entries in the command palette (Ctrl+P), one per key that has an action."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pitree.widgets.explorer_base import ExplorerBase
from textual.app import SystemCommand
from textual.screen import Screen


class CommandsMixin(ExplorerBase):
    """Part of `PitreeApp` (see `app.py`): the actions it names are the app's."""

    if TYPE_CHECKING:  # the app's own

        def action_search(self) -> None: ...
        def action_goto(self) -> None: ...
        def action_toggle_follow(self) -> None: ...
        def action_toggle_raw(self) -> None: ...
        def action_show_skipped(self) -> None: ...
        def action_context(self) -> None: ...
        def action_usage(self) -> None: ...
        def action_exact_tokens(self) -> None: ...
        def action_export(self) -> None: ...
        def action_compare(self, with_leaf: bool = False) -> None: ...
        def action_compare_marked(self) -> None: ...

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
        yield SystemCommand(
            "Compare with the leaf",
            "The selected entry's branch against the leaf's (d)",
            lambda: self.action_compare(with_leaf=True),
        )
        yield SystemCommand(
            "Compare with the marked entry", "Against the entry marked with m (d)", self.action_compare_marked
        )
        for mode in ("default", "no-tools", "user-only", "labeled-only", "all"):
            yield SystemCommand(
                f"Filter: {mode}", f"Show the {mode} view of the tree", lambda m=mode: view.action_filter(m)
            )
        for col in ("time", "model", "tokens"):
            yield SystemCommand(
                f"Toggle {col} column", f"Show or hide the {col} column", lambda c=col: view.action_toggle_column(c)
            )
