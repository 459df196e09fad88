"""`LiveSession`: keeps the explorer's tree in step with the file while Pi writes it, and says so in messages.

On each change the watcher reports, the tailer reads from the saved offset to the last newline; those
lines are parsed and added to the tree (`EntriesAppended`). A torn last line waits for its newline. A file that
shrank or was replaced (Pi rewrote it) is reloaded (`FileRewritten`); a deleted file is reported
(`FileStateChanged`) and what was read stays on screen until it reappears; a file not yet created is waited for.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pitree.session.dialect_omp import title_slot_of
from pitree.session.entries import Node
from pitree.session.load import SessionBuilder
from pitree.session.tree import SessionTree
from pitree.store.session_file import SessionFileError, load_session_progressive
from pitree.store.tail import Tailer
from pitree.store.watch import watch_file
from textual.message import Message
from textual.widget import Widget
from textual.worker import Worker


class LiveSession:
    """Owns the tailer and the watch worker of one open session; posts its news to `target` (the explorer)."""

    class EntriesAppended(Message):
        """Posted when lines appended to the file joined the tree: `added` in file order, `old_leaf` the tree's
        leaf before them. Never coalesced: each one carries entries."""

        def __init__(self, added: list[Node], old_leaf: Node | None) -> None:
            self.added, self.old_leaf = added, old_leaf
            super().__init__()

    class FileRewritten(Message):
        """Posted when the file was rewritten, replaced or created, and has been read again whole."""

        def __init__(self, tree: SessionTree, builder: SessionBuilder, why: str) -> None:
            self.tree, self.builder, self.why = tree, builder, why
            super().__init__()

    class FileStateChanged(Message):
        """Posted when the file went missing, came back or could not be read ("" once it is fine again)."""

        def __init__(self, state: str, severity: str = "warning") -> None:
            self.state, self.severity = state, severity
            super().__init__()

    class TitleChanged(Message):
        """Posted when oh-my-pi rewrote its title slot in place: the session's name changed."""

        def __init__(self, name: str | None) -> None:
            self.name = name
            super().__init__()

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, LiveSession.TitleChanged)

    def __init__(self, target: Widget, path: Path, builder: SessionBuilder | None) -> None:
        self.target = target
        self.path = path
        self.builder = builder
        self.tailer = Tailer(path, offset=builder.size if builder is not None else 0)
        self.stop_event = asyncio.Event()
        self.worker: Worker[None] | None = None
        self.missing = builder is None

    def start(self) -> None:
        self.worker = self.target.run_worker(
            self._run(),
            group="tail",
            name="tail",
            description="Watching the session file",
            exclusive=True,
            exit_on_error=False,
        )

    def stop(self) -> None:
        self.stop_event.set()
        if self.worker is not None:
            self.worker.cancel()

    async def _run(self) -> None:
        # One poll before waiting: the file may have grown between the load and the watch starting.
        await self.check()
        async for _changes in watch_file(self.path, stop_event=self.stop_event):
            await self.check()

    async def check(self) -> None:
        """Read whatever changed on disk and apply it (also callable from tests)."""
        event = self.tailer.poll()
        kind = event.kind
        if event.slot:
            self._apply_slot(event.slot)
        if kind == "append":
            self._apply(event.data)
        elif kind in ("reset", "created"):
            await self._reload("the file was rewritten or replaced on disk" if kind == "reset" else "the file appeared")
        elif kind == "missing":
            if not self.missing:
                self.missing = True
                self._post(
                    self.FileStateChanged("file deleted — showing what was read; waiting for it to reappear", "error")
                )
        elif kind == "error":
            self._post(self.FileStateChanged(f"cannot read the file: {event.message}", "error"))

    def catch_up(self) -> bool:
        """Apply what was appended since the last check, now (before pitree appends a line itself); True when
        the file changed since then in any way, which the caller should show the user before writing."""
        if self.builder is None:
            return False
        before = self.builder.size
        event = self.tailer.poll()
        if event.slot:
            self._apply_slot(event.slot)
        if event.kind == "append":
            self._apply(event.data)
        return event.kind not in ("unchanged", "waiting") or self.builder.size != before

    def _post(self, message: Message) -> None:
        self.target.post_message(message)

    def _apply_slot(self, line: bytes) -> None:
        """oh-my-pi rewrote its title slot in place: the session's name changes, nothing is reloaded."""
        builder = self.builder
        slot = title_slot_of(line)
        if builder is None or slot is None:
            return
        builder.tree.set_title_slot(slot)
        self._post(self.TitleChanged(builder.tree.name))

    def _apply(self, data: bytes) -> None:
        builder = self.builder
        if builder is None:
            return
        old_leaf = builder.tree.leaf
        added = builder.feed(data, final=False)
        if self.missing:
            self.missing = False
            self._post(self.FileStateChanged(""))
        if added:
            self._post(self.EntriesAppended(added, old_leaf))

    async def _reload(self, why: str) -> None:
        try:
            tree, builder = await asyncio.to_thread(load_session_progressive, self.path)
        except SessionFileError as exc:
            self._post(self.FileStateChanged(str(exc), "error"))
            return
        self.builder = builder
        self.tailer = Tailer(self.path, offset=builder.size)
        self.missing = False
        self._post(self.FileRewritten(tree, builder, why))
