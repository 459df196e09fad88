"""Reading session files for the sessions index: `load_one` (the one-pass scan, else the whole tree) and
`load_all` (many files, in worker processes when there is a lot to read).

A file the fast scan (`index_scan`) does not model is loaded through the tree (`load_session_fast` with
`save_cache=False` for a new file, so 2,000 sessions do not fill the tree cache) and read whole again whenever it
changes. Any failure becomes the file's recorded error: one bad file never stops a refresh. Workers take and
return plain picklable values.
"""

from __future__ import annotations

import mmap
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pitree.session.entries import Node
from pitree.session.summary_info import SessionInfo, scan_session
from pitree.store.index_scan import Unsupported, scan_file, session_facts
from pitree.store.session_file import load_session_fast

PARALLEL_MIN_BYTES = 64 << 20  # less than this to (re)index: worker processes cost more than they save
IN_PROCESS_FIRST = 16  # files read in this process while worker processes start

Job = tuple[str, tuple[int, int, int], bool, "dict[str, Any] | None"]  # path, (size, mtime_ns, ino), known, old


@dataclass(slots=True)
class Loaded:
    """One file read for the index. `appended`: `docs` and `labels` extend what is stored (read from `offset`
    of the stored row on); otherwise they replace it."""

    path: str
    key: tuple[int, int, int]
    known: bool  # the index had an older version of this file
    info: SessionInfo | None
    docs: list[tuple[str, str, str]]
    error: str | None
    labels: dict[str, str | None] = field(default_factory=dict)
    offset: int = 0
    digest: bytes | None = None
    state: bytes | None = None  # orjson of index_scan's state; None: read whole on the next change
    appended: bool = False
    first_doc: int = 0  # with `appended`: the number of the first new document, and of the first new label
    first_label: int = 0
    start: int = 0  # with `appended`: the stored offset it was read on from


class _MappedReader:
    """Entries back from the file mapped into memory (no seek and read per entry, no copy of a big file).

    Only message content and timestamps are used, which Pi's migrations do not change."""

    def __init__(self, view: memoryview) -> None:
        self.view = view

    def entries(self, nodes: list[Node]) -> list[dict[str, Any]]:
        view, loads = self.view, orjson.loads
        out: list[dict[str, Any]] = []
        for node in nodes:
            try:
                obj = loads(view[node.offset : node.offset + node.length])
            except orjson.JSONDecodeError:
                obj = None
            out.append(obj if isinstance(obj, dict) else {})
        return out


def load_full(path: str, key: tuple[int, int, int], known: bool) -> Loaded:
    """Load and scan one file through the tree (any dialect, any version)."""
    p = Path(path)
    try:
        # A file that changed since it was indexed is probably live: keep its tree for the next refresh.
        # read once (`SessionBuilder`), and dropped after: not frozen (`load_session_fast`)
        tree, builder = load_session_fast(p, save_cache=known, texts_apart=False, freeze=False)
        if tree.header is None:
            reason = "empty file" if key[0] == 0 else "not a Pi session (no session header on the first line)"
            return Loaded(path, key, known, None, [], reason)
        with open(p, "rb") as fh, mmap.mmap(fh.fileno(), builder.size, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            try:
                info, docs = scan_session(tree, _MappedReader(view), p, key[0], key[1] / 1e6)
            finally:
                view.release()
    except Exception as exc:  # noqa: BLE001 - recorded per file, shown by `errors()`
        text = str(exc) or type(exc).__name__
        return Loaded(path, key, known, None, [], text)
    labels: dict[str, str | None] = {d[0]: d[2] for d in docs if d[1] == "label"}
    return Loaded(path, key, known, info, [d for d in docs if d[1] != "label"], None, labels)


def load_one(path: str, key: tuple[int, int, int], known: bool, old: dict[str, Any] | None = None) -> Loaded:
    """The one-pass scan of `path` (read on from `old`'s offset when the prefix is unchanged), else `load_full`."""
    try:
        scanned = scan_file(path, key[0], key[2], old)
    except (Unsupported, OSError, ValueError, KeyError, TypeError):
        return load_full(path, key, known)
    facts = session_facts(scanned, key[1] / 1e6)
    info = SessionInfo(path=Path(path), size=key[0], mtime=key[1] / 1e6, agent="pi", **facts)
    state = scanned.state
    return Loaded(
        path,
        key,
        known,
        info,
        scanned.docs,
        None,
        scanned.labels,
        scanned.offset,
        scanned.digest,
        orjson.dumps(state),
        scanned.appended,
        state["ndocs"] - len(scanned.docs),
        state["nlabels"] - len(scanned.labels),
        old["offset"] if scanned.appended and old is not None else 0,
    )


def _start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker with the process's real stderr: it hands the child
    `sys.stderr.fileno()`, and under Textual sys.stderr is a capture object without a descriptor (-1)."""
    from multiprocessing import resource_tracker

    saved = sys.stderr
    try:
        try:
            usable = saved is not None and saved.fileno() >= 0
        except (AttributeError, OSError, ValueError):
            usable = False
        if not usable and sys.__stderr__ is not None:
            sys.stderr = sys.__stderr__
        resource_tracker.ensure_running()
    except (OSError, ValueError):
        pass  # the pool then fails to start and load_all reads the files in this process
    finally:
        sys.stderr = saved


def load_all(
    todo: list[Job], cancel: Callable[[], bool] | None, total_bytes: int, workers: int
) -> Iterator[Loaded | None]:
    """Loaded files; None once `cancel()` says stop. In `todo`'s order in process; big jobs use worker
    processes and come in completion order, except the first few, read here while the workers start (the
    newest sessions: the rows a list shows first)."""
    if workers <= 1 or len(todo) < 2 or total_bytes < PARALLEL_MIN_BYTES:
        for job in todo:
            if cancel is not None and cancel():
                yield None
                return
            yield load_one(*job)
        return
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    _start_resource_tracker()
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    finished: set[str] = set()
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
            pending: set[Future[Loaded]] = set()
            head = todo[:IN_PROCESS_FIRST]
            queue = iter(todo[IN_PROCESS_FIRST:])
            try:
                for job in queue:
                    pending.add(pool.submit(load_one, *job))
                    if len(pending) >= workers * 4:
                        break
                for job in head:
                    if cancel is not None and cancel():
                        yield None
                        return
                    finished.add(job[0])
                    yield load_one(*job)
                while pending:
                    done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                    for fut in done:
                        loaded = fut.result()
                        finished.add(loaded.path)
                        yield loaded
                        nxt = next(queue, None)
                        if nxt is not None:
                            pending.add(pool.submit(load_one, *nxt))
                    if cancel is not None and cancel():
                        yield None
                        return
            finally:
                for fut in pending:
                    fut.cancel()
    except (BrokenProcessPool, OSError, ValueError, RuntimeError):
        # Workers could not start (a __main__ that cannot be re-imported; under Textual, whose stderr has no file
        # descriptor, multiprocessing's resource tracker fails with ValueError): finish in this process.
        for job in todo:
            if job[0] in finished:
                continue
            if cancel is not None and cancel():
                yield None
                return
            yield load_one(*job)
