"""`LiveSession`: keeps the explorer's tree in step with the file while Pi writes it, and says so in messages.

On each change the watcher reports, the tailer reads from the saved offset to the last newline; those
lines are parsed and added to the tree (`EntriesAppended`). A torn last line waits for its newline. A file that
shrank or was replaced (Pi rewrote it) is reported (`FileRewritten`: the explorer reads it again as it opens a
session, and this tail ends); a deleted file is reported
(`FileStateChanged`) and what was read stays on screen until it reappears; a file not yet created is waited for.

The tailer looks at the head of the file and the bytes just before its offset. After a change, every byte
already read is checked too (`check_prefix`, in a thread), so a change in place anywhere in it is reported too;
at most once every `CHECK_GAP` seconds and `CHECK_SHARE` times the processor time the last check took, so that
watching a big session Pi is writing costs a small share of one core; never on the watcher's periodic look (it
reports no change: nothing is read while the file is still).
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from pitree.session.dialect_omp import title_slot_of
from pitree.session.entries import Node
from pitree.session.load import SessionBuilder
from pitree.store.prefix_check import check_prefix, slot_spans
from pitree.store.tail import Tailer
from pitree.store.watch import watch_file
from textual.message import Message
from textual.widget import Widget
from textual.worker import Worker

CHECK_GAP = 5.0  # seconds at least from the load, or from the last check, to the next check of the bytes read
CHECK_SHARE = 20  # and at least this many times the last check's processor time: under 5% of a core
# bytes a check reads at a time (`check_prefix`): with the main thread idle, a block that stays in the processor's
# cache sums faster than the tree cache's 16 MB, which suit a check beside a busy main thread (fewer lock waits)
CHECK_BLOCK = 4 << 20


class LiveSession:
    """Owns the tailer and the watch worker of one open session; posts its news to `target` (the explorer)."""

    class EntriesAppended(Message):
        """Posted when lines appended to the file joined the tree: `added` in file order, `old_leaf` the tree's
        leaf before them. Never coalesced: each one carries entries."""

        def __init__(self, added: list[Node], old_leaf: Node | None) -> None:
            self.added, self.old_leaf = added, old_leaf
            super().__init__()

    class FileRewritten(Message):
        """Posted once when the file was rewritten, replaced or created: what was read from it is stale (or there
        was nothing), and the tail `live` stops reading it. `why` says which."""

        def __init__(self, live: LiveSession, why: str) -> None:
            self.live, self.why = live, why
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
        self._verify: asyncio.Task[None] | None = None  # the check of the bytes read (`_verify_prefix`)
        self._verify_again = False  # the file changed while it ran: check once more when it ends
        self._next_verify = time.monotonic() + CHECK_GAP  # the load has just read (and checked) them
        self._halt = threading.Event()  # ends a check's thread
        self.rewritten = False  # `FileRewritten` was posted: this tail reads no more

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
        self._halt.set()
        if self.worker is not None:
            self.worker.cancel()
        if self._verify is not None:
            self._verify.cancel()

    async def _run(self) -> None:
        # One poll before waiting: the file may have grown between the load and the watch starting.
        await self.check(verify=False)
        async for changes in watch_file(self.path, stop_event=self.stop_event):
            await self.check(verify=bool(changes))  # none: the watcher's periodic look, not a change it saw

    async def check(self, verify: bool = True) -> None:
        """Read whatever changed on disk and apply it (also callable from tests); with `verify`, the file changed:
        check the bytes read before too, soon (`_verify_prefix`)."""
        if self.rewritten:
            return
        event = self.tailer.poll()
        kind = event.kind
        if event.slot:
            self._apply_slot(event.slot)
        if kind == "append":
            self._apply(event.data)
        elif kind in ("reset", "created"):
            self._rewritten("the file was rewritten or replaced on disk" if kind == "reset" else "the file appeared")
        elif kind == "missing":
            if not self.missing:
                self.missing = True
                self._post(
                    self.FileStateChanged("file deleted — showing what was read; waiting for it to reappear", "error")
                )
        elif kind == "error":
            self._post(self.FileStateChanged(f"cannot read the file: {event.message}", "error"))
        if verify and kind in ("append", "unchanged", "waiting"):
            if self._verify is not None and not self._verify.done():
                self._verify_again = True
            else:
                self._verify = asyncio.create_task(self._verify_prefix())

    async def _verify_prefix(self) -> None:
        """Check that the file still starts with the bytes the tree was read from (their CRC-32s,
        `SessionBuilder.spans`); report it (`FileRewritten`) when not. oh-my-pi's title slot, rewritten in place,
        is left out."""
        again = True
        while again:
            wait = self._next_verify - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._verify_again = False  # what changed until now, this check sees
            builder = self.builder
            spans = list(builder.spans or ()) if builder is not None else []
            if builder is None or not spans or self.rewritten:
                return
            has_slot = builder.tree.title_slot is not None
            first = slot_spans(spans, has_slot)
            if has_slot and not first:
                return  # read before the slot had a span of its own: its changes would look like a rewrite
            same, spent = await asyncio.to_thread(self._check_prefix, spans, first)
            # its processor time, not its wall time: beside a busy main thread (a load, layouts) a check waits for
            # the interpreter most of the time, and the next one waited 20 times that (a minute at 1M entries)
            self._next_verify = time.monotonic() + max(CHECK_GAP, CHECK_SHARE * spent)
            if same is False and self.builder is builder:
                self._rewritten("the file was changed in place on disk")
                return
            again = self._verify_again

    def _check_prefix(self, spans: list[tuple[int, int]], first: int) -> tuple[bool | None, float]:
        """`check_prefix` of the bytes read (in a thread), and the processor time this thread spent on it."""
        start = time.thread_time()
        same = check_prefix(self.path, spans, self._halt, first, CHECK_BLOCK)
        return same, time.thread_time() - start

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

    def _rewritten(self, why: str) -> None:
        if not self.rewritten:  # the tailer and the check may both see it: said once
            self.rewritten = True
            self._post(self.FileRewritten(self, why))
