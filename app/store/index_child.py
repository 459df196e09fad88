"""The sessions-index refresh as a process of its own (`python -m pitree.store.index_child SPEC`), for the browser.

In the browser's process a refresh shares the GIL with Textual: each moment the UI spends drawing is taken from
the refresh's reading and writing, and the whole index came later than `pitree ls` builds it. Here it has an
interpreter to itself. SPEC is JSON: {"db": index file, "roots": [folders], "progress_every": seconds, "workers":
processes or null}. It writes one JSON array per line on stdout, what `index_thread.Listener` is told:
`["progress", done, total]`, `["written", count]`, then `["finished", stats, error]`. Its stdin is the leash:
when it closes (the browser cancelled the refresh, or exited, or died), the refresh stops between files and the
process ends; what was read is kept, as with a cancelled refresh in a thread.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
from pathlib import Path
from typing import IO, Any

from pitree.store.index_thread import IndexRefresh
from pitree.store.session_index import RefreshStats, SessionIndex


class _Lines:
    """A listener writing each thing it is told as one JSON line."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.lock = threading.Lock()
        self.over = threading.Event()

    def _line(self, *item: Any) -> None:
        with self.lock:
            try:
                self.out.write(json.dumps(item) + "\n")
                self.out.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass  # nobody listens any more: the refresh stops when stdin closes

    def progress(self, done: int, total: int) -> None:
        self._line("progress", done, total)

    def written(self, count: int) -> None:
        self._line("written", count)

    def finished(self, stats: RefreshStats, error: str | None) -> None:
        self._line("finished", dataclasses.asdict(stats), error)
        self.over.set()


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    lines = _Lines(sys.stdout)
    index = SessionIndex(Path(spec["db"]))
    index.workers = spec.get("workers")
    refresh = IndexRefresh(index, [Path(r) for r in spec["roots"]], lines, float(spec.get("progress_every", 0)))

    def leash() -> None:
        sys.stdin.read()  # returns at end of file: the parent closed the pipe or is gone
        if not lines.over.is_set():
            refresh.cancel()

    threading.Thread(target=leash, name="pitree-index-leash", daemon=True).start()
    refresh.start().join()
    index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
