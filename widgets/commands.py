"""The explorer's entries in the command palette (Ctrl+P), one per key that has an action."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from textual.app import SystemCommand

if TYPE_CHECKING:
    from pitree.widgets.explorer import Explorer


def explorer_commands(explorer: Explorer) -> Iterator[SystemCommand]:
    """The palette's commands for what `explorer`'s keys do; while the tree is read, not those whose keys wait
    for it (`NEEDS_TREE`, dimmed in the footer meanwhile)."""
    view = explorer.tree_view
    commands: list[tuple[str, str, Callable[[], object], str]] = [
        ("Search entries", "Highlight entries matching words (/)", explorer.action_search, "search"),
        ("Go to entry id", "Jump to an entry by id or prefix (g)", explorer.action_goto, "goto"),
        ("Toggle follow", "Follow new entries at the leaf (f)", explorer.action_toggle_follow, "toggle_follow"),
        ("Toggle raw JSON", "Show the selected line as stored (r)", explorer.action_toggle_raw, "toggle_raw"),
        ("Skipped lines and notes", "Lines that are not entries (s)", explorer.action_show_skipped, "show_skipped"),
        ("Context view", "What the model gets at the selected entry (c)", explorer.action_context, "context"),
        ("Usage", "Tokens and cost per model and per branch (u)", explorer.action_usage, "usage"),
        (
            "Exact token counts",
            "Count the entry pane's tokens with tiktoken cl100k (t)",
            explorer.action_exact_tokens,
            "exact_tokens",
        ),
        ("Export", "Root → selected entry as Markdown, HTML or a Pi session (e)", explorer.action_export, "export"),
        (
            "Compare with the leaf",
            "The selected entry's branch against the leaf's (d)",
            lambda: explorer.action_compare(with_leaf=True),
            "compare",
        ),
        (
            "Compare with the marked entry",
            "Against the entry marked with m (d)",
            explorer.action_compare_marked,
            "compare",
        ),
    ]
    for title, help_text, callback, action in commands:
        if explorer.check_action(action, ()):
            yield SystemCommand(title, help_text, callback)
    for mode in ("default", "no-tools", "user-only", "labeled-only", "all"):
        yield SystemCommand(
            f"Filter: {mode}", f"Show the {mode} view of the tree", lambda m=mode: view.action_filter(m)
        )
    for col in ("time", "model", "tokens"):
        yield SystemCommand(
            f"Toggle {col} column", f"Show or hide the {col} column", lambda c=col: view.action_toggle_column(c)
        )
