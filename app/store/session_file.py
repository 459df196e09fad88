"""Reading a session file: the whole file into a tree, and one entry's full JSON back from its offset.

The only place (with tail.py and append.py) that opens session files. It opens them read-only and never
changes a byte.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pitree.memory import return_freed_memory
from pitree.session.entries import Node
from pitree.session.gcpause import BIG, gc_paused
from pitree.session.load import SessionBuilder, migrate_entry
from pitree.session.parse import iter_lines, line_blocks, parse_line
from pitree.session.tree import SessionTree, Skipped
from pitree.store import blobs, parse_child, tree_cache
from pitree.store.tree_cache import CacheWriter


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
    _note_blobs(path, builder.tree)
    return builder.tree, builder


def _note_blobs(path: Path, tree: SessionTree) -> None:
    if tree.dialect == "omp":  # its images may be blob references: remember the blobs folder beside it
        blobs.remember_session(path)


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

    @contextmanager
    def raw_reader(self) -> Iterator[Callable[[Node], bytes]]:
        """`raw` for many entries with one open of the file (an export of a million-entry path)."""
        try:
            fh = open(self.path, "rb")  # noqa: SIM115  # closed when the with block ends
        except OSError as exc:
            raise SessionFileError(f"{self.path}: {exc.strerror or exc}") from None

        def raw(node: Node) -> bytes:
            try:
                fh.seek(node.offset)
                return fh.read(node.length)
            except OSError as exc:
                raise SessionFileError(f"{self.path}: {exc.strerror or exc}") from None

        with fh:
            yield raw

    def entry(self, node: Node) -> dict[str, Any]:
        """The entry as Pi holds it (migrated in memory). Raises SessionFileError if the file changed."""
        obj, why = parse_line(self.raw(node))
        if obj is None:
            raise SessionFileError(f"{self.path}: line {node.line} no longer parses ({why}); the file changed")
        return migrate_entry(obj, node, self.tree)

    def entries(
        self, nodes: list[Node], shape: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        """Several entries with one open of the file, in the order given; each passed through `shape` (e.g.
        `cut_huge`) as it is read, so only one full entry is in memory at a time."""
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
                    entry = migrate_entry(obj, node, self.tree)
                    out.append(shape(entry) if shape is not None else entry)
        except OSError as exc:
            raise SessionFileError(f"{self.path}: {exc.strerror or exc}") from None
        return out


# Lines are read 1 MB at a time: a bigger chunk, its copies and its split lines raise the peak above the tree
# (glibc keeps freed big blocks mapped) for no gain in speed.
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
            if cancelled is not None and cancelled():
                raise LoadCancelled(f"loading {path.name} cancelled")
            for lines, done in line_blocks(fh, builder.size, stop, chunk_size):
                if lines:
                    builder.feed(lines, final=False)
                if progress is not None:
                    progress(done, max(total, done))
                if cancelled is not None and cancelled() and (stop is None or done < stop):
                    raise LoadCancelled(f"loading {path.name} cancelled")
    except OSError as exc:
        raise SessionFileError(f"{path}: {exc.strerror or exc}") from None


def load_session_progressive(
    path: Path,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    chunk_size: int = CHUNK,
    texts_apart: bool = True,
) -> tuple[SessionTree, SessionBuilder]:
    """Load in chunks of complete lines, reporting (bytes done, total) and stopping when `cancelled()`."""
    st = check_readable(path)
    builder = SessionBuilder(texts_apart)
    _feed_lines(path, builder, None, progress, cancelled, st.st_size, chunk_size)
    builder.tree.finish_orphans()
    _note_blobs(path, builder.tree)
    return builder.tree, builder


def load_session_fast(
    path: Path,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    save_cache: bool = True,
    final: bool = False,
    texts_apart: bool = True,
    freeze: bool = True,
) -> tuple[SessionTree, SessionBuilder]:
    """Like `load_session_progressive`, but a big file's back part is parsed by a forked child process
    (`parse_child`), which `parse_child.fork_early` may have started already.

    `final=True` (one-shot commands) also reads a last line without its newline, as Pi does; a tailer
    leaves it (False) until its newline arrives. The tree cache never holds such a line.

    v1 files (ids depend on every earlier line) and small files load in one process; so does anything when
    fork is unavailable or the child fails. A tree cached by an earlier load of the same file (`tree_cache`)
    is used first: only lines added since are parsed. Lines written after an early child was forked are
    left for the tailer (or, with `final`, read here). `texts_apart`: see `SessionBuilder`. `freeze=False`: a
    big load on the main thread does not freeze its tree out of the collector (`gc_paused`), for a caller that
    drops the tree soon after and loads another (the sessions index): a frozen tree is never freed.
    """
    st = check_readable(path)
    # One pause over every phase (see `LoadPause`): the explorer holds its own on top until its first screen.
    with gc_paused(big=freeze and st.st_size > BIG):
        return _load_fast(path, st, progress, cancelled, save_cache, final, texts_apart)


def _load_fast(
    path: Path,
    st: os.stat_result,
    progress: Callable[[int, int], None] | None,
    cancelled: Callable[[], bool] | None,
    save_cache: bool,
    final: bool,
    texts_apart: bool,
) -> tuple[SessionTree, SessionBuilder]:
    size = st.st_size
    early = parse_child.take_early(path, st)
    hit = tree_cache.read_cache(path, progress, texts_apart)
    if hit is not None:  # only what was appended since needs parsing
        if early is not None:
            early.kill()
        builder = hit[0]
        _feed_lines(path, builder, None, progress, cancelled, size)
        if save_cache:
            tree_cache.extend(path, builder, hit[1])
        tree = builder.tree
    else:
        if early is not None:
            size = early.size
        cache = tree_cache.CacheWriter.open(path, size) if save_cache else None
        try:
            tree, builder = _load_uncached(path, size, progress, cancelled, cache, early, texts_apart)
            if cache is not None:
                if not cache.segments and cache.wants(tree, builder):
                    cache.add_tree(builder)
                cache.finish(tree, builder)
        finally:
            if cache is not None:
                cache.close()
    if final:
        _feed_last_line(path, builder)
    tree.finish_orphans()
    _note_blobs(path, tree)
    if size > BIG:
        return_freed_memory()  # what the load freed (frames, segments) goes back to the system
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


def held_back_skips(path: Path, builder: SessionBuilder) -> list[Skipped]:
    """The skip the one-shot commands list for a torn last line that does not parse, which a tailing reader
    (the TUI) holds back until its newline arrives: `tree.skipped + held_back_skips(...)` is the CLI's list."""
    try:
        with open(path, "rb") as fh:
            fh.seek(builder.size)
            rest = fh.read()
    except OSError:
        return []
    if not rest.strip() or b"\n" in rest:
        return []  # nothing held, or lines the tailer has not read yet (not a torn tail)
    return [
        Skipped(line, f"{note or 'unparseable'} (held back until its newline arrives)")
        for line, _, _, obj, note in iter_lines(rest, builder.size, builder.next_line, final=True)
        if obj is None
    ]


TRIM_FRAMES = 64  # frames adopted between two `return_freed_memory` calls of a parallel load


def _load_uncached(
    path: Path,
    size: int,
    progress: Callable[[int, int], None] | None,
    cancelled: Callable[[], bool] | None,
    cache: CacheWriter | None = None,
    child: parse_child.Child | None = None,
    texts_apart: bool = True,
) -> tuple[SessionTree, SessionBuilder]:
    """The tree and its builder, the back part parsed by `child` (forked here when None and the file is big).
    A parallel load also writes `cache`'s segments as it goes: the front part's entries once they are in, then
    the child's frames as they are adopted, so the tree cache costs no second pass over the tree; otherwise
    `cache` is left empty (the caller saves the tree whole).

    The parent adopts the child's frames as they arrive once its own part is in: with the child given the
    bigger part, the two finish together."""
    if child is None:
        try:
            child = parse_child.fork_child(path, size)
        except OSError as exc:
            raise SessionFileError(f"{path}: {exc.strerror or exc}") from None
        if child is None:
            return load_session_progressive(path, progress, cancelled, texts_apart=texts_apart)
    builder, split = child.builder, child.split
    builder.texts_apart = texts_apart  # it has read the header only: no entry has its texts yet
    report = progress

    def both(front: int, _total: int) -> None:
        """Progress as bytes in the tree: a byte of the front counts whole once the parent parsed it, one of
        the back part once the child parsed it and half again once the parent adopted it."""
        if report is not None:
            report(front + (child.parsed - split + builder.size - min(builder.size, split)) // 2, size)

    try:
        _feed_lines(path, builder, split, both, cancelled, size)
        # else the file shrank while it was read, or an entry of the front made it oh-my-pi's after the child
        # began reading the back as Pi's: start again
        front_read = builder.size == split and builder.tree.dialect == child.dialect
        front_spans = builder.spans
        if front_read:
            if cache is not None and cache.wants(builder.tree, builder):
                cache.add_tree(builder)
            with gc_paused(big=True):
                for n, frame in enumerate(child.frames(), 1):
                    if not n % TRIM_FRAMES:
                        return_freed_memory()  # the frames adopted so far: else a cold load peaks higher
                    if cancelled is not None and cancelled():
                        raise LoadCancelled(f"loading {path.name} cancelled")
                    if cache is not None:
                        cache.add(frame)
                    segment, skipped, problems, lines, consumed, dialect = marshal.loads(frame)
                    del frame
                    builder.adopt_segment(segment, skipped, problems, lines, consumed, dialect)
                    del segment
                    both(split, size)
    except BaseException:
        child.kill()
        raise
    if not front_read or not child.ok():
        child.kill()
        if cache is not None:
            cache.clear()
        return load_session_progressive(path, report, cancelled, texts_apart=builder.texts_apart)
    if front_spans is not None:
        builder.spans = [*front_spans, (builder.size, child.crc)]  # the child's bytes, as it summed them
    if report is not None:
        report(size, size)
    builder.tree.finish_orphans()
    return builder.tree, builder
