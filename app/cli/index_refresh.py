"""Refreshing the sessions index for the CLI: which folders a command covers (`scopes`), the refresh with
progress on stderr (`refreshed`: shown only after PROGRESS_AFTER seconds and only on a terminal), and the note
printed when another process holds the index and the files are read directly instead (`busy_note`); the browser's
newest sessions indexed in a child while it starts (`index_newest_early`, `newest_indexed`)."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from pitree.cli.progress import progress_printer
from pitree.session.text import human_size
from pitree.store.catalog import cwd_folder_name, find_session_paths, is_default_layout, session_roots
from pitree.store.omp_paths import cwd_folder as omp_cwd_folder
from pitree.store.session_index import SessionIndex

PROGRESS_AFTER = 0.3  # seconds of indexing before progress is shown (a warm refresh shows nothing)
NEWEST_FILES = 16  # what the browser's first screen lists, about
NEWEST_BYTES = 8 << 20  # read before the browser starts no more than this: a huge newest session waits for it
BUSY_WAIT = 2.0  # seconds to wait for another process's lock on the index before reading the files directly
NEWEST_WAIT = 3.0  # seconds the browser waits for `index_newest_early`'s child before it lists without it
_newest_child: int | None = None  # that child's pid, until `newest_indexed` has waited for it


def _indexing(done: int, total: int, done_bytes: int, total_bytes: int) -> str:
    return f"indexing sessions: {done}/{total} files, {human_size(done_bytes)} of {human_size(total_bytes)}"


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
    show, clear = progress_printer(_indexing, PROGRESS_AFTER)
    try:
        index.refresh(find_session_paths(folder), progress=show, root=folder)
    finally:
        clear()


def _short_wait() -> SessionIndex:
    return SessionIndex(busy_timeout=0.5)


def index_newest(session_dir: str | None, opener: Callable[[], SessionIndex] = _short_wait) -> int:
    """Index the newest sessions of the browser's folders (at most NEWEST_FILES, NEWEST_BYTES) before it imports
    Textual, so that its first screen has rows; its own refresh then reads the rest. Run in this thread, before
    the UI: in a thread beside Textual's start, each file's stat waited for the GIL and the rows came later
    (bench/bench_store.py). Returns how many files were looked at; anything going wrong is left to the browser,
    which opens the index itself and says what failed."""
    try:
        found: list[tuple[int, int, str, Path]] = []  # (mtime_ns, size, path, its folder)
        for root, _ in session_roots(session_dir):
            for p in find_session_paths(root):
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                found.append((st.st_mtime_ns, st.st_size, p, Path(root)))
        found.sort(key=lambda item: -item[0])
        picked: dict[Path, list[str]] = {}
        total = 0
        for _, size, p, root in found[:NEWEST_FILES]:
            total += size
            if total > NEWEST_BYTES:
                break
            picked.setdefault(root, []).append(p)
        if picked:
            with opener() as index:
                for root, paths in picked.items():
                    index.refresh(paths, root=root, keep_missing=True)
        return sum(map(len, picked.values()))
    except Exception:  # noqa: BLE001 - see the docstring
        return 0


def index_newest_early(session_dir: str | None) -> None:
    """`index_newest` in a forked child, which works on the other core while this process imports Textual and
    starts the browser; the browser lists its first rows after `newest_indexed`. Where fork is missing or fails,
    `index_newest` runs here."""
    global _newest_child
    try:
        pid = os.fork() if hasattr(os, "fork") and _newest_child is None else -1
    except OSError:
        pid = -1
    if pid == 0:  # the child: nothing of the parent's (atexit, buffers) may run here
        try:
            index_newest(session_dir)
        finally:
            os._exit(0)
    if pid < 0:
        index_newest(session_dir)
    else:
        _newest_child = pid


def newest_indexed(timeout: float = NEWEST_WAIT) -> None:
    """Wait for `index_newest_early`'s child (if any) to end. One still running after `timeout` is stopped: the
    browser's own refresh reads what it had not written (an index write is one transaction)."""
    global _newest_child
    pid, _newest_child = _newest_child, None
    if pid is None:
        return
    deadline = time.monotonic() + timeout
    try:
        while os.waitpid(pid, os.WNOHANG)[0] == 0:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return
            time.sleep(0.002)
    except ChildProcessError:  # already reaped
        return


def busy_note(doing: str) -> None:
    print(f"pitree: index busy (another process holds it): {doing} the files directly", file=sys.stderr)
