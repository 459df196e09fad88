"""The forked child that parses the back part of a big session file while the parent parses the front.

Parsing is CPU-bound Python; with two cores the parts parse at once. The child sends its part as frames,
one per `CHUNK` of lines it parsed: a 16-byte head (the frame's length, then the file offset the child has
parsed up to) and a marshalled segment (`SessionBuilder.adopt_segment`'s arguments, lines counted from the
chunk's start); an empty frame says it finished, its second field then the CRC-32 of all the bytes it parsed
(for the tree cache's check of the prefix, `SessionBuilder.spans`). A reader thread in the parent queues the
frames as they come, so the parent can adopt them while the child still parses, and neither process ever holds
the whole back part as entries or bytes.

`fork_early` starts the child before the explorer imports Textual (time in which the second core would be
idle); `load_session_fast` then takes it over with `take_early`. A child nobody took is killed at exit.
"""

from __future__ import annotations

import atexit
import gc
import marshal
import os
import queue
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on Windows, where there is no fork either
    fcntl = None  # type: ignore[assignment]

from pitree.session.load import SessionBuilder
from pitree.session.parse import line_blocks
from pitree.store import tree_cache

CHUNK = 1 << 20  # bytes of lines per frame (as session_file reads them)
MIN_BYTES = 24 << 20  # below this, forking costs more than it saves
# The parent's share of the bytes: after its part it still adopts the child's frames and writes the front of
# the tree cache, so it takes less than half (tuned with bench/bench_split.py `--cli`).
SHARE = 0.4
# The share when forked early: the parent imports Textual and starts the explorer first, so it takes less
# again (tuned with bench/bench_split.py `--early`: the tree loaded soonest).
EARLY_SHARE = 0.3


class Child:
    """A forked parse of the file's bytes [split, size): its frames, its progress, its end."""

    def __init__(self, path: Path, ident: tuple[int, int], size: int, split: int, builder: SessionBuilder) -> None:
        self.path = path
        self.ident = ident  # (st_dev, st_ino) of the file when it was forked
        self.size = size
        self.split = split
        self.builder = builder  # the header read; the parent feeds it [header end, split) and adopts the rest
        self.dialect = builder.tree.dialect  # how the child reads the entries: as the header says
        self.parsed = split  # the file offset the child has parsed up to (from the frames' heads)
        self.crc = 0  # of the bytes [split, parsed), sent with the last frame
        self.pid = 0
        self.finished: bool | None = None  # True: every frame came; False: the pipe closed early
        self._frames: queue.SimpleQueue[bytes | bool] = queue.SimpleQueue()  # a bool ends it: `finished`
        self._reader: threading.Thread | None = None
        self._status: int | None = None

    def start(self, read_fd: int) -> None:
        self._reader = threading.Thread(target=self._drain, args=(read_fd,), daemon=True, name="pitree-parse-child")
        self._reader.start()

    def frames(self) -> Iterator[bytes]:
        """The frames in order as they arrive, until the end. `ok()` then says whether all came."""
        get = self._frames.get
        while self.finished is None:
            frame = get()
            if isinstance(frame, bool):
                self.finished = frame
            else:
                yield frame

    def ok(self) -> bool:
        """After `frames()`: wait for the child to exit; True if it sent every frame and exited cleanly."""
        return self.finished is True and self.wait() == 0

    def wait(self) -> int:
        if self._status is None:
            if self._reader is not None:
                self._reader.join()
            try:
                _, self._status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                self._status = -1
        return self._status

    def kill(self) -> None:
        if self._status is None:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
            self.wait()

    def _drain(self, fd: int) -> None:
        """Queue the child's frames until its empty frame (then True) or the pipe closes (False: it failed)."""
        put = self._frames.put
        finished = False
        try:
            while True:
                head = _read_exactly(fd, 16)
                if head is None:
                    break
                n = int.from_bytes(head[:8], "little")
                if n == 0:
                    self.crc = int.from_bytes(head[8:], "little")
                    finished = True
                    break
                frame = _read_exactly(fd, n)
                if frame is None:
                    break
                self.parsed = int.from_bytes(head[8:], "little")
                put(frame)
        finally:
            os.close(fd)
            put(finished)


def fork_child(path: Path, size: int, share: float | None = None) -> Child | None:
    """Fork a child parsing the complete lines of `path` after byte ~`share * size` (`SHARE`, read at each call)
    up to `size`, or None when this file loads in one process (small, v1, no fork, nothing after the split).
    Raises OSError."""
    if share is None:
        share = SHARE
    if size < MIN_BYTES or not hasattr(os, "fork"):
        return None
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        first = fh.readline()
        if len(first) == 256 and first.startswith(b'{"type":"title"'):
            first += fh.readline()  # oh-my-pi's title slot: the header is line 2
        fh.seek(int(size * share))
        fh.readline()
        split = fh.tell()
    builder = SessionBuilder()
    builder.feed(first, final=False)
    if not first.endswith(b"\n") or not builder._seen_header or builder._migrate_v1:
        return None  # v1 ids depend on every earlier line; a first line that is no object leaves the version open
    if split >= size or builder.size != len(first):
        return None
    child = Child(path, (st.st_dev, st.st_ino), size, split, builder)
    read_fd, write_fd = os.pipe()
    _widen(write_fd)
    pid = os.fork()
    if pid == 0:  # the child: parse [split, size) and send the result; never returns
        code = 1
        try:
            gc.disable()  # a short-lived process building many objects: collection is pure overhead
            os.close(read_fd)
            _send(write_fd, b"", _parse_part(path, builder, split, size, write_fd))
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    child.pid = pid
    child.start(read_fd)
    return child


def _parse_part(path: Path, builder: SessionBuilder, split: int, size: int, fd: int) -> int:
    """In the child: the complete lines of [split, size), `CHUNK` at a time, each chunk one frame; a torn last
    line is left for the parent's tailer. Returns the CRC-32 of the bytes parsed."""
    crc = 0
    with open(path, "rb") as fh:
        start = split
        for lines, _ in line_blocks(fh, split, size, CHUNK):
            if lines:
                crc = zlib.crc32(lines, crc)
                part = builder.continuation(start)
                segment = part.parse_segment(lines)
                builder.tree.dialect = part.tree.dialect  # found oh-my-pi's: so are the next chunks
                frame = marshal.dumps((segment, *part.segment_tail(start)), tree_cache.SEGMENT_MARSHAL)
                start += len(lines)
                _send(fd, frame, start)
                del part, segment, frame
                # Each chunk's tree holds a cycle (its `Columns` and their `node_class`), which the collector,
                # off in this process, would never free: ~90 KB a chunk, 55 MB over a 1 GB file. The youngest
                # generation is only this chunk's survivors: a collection of it costs next to nothing.
                gc.collect(0)
    return crc


# ---- the early fork -----------------------------------------------------------------------------------------

_early: Child | None = None


def fork_early(path: Path) -> None:
    """Start parsing `path`'s back part now, for a `load_session_fast` to come. Does nothing when the file is
    small, cached (a warm load needs no child) or unreadable (the load reports it)."""
    global _early
    if _early is not None or not hasattr(os, "fork"):
        return
    try:
        size = path.stat().st_size
        if size < MIN_BYTES or tree_cache.has_cache(path):
            return
        _early = fork_child(path, size, EARLY_SHARE)
    except OSError:
        return
    if _early is not None:
        atexit.register(_drop_early)


def take_early(path: Path, st: os.stat_result) -> Child | None:
    """The early child if it parses this same file (same inode, not shrunk since), else None (and it is
    killed)."""
    global _early
    child, _early = _early, None
    if child is None:
        return None
    same = child.path == path and child.ident == (st.st_dev, st.st_ino) and st.st_size >= child.size
    if not same:
        child.kill()
        return None
    return child


def _drop_early() -> None:
    global _early
    child, _early = _early, None
    if child is not None:
        child.kill()


# ---- the pipe --------------------------------------------------------------------------------------------------


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


def _send(fd: int, frame: bytes, parsed: int) -> None:
    """One frame down the pipe: its length and the offset parsed up to, 8 bytes each, then the bytes."""
    view = memoryview(len(frame).to_bytes(8, "little") + parsed.to_bytes(8, "little") + frame)
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
