"""`LiveSession`: keeps the explorer's tree in step with the file while Pi writes it.

On each change the watcher reports, the tailer reads from the saved offset to the last newline; those
lines are parsed and added to the tree. A torn last line waits for its newline. A file that shrank or
was replaced (Pi rewrote it) is reloaded with the selection kept by id; a deleted file is reported and
what was read stays on screen until it reappears; a file not yet created is waited for.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from pitree.session.dialect_omp import title_slot_of
from pitree.session.load import SessionBuilder
from pitree.store.session_file import SessionFileError, load_session_progressive
from pitree.store.tail import Tailer
from pitree.store.watch import watch_file
from textual.worker import Worker

if TYPE_CHECKING:
    from pitree.widgets.app import PitreeApp


class LiveSession:
    """Owns the tailer and the watch worker of one open session."""

    def __init__(self, app: PitreeApp, path: Path, builder: SessionBuilder | None) -> None:
        self.app = app
        self.path = path
        self.builder = builder
        self.tailer = Tailer(path, offset=builder.size if builder is not None else 0)
        self.stop_event = asyncio.Event()
        self.worker: Worker[None] | None = None
        self.missing = builder is None

    def start(self) -> None:
        self.worker = self.app.run_worker(
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
            self.apply_slot(event.slot)
        if kind == "append":
            self._apply(event.data)
        elif kind in ("reset", "created"):
            await self._reload("the file was rewritten or replaced on disk" if kind == "reset" else "the file appeared")
        elif kind == "missing":
            if not self.missing:
                self.missing = True
                self.app.file_state("file deleted — showing what was read; waiting for it to reappear", "error")
        elif kind == "error":
            self.app.file_state(f"cannot read the file: {event.message}", "error")

    def apply_slot(self, line: bytes) -> None:
        """oh-my-pi rewrote its title slot in place: the session's name changes, nothing is reloaded."""
        builder = self.builder
        slot = title_slot_of(line)
        if builder is None or slot is None:
            return
        builder.tree.set_title_slot(slot)
        self.app._status(name=builder.tree.name)

    def _apply(self, data: bytes) -> None:
        builder = self.builder
        if builder is None:
            return
        tree = builder.tree
        old_leaf = tree.leaf
        was_following = self.app.following
        added = builder.feed(data, final=False)
        if self.missing:
            self.missing = False
            self.app.file_state("")
        self.app.entries_added(added, old_leaf, was_following)

    async def _reload(self, why: str) -> None:
        try:
            tree, builder = await asyncio.to_thread(load_session_progressive, self.path)
        except SessionFileError as exc:
            self.app.file_state(str(exc), "error")
            return
        self.builder = builder
        self.tailer = Tailer(self.path, offset=builder.size)
        self.missing = False
        self.app.session_reloaded(tree, builder, why)
