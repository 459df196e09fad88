"""One line of progress on stderr for the command line's long runs (reading a big session, indexing sessions,
an export)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pitree.session.text import make_safe

READ_AFTER = 0.5  # seconds of reading a session before its progress is shown


def progress_printer(text: Callable[..., str], after: float) -> tuple[Callable[..., None] | None, Callable[[], None]]:
    """A progress callback writing `text(*args)` on one stderr line (None when stderr is not a terminal), shown
    only after `after` seconds (a quick run prints nothing) and at most 10 times a second; and a function clearing
    that line. The callback's first two arguments are (done, total): the last step is always shown."""
    if not sys.stderr.isatty():
        return None, lambda: None
    started = time.monotonic()
    state = {"last": 0.0, "shown": False}

    def show(done: int, total: int, *more: Any) -> None:
        now = time.monotonic()
        if now - started < after or (now - state["last"] < 0.1 and done < total):
            return
        state["last"], state["shown"] = now, True
        sys.stderr.write(f"\r{text(done, total, *more)}\x1b[K")
        sys.stderr.flush()

    def clear() -> None:
        if state["shown"]:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()

    return show, clear


def reading(path: Path) -> tuple[Callable[..., None] | None, Callable[[], None]]:
    """`progress_printer` for reading the session at `path` (bytes done, total)."""
    name = make_safe(path.name, keep_newlines=False)

    def text(done: int, total: int) -> str:
        return f"reading {name}: {done / 1e6:,.0f} of {total / 1e6:,.0f} MB ({100 * done // max(total, 1)}%)"

    return progress_printer(text, READ_AFTER)
