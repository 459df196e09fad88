"""`ScreensMixin`: the explorer's other screens — help, skipped lines, the context view, usage and export."""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

from pitree.session.entries import Node
from pitree.session.text import count, make_safe
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader, held_back_skips
from pitree.widgets.explorer_base import ExplorerBase
from pitree.widgets.screens.text_screen import TextScreen
from rich.text import Text
from textual import work

if TYPE_CHECKING:
    from pitree.widgets.screens.export_dialog import ExportChoice


def asset_text(name: str) -> str:
    return (resources.files("pitree.assets") / name).read_text(encoding="utf-8")


class ScreensMixin(ExplorerBase):
    """Part of `PitreeApp` (see `app.py`): the state it reads is the app's."""

    def action_help(self) -> None:
        from rich.markdown import Markdown

        self.push_screen(TextScreen("pitree — keys", Markdown(asset_text("help.md"))))

    def action_context(self) -> None:
        """The exact context the model gets with the selected entry as the leaf."""
        from pitree.widgets.screens.context_view import ContextScreen

        tree, reader = self.stree, self.reader
        if tree is None or reader is None:
            return

        def back(entry_id: str | None) -> None:
            if entry_id is not None:
                self.go_to_entry(entry_id)

        self.push_screen(ContextScreen(tree, reader, self.tree_view.cursor_node), callback=back)

    def action_usage(self) -> None:
        """Tokens and cost per model and per branch segment."""
        from pitree.cli.textout import usage_tables
        from pitree.session.usage import usage_report

        tree = self.stree
        if tree is None:
            return
        title = "usage — tokens and cost of replies, tools, summaries and usage entries (Pi 1.x totals)"
        self.push_screen(TextScreen(title, usage_tables(usage_report(tree))))

    def action_export(self) -> None:
        """Export root → the selected entry (Markdown, HTML or a new Pi session file)."""
        from pitree.widgets.screens.export_dialog import ExportDialog

        node = self.tree_view.cursor_node
        if self.stree is None or self.reader is None or node is None:
            return

        def chosen(choice: ExportChoice | None) -> None:
            if choice is not None and self.stree is not None and self.reader is not None:
                self.notify(f"exporting to {make_safe(str(choice.out), keep_newlines=False)} …")
                self.export_session(self.stree, self.reader, node, choice)

        self.push_screen(ExportDialog(self.path, node.id), callback=chosen)

    @work(thread=True, group="export", description="Exporting", exit_on_error=False)
    def export_session(self, tree: SessionTree, reader: EntryReader, leaf: Node, choice: ExportChoice) -> None:
        from pitree.ops.export import ExportError, export_path

        try:
            written = export_path(tree, reader, leaf, choice.fmt, choice.out, choice.thinking, choice.force)
        except ExportError as exc:
            self.call_from_thread(self.notify, str(exc), title="not exported", severity="error", timeout=10)
            return
        self.call_from_thread(self.notify, f"exported {written}", title="export")

    def action_show_skipped(self) -> None:
        tree = self.stree
        if tree is None:
            return
        body = Text()
        live = getattr(self, "live", None)
        builder = live.builder if live is not None else None
        # a torn last line the tailer holds back is listed too, as the CLI lists it
        skipped = tree.skipped + (held_back_skips(self.path, builder) if builder is not None else [])
        if not skipped and not tree.problems:
            body.append("Every line of the file is an entry; nothing to report.")
        for s in skipped:
            body.append(f"line {s.line}: ", "bold yellow")
            body.append(make_safe(s.reason, keep_newlines=False) + "\n")
        if tree.problems:
            body.append("\nnotes\n", "bold")
        for p in tree.problems:
            body.append(f"line {p.line}: ", "bold")
            body.append(make_safe(p.message, keep_newlines=False) + "\n")
        title = f"{count(len(skipped), 'skipped line')}, {count(len(tree.problems), 'note')}"
        self.push_screen(TextScreen(title, body))
