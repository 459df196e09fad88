"""`IndexRefresh`: a sessions-index refresh of a list of folders in a thread of its own, telling a listener how it
goes and how it ended, a failure included (the browser shows it; a refresh that raised must not leave the list
saying "indexing" for ever). With `own_process`, the thread runs it in a child process (`store.index_child`) and
relays what that one tells: the browser's choice, so that drawing never takes the GIL from the refresh. Nothing
here imports Textual.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Protocol

from pitree.store.catalog import find_session_paths
from pitree.store.session_index import RefreshStats, SessionIndex


class Listener(Protocol):
    """What a refresh tells, from its thread."""

    def progress(self, done: int, total: int) -> None: ...  # files read of the files to read

    def written(self, count: int) -> None: ...  # the first `count` files read are in the index

    def finished(self, stats: RefreshStats, error: str | None) -> None: ...  # over: done, stopped or failed


# A refresh's child starts once the one before it has ended: in one process `SessionIndex` refreshes never
# overlap, and two children reading the same new files would do the work twice.
_one_child = threading.Lock()


class IndexRefresh:
    """`index.refresh` over `roots`, one after the other, in a daemon thread (with `own_process`: in a child process
    that thread waits on). `cancel()` stops it between files (what was read is kept) and silences it: the listener
    hears nothing after `cancel` returns. Progress is told at most every `progress_every` seconds, and always for
    the last file."""

    def __init__(
        self,
        index: SessionIndex,
        roots: Sequence[Path],
        listener: Listener,
        progress_every: float = 0.0,
        own_process: bool = False,
    ) -> None:
        self.index = index
        self.progress_every = progress_every
        self._child: subprocess.Popen[str] | None = None
        self._progress_at = -float("inf")
        self.roots = [Path(r) for r in roots]
        self._listener: Listener | None = listener
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        target = self._run_child if own_process else self._run
        self._thread = threading.Thread(target=target, name="pitree-index-refresh", daemon=True)

    def start(self) -> IndexRefresh:
        self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def cancel(self) -> None:
        with self._lock:
            self._listener = None
            self._cancelled.set()
            if self._child is not None and self._child.stdin is not None:
                self._child.stdin.close()  # its leash: the child stops between files and ends

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _tell(self, name: str, *args: object) -> None:
        with self._lock:
            if self._listener is not None:
                getattr(self._listener, name)(*args)

    def _progress(self, done: int, total: int, _bytes: int, _total_bytes: int) -> None:
        if (now := time.monotonic()) - self._progress_at >= self.progress_every or done == total:
            self._progress_at = now
            self._tell("progress", done, total)

    def _run(self) -> None:
        stats = RefreshStats()
        error: str | None = None
        before = 0  # files written for the roots already done: counts add up over the roots
        last = 0  # files written so far for this root, as the index said

        def written(count: int) -> None:
            nonlocal last
            last = count
            self._tell("written", before + count)

        try:
            for root in self.roots:
                part = self.index.refresh(
                    find_session_paths(root),
                    progress=self._progress,
                    cancel=self._cancelled.is_set,
                    root=root,
                    written=written,
                )
                before, last = before + last, 0
                for name in ("added", "updated", "removed", "unchanged", "errors", "seconds", "appended"):
                    setattr(stats, name, getattr(stats, name) + getattr(part, name))
                stats.cancelled = stats.cancelled or part.cancelled
                if self._cancelled.is_set():
                    stats.cancelled = True
                    break
        except Exception as exc:  # noqa: BLE001 - told to the listener, which shows it
            error = f"{type(exc).__name__}: {exc}"
        self._tell("finished", stats, error)

    def _run_child(self) -> None:
        spec = {
            "db": str(self.index.path),
            "roots": [str(r) for r in self.roots],
            "progress_every": self.progress_every,
            "workers": self.index.workers,
        }
        command = [sys.executable, "-m", "pitree.store.index_child", json.dumps(spec)]
        with _one_child, tempfile.TemporaryFile("w+") as errors:
            with self._lock:
                if self._cancelled.is_set():
                    return
                try:
                    child = subprocess.Popen(
                        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True
                    )
                except OSError as exc:
                    child = None
                    failure = f"{type(exc).__name__}: {exc}"
                self._child = child
            if child is None:
                self._tell("finished", RefreshStats(), failure)
                return
            assert child.stdout is not None
            if not self._relay(child.stdout):
                code = child.wait()
                errors.seek(0)
                said = [line.strip() for line in errors.read().splitlines() if line.strip()]
                why = f": {said[-1]}" if said else ""
                self._tell("finished", RefreshStats(), f"the index refresh process ended with code {code}{why}")
            child.wait()

    def _relay(self, lines: IO[str]) -> bool:
        """Tell what the child's lines say; True once it told how the refresh ended."""
        for line in lines:
            try:
                what, *args = json.loads(line)
                if what == "finished":
                    fields = {f.name for f in dataclasses.fields(RefreshStats)}
                    stats = RefreshStats(**{k: v for k, v in args[0].items() if k in fields})
                    self._tell("finished", stats, args[1])
                    return True
                if what in ("progress", "written"):
                    self._tell(what, *(int(a) for a in args))
            except (ValueError, TypeError, AttributeError, IndexError):
                continue  # not a line of ours (a library printing): skipped
        return False
