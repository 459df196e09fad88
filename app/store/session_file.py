"""Reading a session file: the whole file into a tree, and one entry's full JSON back from its offset.

The only place (with tail.py and append.py) that opens session files. It opens them read-only and never
changes a byte.
"""

from __future__ import annotations

import gc
import marshal
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not on Windows, where there is no fork either
    fcntl = None  # type: ignore[assignment]

from ..session.entries import Node
from ..session.gcpause import BIG, gc_paused
from ..session.load import SessionBuilder, migrate_entry
from ..session.parse import parse_line
from ..session.tree import SessionTree
from . import tree_cache
from .tree_cache import CacheWriter


class SessionFileError(Exception):
    """A session file cannot be read; the message is one line for the user."""


def check_readable(path: Path) -> os.stat_result:
    """Stat `path` and turn the usual failures into one clear message."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise SessionFileError(f"{path}: no such file") from None
    except PermissionError:
        raise SessionFileError(f"{path}: permission denied") from None
    except OSError as exc:
        raise SessionFileError(f"{path}: {exc.strerror or exc}") from None
    if path.is_dir():
        raise SessionFileError(f"{path}: is a directory, not a session file (try `pitree ls --session-dir`)")
    return st


def read_bytes(path: Path) -> bytes:
    check_readable(path)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise SessionFileError(f"{path}: {exc.strerror or exc}") from None


def load_session(path: Path) -> tuple[SessionTree, SessionBuilder]:
    """Read and parse the whole file. Returns the tree and the builder (to feed appended lines later)."""
    data = read_bytes(path)
    builder = SessionBuilder()
    builder.feed(data, final=True)
    return builder.tree, builder


class EntryReader:
    """Re-reads entries' JSON from their byte offsets (the tree keeps no parsed entry alive)."""

    def __init__(self, path: Path, tree: SessionTree) -> None:
        self.path = path
        self.tree = tree

    def raw(self, node: Node) -> bytes:
        """The entry's line as it is in the file (without the newline)."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(node.offset)
                return fh.read(node.length)
        except OSError as exc:
            raise SessionFileError(f"{self.path}: {exc.strerror or exc}") from None

    def entry(self, node: Node) -> dict[str, Any]:
        """The entry as Pi holds it (migrated in memory). Raises SessionFileError if the file changed."""
        obj, why = parse_line(self.raw(node))
        if obj is None:
            raise SessionFileError(f"{self.path}: line {node.line} no longer parses ({why}); the file changed")
        return migrate_entry(obj, node, self.tree)

    def entries(self, nodes: list[Node]) -> list[dict[str, Any]]:
        """Several entries with one open of the file, in the order given."""
        out: list[dict[str, Any]] = []
        try:
            with open(self.path, "rb") as fh:
                for node in nodes:
                    fh.seek(node.offset)
                    obj, why = parse_line(fh.read(node.length))
                    if obj is None:
                        raise SessionFileError(
                            f"{self.path}: line {node.line} no longer parses ({why}); the file changed"
                        )
                    out.append(migrate_entry(obj, node, self.tree))
        except OSError as exc:
            raise SessionFileError(f"{self.path}: {exc.strerror or exc}") from None
        return out


# Lines are read 1 MB at a time: with 8 MB, the chunk, its copies and its split lines left a peak ~30 MB
# above the tree (glibc keeps freed big blocks mapped), for no measurable gain in speed.
CHUNK = 1 << 20


class LoadCancelled(Exception):
    """The user cancelled a load in progress."""


def _feed_lines(
    path: Path,
    builder: SessionBuilder,
    stop: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    total: int = 0,
    chunk_size: int = CHUNK,
) -> None:
    """Feed the complete lines from `builder.size` up to byte `stop` (the end when None), in chunks.

    A torn last line is left out (it may still be being written), so `builder.size` is where tailing
    continues. Reports (bytes read, total) and raises LoadCancelled when `cancelled()`.
    """
    span = (stop if stop is not None else max(total, builder.size)) - builder.size
    try:
        # One pause over the whole read (chunks are too small to count as big builds on their own).
        with open(path, "rb") as fh, gc_paused(big=span > BIG):
            fh.seek(builder.size)
            pending = b""
            while stop is None or builder.size + len(pending) < stop:
                if cancelled is not None and cancelled():
                    raise LoadCancelled(f"loading {path.name} cancelled")
                want = chunk_size if stop is None else min(chunk_size, stop - builder.size - len(pending))
                chunk = fh.read(want)
                if not chunk:
                    break
                data = pending + chunk if pending else chunk
                cut = data.rfind(b"\n") + 1
                if cut:
                    builder.feed(data[:cut], final=False)
                pending = data[cut:]
                if progress is not None:
                    done = builder.size + len(pending)
                    progress(done, max(total, done))
    except OSError as exc:
        raise SessionFileError(f"{path}: {exc.strerror or exc}") from None


def load_session_progressive(
    path: Path,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    chunk_size: int = CHUNK,
) -> tuple[SessionTree, SessionBuilder]:
    """Load in chunks of complete lines, reporting (bytes done, total) and stopping when `cancelled()`."""
    st = check_readable(path)
    builder = SessionBuilder()
    _feed_lines(path, builder, None, progress, cancelled, st.st_size, chunk_size)
    builder.tree.finish_orphans()
    return builder.tree, builder


PARALLEL_MIN_BYTES = 24 << 20


def load_session_fast(
    path: Path,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    save_cache: bool = True,
    final: bool = False,
) -> tuple[SessionTree, SessionBuilder]:
    """Like `load_session_progressive`, but a big file's back half is parsed by a forked child process.

    `final=True` (one-shot commands) also reads a last line without its newline, as Pi does; a tailer
    leaves it (False) until its newline arrives. The tree cache never holds such a line.

    Parsing is CPU-bound Python; with two cores the halves parse at once and the child hands back plain
    tuples (marshal). v1 files (ids depend on every earlier line) and small files load in one process;
    so does anything when fork is unavailable or the child fails. A tree cached by an earlier load of
    the same file (`tree_cache`) is used first: only lines added since are parsed.
    """
    st = check_readable(path)
    size = st.st_size
    cached = tree_cache.load_cached(path)
    if cached is not None:  # only what was appended since needs parsing
        _feed_lines(path, cached, None, progress, cancelled, size)
        tree, builder = cached.tree, cached
    else:
        cache = tree_cache.CacheWriter.open(path, size) if save_cache else None
        try:
            tree, builder = _load_uncached(path, size, progress, cancelled, cache)
            if cache is not None:
                if not cache.segments and cache.wants(tree, builder):
                    cache.add(tree_cache.segment(builder))
                cache.finish(tree, builder)
        finally:
            if cache is not None:
                cache.close()
    if final:
        _feed_last_line(path, builder)
    tree.finish_orphans()
    return tree, builder


def _feed_last_line(path: Path, builder: SessionBuilder) -> None:
    """The bytes after the last newline, parsed as a line of their own (Pi reads a crash's unfinished line)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(builder.size)
            rest = fh.read()
    except OSError as exc:
        raise SessionFileError(f"{path}: {exc.strerror or exc}") from None
    if rest.strip():
        builder.feed(rest, final=True)


def _load_uncached(
    path: Path,
    size: int,
    progress: Callable[[int, int], None] | None,
    cancelled: Callable[[], bool] | None,
    cache: CacheWriter | None = None,
) -> tuple[SessionTree, SessionBuilder]:
    """The tree and its builder. A parallel load also writes `cache`'s segments as it goes: the front
    half's rows while the child still parses, then the child's frames as they came, so the tree cache costs
    no second pass over the tree; otherwise `cache` is left empty (the caller saves the tree whole).

    The child sends its half as frames, one per chunk of lines it parsed (each a marshalled segment, length
    first, then an empty frame to say it finished), so neither process ever holds the whole back half as
    rows or bytes; the frames wait in the parent until its own half is in, then join the tree in order."""
    if size < PARALLEL_MIN_BYTES or not hasattr(os, "fork"):
        return load_session_progressive(path, progress, cancelled)
    try:
        with open(path, "rb") as fh:
            first = fh.readline()
            fh.seek(size // 2)
            fh.readline()
            split = fh.tell()
    except OSError as exc:
        raise SessionFileError(f"{path}: {exc.strerror or exc}") from None
    builder = SessionBuilder()
    builder.feed(first, final=False)
    if not first.endswith(b"\n") or builder._migrate_v1 or split >= size or builder.size != len(first):
        return load_session_progressive(path, progress, cancelled)
    read_fd, write_fd = os.pipe()
    _widen(write_fd)
    pid = os.fork()
    if pid == 0:  # the child: parse [split, size) and send the result; never returns
        code = 1
        try:
            gc.disable()  # a short-lived process building many objects: collection is pure overhead
            os.close(read_fd)
            _parse_back_half(path, builder, split, size, lambda frame: _send(write_fd, frame))
            _send(write_fd, b"")
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    received: list[bytes | None] = []
    finished: list[bool] = []
    reader = threading.Thread(target=_drain, args=(read_fd, received, finished), daemon=True)
    reader.start()
    try:
        _feed_lines(path, builder, split, progress, cancelled, size)
        if cache is not None and builder.size == split and cache.wants(builder.tree, builder):
            cache.add(tree_cache.segment(builder))  # while the child is still busy with its half
    except LoadCancelled:
        os.kill(pid, 9)
        raise
    finally:
        reader.join()
        _, status = os.waitpid(pid, 0)
    if status != 0 or builder.size != split or not finished:
        if cache is not None:
            cache.clear()
        return load_session_progressive(path, progress, cancelled)
    with gc_paused(big=True):
        for i, frame in enumerate(received):
            received[i] = None  # each frame's bytes go as soon as its rows are in
            assert frame is not None
            if cache is not None:
                cache.add(frame)
            rows, skipped, problems, lines, consumed = marshal.loads(frame)
            del frame
            builder.adopt_segment(rows, skipped, problems, lines, consumed)
            del rows
    if progress is not None:
        progress(size, size)
    builder.tree.finish_orphans()
    return builder.tree, builder


def _parse_back_half(path: Path, builder: SessionBuilder, split: int, size: int, send: Callable[[bytes], None]) -> None:
    """In the child: the complete lines of [split, size), read `CHUNK` at a time, each chunk sent as one
    marshalled segment (`SessionBuilder.adopt_segment`'s arguments, lines counted from the chunk's start);
    a torn last line is left for the parent's tailer."""
    with open(path, "rb") as fh:
        fh.seek(split)
        pending = b""
        start = split
        left = size - split
        while left > 0:
            chunk = fh.read(min(CHUNK, left))
            if not chunk:
                break
            left -= len(chunk)
            data = pending + chunk if pending else chunk
            cut = data.rfind(b"\n") + 1
            if cut:
                part = builder.continuation(start)
                rows = part.parse_segment(data[:cut])
                send(marshal.dumps((rows, *part.segment_tail(start)), tree_cache.ROWS_MARSHAL))
                start += cut
            pending = data[cut:]


def _widen(fd: int) -> None:
    """Give the pipe a 1 MB buffer where Linux allows it (64 KB by default): the parent's reader thread only
    runs between the main thread's GIL slices, and with a small buffer the child would wait on every write."""
    size = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if size is None:
        return
    try:
        fcntl.fcntl(fd, size, 1 << 20)
    except OSError:  # above /proc/sys/fs/pipe-max-size, or not permitted: the default buffer still works
        pass


def _send(fd: int, frame: bytes) -> None:
    """One frame down the pipe: its length in 8 bytes, then the bytes."""
    view = memoryview(len(frame).to_bytes(8, "little") + frame)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, n: int) -> bytes | None:
    """`n` bytes from `fd`, or None if it closes first."""
    parts = []
    while n:
        block = os.read(fd, min(n, 1 << 20))
        if not block:
            return None
        parts.append(block)
        n -= len(block)
    return b"".join(parts)


def _drain(fd: int, out: list[bytes | None], finished: list[bool]) -> None:
    """Read the child's frames into `out` until its empty frame (then `finished` gets True) or the pipe closes."""
    try:
        while True:
            head = _read_exactly(fd, 8)
            if head is None:
                return
            n = int.from_bytes(head, "little")
            if n == 0:
                finished.append(True)
                return
            frame = _read_exactly(fd, n)
            if frame is None:
                return
            out.append(frame)
    finally:
        os.close(fd)
