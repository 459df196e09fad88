"""`WritingMixin`: the explorer's writes, each one appended line: the jump (Enter), labels (Shift+L), and the
consented migration of a pre-v3 file that Pi would rewrite anyway.

Everything that could go wrong with the file (changed on disk meanwhile, no header, old version, a failed
write) ends in a notice and nothing written; the live tail then shows what was appended. In a big session the
jump is planned in a thread (the branch left behind can be most of the file); its dialog opens when that is done
(if the leaf moved meanwhile, a notice asks for Enter again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pitree.session.entries import Node
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader
from pitree.widgets import explorer_status
from pitree.widgets.explorer_state import ExplorerState
from pitree.widgets.tree_view import TreeView
from rich.text import Text
from textual import on, work
from textual.worker import get_current_worker

if TYPE_CHECKING:
    from pitree.ops.jump import JumpPlan

PLANNING = "reading the branch to leave…"


class WritingMixin(ExplorerState):
    """Part of `Explorer` (see `explorer.py`): the session state it reads is `ExplorerState`'s."""

    @on(TreeView.Chosen)
    def _chosen(self, message: TreeView.Chosen) -> None:
        from pitree.ops.jump import plan_jump
        from pitree.store.guard import write_warnings

        tree, reader = self.stree, self.reader
        if tree is None or reader is None:
            return
        if not self._writable(tree, "press Enter again to jump"):
            return
        config = self._config()
        if config is None:
            return
        if len(tree.nodes) >= explorer_status.MEASURE_IN_THREAD:
            self._news(PLANNING)
            self._plan_in_thread(tree, reader, message.node, config)
            return
        self._open_jump(tree, reader, plan_jump(tree, message.node), config, write_warnings(self.path))

    @work(thread=True, exclusive=True, group="jump-plan", description="Planning a jump", exit_on_error=False)
    def _plan_in_thread(self, tree: SessionTree, reader: EntryReader, target: Node, config: Any) -> None:
        # The abandoned branch (most of a million-entry session left at its end) and the other processes that
        # hold the file: 0.2-0.4 s, so not on the UI thread.
        from pitree.ops.jump import plan_jump
        from pitree.store.guard import write_warnings

        plan, warnings = plan_jump(tree, target), write_warnings(self.path)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._planned, tree, reader, plan, config, warnings)

    def _planned(
        self, tree: SessionTree, reader: EntryReader, plan: JumpPlan, config: Any, warnings: list[str]
    ) -> None:
        self._expire_news(PLANNING)
        if tree is not self.stree:  # another session meanwhile
            return
        if tree.leaf is not plan.old_leaf:
            self.notify("the session's leaf moved while the jump was planned; press Enter again", severity="warning")
            return
        self._open_jump(tree, reader, plan, config, warnings)

    def _open_jump(
        self, tree: SessionTree, reader: EntryReader, plan: JumpPlan, config: Any, warnings: list[str]
    ) -> None:
        from pitree.widgets.screens.jump_dialog import JumpDialog

        if plan.noop:
            self.notify("the leaf is already here; nothing to do")
            return
        self.push_screen(
            JumpDialog(plan, tree, reader, config.summarizer, config, warnings), callback=self._append_entry
        )

    def _config(self):  # type: ignore[no-untyped-def]
        from pitree.config import ConfigError, load_config

        try:
            return load_config(overrides=self.config_overrides)
        except ConfigError as exc:
            self.notify(str(exc), title="configuration", severity="error")
            return None

    def _writable(self, tree: SessionTree, again: str) -> bool:
        """Whether pitree may append here; `again`: how to redo the action that asked, once migrated."""
        from pitree.ops.errors import NeedsMigration, OpError
        from pitree.ops.write import check_writable

        try:
            check_writable(tree, self.path)
        except NeedsMigration:
            self._offer_migration(tree, again)
            return False
        except OpError as exc:
            self.notify(str(exc), severity="error")
            return False
        return True

    def _offer_migration(self, tree: SessionTree, again: str) -> None:
        """Pi rewrites pre-v3 files when it opens them; pitree does so only with consent, atomically, with a backup."""
        from pitree.widgets.screens.confirm_dialog import ConfirmDialog

        question = Text()
        question.append(f"This is a version {tree.version:g} session.\n\n", "bold")
        question.append(
            "Pi itself rewrites such files to version 3 when it opens them. To append here, pitree must do the same: "
            "it writes the v3 file next to it, syncs it, renames it over the original (atomic) and keeps the original "
            f"as {self.path.name}.bak-<time>. Entry ids stay as pitree shows them."
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self.migrate_file(again)

        self.push_screen(ConfirmDialog(question, "Migrate (backup kept)"), callback=answered)

    def migrate_file(self, again: str) -> None:
        from pitree.ops.errors import OpError
        from pitree.ops.migrate import migrate

        try:
            backup = migrate(self.path)
        except OpError as exc:
            self.notify(str(exc), title="not migrated", severity="error", timeout=10)
            return
        self.notify(f"migrated to version 3; the original is {backup}. Now {again}.", timeout=10)
        if self.live is not None:
            self.call_later(self.live.check)

    def action_label(self) -> None:
        from pitree.widgets.screens.label_dialog import LabelDialog

        node = self.tree_view.cursor_node
        tree = self.stree
        if node is None or tree is None or not self._writable(tree, "press Shift+L again to label"):
            return

        def done(label: str | None) -> None:
            if label is None or tree is None or node is None:
                return
            from pitree.ops.errors import OpError
            from pitree.ops.label import plan_label

            if not label and node.id not in tree.labels:
                return  # clearing nothing: not worth a notice, nothing to write
            try:
                entry = plan_label(tree, self.path, node, label or None)
            except OpError as exc:
                self.notify(str(exc), title="nothing written", severity="error")
                return
            self._append_entry(entry)

        self.push_screen(LabelDialog(tree.row_text(node), tree.labels.get(node.id)), callback=done)

    def _append_entry(self, entry: dict | None) -> None:
        """Append one entry (from the jump or label dialog); the live tail then shows it."""
        from pitree.ops.errors import OpError
        from pitree.ops.write import append_entry

        if entry is None or self.stree is None:
            return
        live = self.live
        if live is not None and live.catch_up():
            self.notify(
                "the session changed on disk while you were choosing; nothing was written — look and try again",
                severity="error",
                timeout=8,
            )
            return
        try:
            # The size the tail has read (just confirmed unchanged): the append is refused if the file differs.
            size = live.tailer.size if live is not None and live.builder is not None else self.path.stat().st_size
            append_entry(self.path, entry, expect_size=size)
        except (OpError, OSError) as exc:
            self.notify(str(exc), title="nothing written", severity="error", timeout=10)
            return
        self.follow_off = False
        self._select_after_append = entry["id"] if entry["type"] != "label" else None
        self._appended_id = entry["id"]  # not news when the tail brings it back (see `entries_added`)
        if live is not None:
            self.call_later(live.check)
        if entry["type"] == "label":  # Pi's leaf becomes the label entry, a child of the old leaf: same conversation
            self.notify(f"appended label {entry['id']} under the leaf: `pi --session` continues the same conversation")
        else:
            self.notify(f"appended {entry['type']} {entry['id']}: Pi continues here on `pi --session`")
