"""Refreshing the sessions index for the CLI: which folders a command covers (`scopes`), the refresh with
progress on stderr (`refreshed`: shown only after PROGRESS_AFTER seconds and only on a terminal), and the note
printed when another process holds the index and the files are read directly instead (`busy_note`)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from pitree.session.text import human_size
from pitree.store.catalog import cwd_folder_name, find_session_paths, is_default_layout, session_roots
from pitree.store.omp_paths import cwd_folder as omp_cwd_folder
from pitree.store.session_index import SessionIndex

PROGRESS_AFTER = 0.3  # seconds of indexing before progress is shown (a warm refresh shows nothing)
BUSY_WAIT = 2.0  # seconds to wait for another process's lock on the index before reading the files directly


def progress_printer() -> tuple[Callable[[int, int, int, int], None] | None, Callable[[], None]]:
    """A progress callback for refresh (None when stderr is not a terminal) and a function clearing its line."""
    if not sys.stderr.isatty():
        return None, lambda: None
    started = time.monotonic()
    state = {"last": 0.0, "shown": False}

    def show(done: int, total: int, done_bytes: int, total_bytes: int) -> None:
        now = time.monotonic()
        if now - started < PROGRESS_AFTER or (now - state["last"] < 0.1 and done < total):
            return
        state["last"], state["shown"] = now, True
        sys.stderr.write(
            f"\rindexing sessions: {done}/{total} files, {human_size(done_bytes)} of {human_size(total_bytes)}\x1b[K"
        )
        sys.stderr.flush()

    def clear() -> None:
        if state["shown"]:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()

    return show, clear


def scopes(session_dir: str | None, all_: bool) -> tuple[Path, list[tuple[Path, str | None]]]:
    """(root for display, [(folder to scan, cwd filter)]): Pi's sessions and oh-my-pi's (`session_roots`)."""
    roots = session_roots(session_dir)
    shown = Path(os.path.abspath(roots[0][0]))
    if all_:
        return shown, [(Path(os.path.abspath(r)), None) for r, _ in roots]
    cwd = os.getcwd()
    if not is_default_layout(session_dir):
        return shown, [(Path(os.path.abspath(r)), cwd) for r, _ in roots]
    folders: list[tuple[Path, str | None]] = []
    for root, agent in roots:
        name = cwd_folder_name(cwd) if agent == "pi" else omp_cwd_folder(cwd)
        folders.append((Path(os.path.abspath(root)) / name, cwd))
    return shown, folders


def refreshed(index: SessionIndex, folder: Path) -> None:
    show, clear = progress_printer()
    try:
        index.refresh(find_session_paths(folder), progress=show, root=folder)
    finally:
        clear()


def busy_note(doing: str) -> None:
    print(f"pitree: index busy (another process holds it): {doing} the files directly", file=sys.stderr)
