"""A cache of parsed trees in the user cache folder, so reopening a big session skips the parse.

Keyed by the file's real path; valid while the file is the same file (device + inode), not shrunk, not
rewritten at the same size, and still starting with the very bytes that were parsed: the cache keeps the
CRC-32s the parse computed of them (`SessionBuilder.spans`), and a reopen reads the prefix again and checks
them, in a thread on the other core while the segments are adopted (reading and summing release the
interpreter). Sessions only grow, so a file that grew reuses the cached prefix and parses just the new lines.
Anything else (rewritten anywhere but in oh-my-pi's title slot, which is read again each time; replaced, shrunk,
another cache format) is a miss. Only v2/v3 files are cached; the cache never touches the session file.
`PITREE_CACHE_DIR` moves it, `PITREE_NO_CACHE=1` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pitree.memory import return_freed_memory
from pitree.session import segment as segment_columns
from pitree.session.dialect_omp import SLOT_BYTES as SLOT
from pitree.session.dialect_omp import title_slot_of
from pitree.session.gcpause import BIG, gc_paused
from pitree.session.load import SessionBuilder, shifted_note
from pitree.session.tree import SessionTree
from pitree.store.prefix_check import check_prefix, slot_spans

FORMAT = 12  # 7: rows hold the parsed timestamp (ms), not the raw value; 8: and the usage packed (`pack_usage`);
# 9: Pi 1.x entries (system facts, context edits, usage of every source, `[title: …]` rows); 10: a segment's
# entries as columns (`segment.py`), not a tuple each; 11: and the dialect they were read in; 12: the CRC-32s of
# the bytes read, not samples of them
# marshal version 2 writes twice as fast as 4 (no table of shared objects); what that sharing saved, the
# repeated strings, a segment holds once (its kinds and models).
SEGMENT_MARSHAL = 2
MAGIC = b"pitree\x00\x0c"  # the first 8 bytes of a cache file of this FORMAT
MIN_BYTES = 2 << 20  # smaller files parse faster than the cache can be checked
ORPHAN = re.compile(r"[0-9a-f]{32}\.tmp(\d+)")  # what `CacheWriter` and `first_screen.save` write before the rename
SAMPLES = 32  # `fingerprint`'s, which the kept first screen checks
SAMPLE_BYTES = 256
TAIL_BYTES = 4096
SEGMENT_ROWS = 4096
# A cache read on from is written again once what was read since is 1/EXTEND_SHARE of what it held (and MIN_BYTES):
# copying its segments costs a small part of parsing the same bytes, but not nothing (~200 MB at 1M entries).
EXTEND_SHARE = 64
TRIM_SEGMENTS = 32  # segments adopted between two `return_freed_memory` calls


def cache_dir() -> Path | None:
    if os.environ.get("PITREE_NO_CACHE"):
        return None
    override = os.environ.get("PITREE_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_path("pitree")) / "trees"


def _cache_file(path: Path) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return folder / f"{key}.tree"


def fingerprint(fh: Any, size: int) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    for i in range(SAMPLES):
        fh.seek(size * i // SAMPLES)
        digest.update(fh.read(min(SAMPLE_BYTES, size)))
    fh.seek(max(0, size - TAIL_BYTES))
    digest.update(fh.read(min(TAIL_BYTES, size)))
    return digest.digest()


def _check(
    path: Path, spans: Sequence[tuple[int, int]], verdict: list[bool], stop: threading.Event, first: int
) -> None:
    """Append to `verdict` whether `path` still starts with bytes whose CRC-32s are `spans` (`check_prefix`)."""
    ok = False
    try:
        ok = check_prefix(path, spans, stop, first) is True
    finally:
        verdict.append(ok)


def has_cache(path: Path) -> bool:
    """Whether a cache file for `path` exists (cheap: not checked against the file; `read_cache` does that)."""
    target = _cache_file(path)
    return target is not None and target.is_file()


@dataclass(frozen=True, slots=True)
class Hit:
    """A cache read: where and as what file (`extend` copies only that), its segments' lengths and what they hold."""

    target: Path
    stat: tuple[int, int, int]  # the cache file's inode, size and modification time
    lengths: list[int]
    entries: int
    lines: int
    size: int


def read_cache(
    path: Path, progress: Callable[[int, int], None] | None = None, texts_apart: bool = True
) -> tuple[SessionBuilder, Hit] | None:
    """A builder holding the cached tree of `path`'s first N bytes (the caller feeds the rest) and what the cache
    held (for `extend`), or None; `progress(bytes of the file covered so far, file size)` after each segment;
    `texts_apart`: `SessionBuilder`'s."""
    target = _cache_file(path)
    if target is None:
        return None
    verdict: list[bool] = []  # the check of the file's prefix (`_check`), once it is done
    stop = threading.Event()
    try:
        with open(target, "rb") as cache:
            held = os.fstat(cache.fileno())
            end = cache.seek(0, os.SEEK_END)
            cache.seek(0)
            if end < 16 or cache.read(len(MAGIC)) != MAGIC:
                return None
            cache.seek(end - 8)
            trailer = int.from_bytes(cache.read(8), "little")
            if not 0 < trailer <= end - 16:
                return None
            cache.seek(end - 8 - trailer)
            data = marshal.loads(cache.read(trailer))
            if not isinstance(data, tuple) or len(data) != 7 or data[0] != FORMAT:
                return None
            _, ident, size, spans, header, version, lengths = data
            st = os.stat(path)
            if ident[:2] != (st.st_dev, st.st_ino) or st.st_size < size or st.st_mtime_ns < ident[2]:
                return None
            if st.st_size == ident[3] and st.st_mtime_ns != ident[2]:
                return None  # same size, touched since: rewritten in place
            if not spans or spans[-1][0] != size:
                return None
            with open(path, "rb") as fh:
                slot = title_slot_of(fh.read(SLOT))  # oh-my-pi's title slot is not in the cache: it changes in place
            first = slot_spans(spans, slot is not None)  # the slot is read from the file: its span is not checked
            checker = threading.Thread(target=_check, args=(path, spans, verdict, stop, first), daemon=True)
            checker.start()
            builder = SessionBuilder(texts_apart)
            if slot is not None:
                builder.tree.set_title_slot(slot)
            builder.restore_header(header, version)
            cache.seek(len(MAGIC))
            for k, n in enumerate(lengths, 1):  # one segment in memory at a time
                if verdict and not verdict[0]:
                    return None  # the file is not what was cached: stop adopting now
                blob = cache.read(n)
                with gc_paused(big=n > BIG):
                    segment, skipped, problems, lines, consumed, dialect = marshal.loads(blob)
                del blob
                builder.adopt_segment(segment, skipped, problems, lines, consumed, dialect)
                del segment
                if not k % TRIM_SEGMENTS:
                    return_freed_memory()  # the segments read so far: else a big reopen peaks ~50 MB higher
                if progress is not None:
                    progress(builder.size, st.st_size)
            checker.join()
    except (OSError, ValueError, EOFError, TypeError, IndexError):
        return None
    finally:
        stop.set()  # a load given up ends its check too
    if builder.size != size or verdict != [True]:
        return None
    builder.spans = [(end, crc) for end, crc in spans]
    tree = builder.tree
    tree.problems = list(dict.fromkeys(tree.problems))  # linking found the tree's own notes again
    stat = (held.st_ino, held.st_size, held.st_mtime_ns)
    return builder, Hit(target, stat, list(lengths), len(tree.nodes), builder.next_line - 1, size)


def extend(path: Path, builder: SessionBuilder, hit: Hit) -> None:
    """Write `path`'s cache again once `builder` read on from a cache (`hit`) by a good part of what it held: its
    segments copied as they are, then the entries read since. A session that keeps growing is then parsed from
    where its cache ends, not from where the first one ended, at every open."""
    if builder.size - hit.size < max(MIN_BYTES, hit.size // EXTEND_SHARE):
        return  # the copy would cost more than parsing what is new again
    writer = CacheWriter(path, hit.target, builder.size)
    try:
        if not writer.wants(builder.tree, builder):
            return
        with open(hit.target, "rb") as old:
            st = os.fstat(old.fileno())
            if (st.st_ino, st.st_size, st.st_mtime_ns) != hit.stat:
                return  # another pitree wrote the cache since it was read
            old.seek(len(MAGIC))
            writer.copy(old, hit.lengths)
        for blob in segments(builder, hit.entries, hit.lines, hit.size):
            writer.add(blob)
        writer.finish(builder.tree, builder)
    except OSError:
        return
    finally:
        writer.close()


def segments(builder: SessionBuilder, first: int = 0, lines_before: int = 0, size_before: int = 0) -> list[bytes]:
    """The tree read so far by `builder` as cache segments: what `SessionBuilder.adopt_segment` takes. From entry
    `first` on, when segments written before hold the entries before it and the first `lines_before` lines and
    `size_before` bytes: the segments that follow those (lines counted from there, as a segment's are).

    The same shape as the payloads of the child that parses a big file's back half, so a parallel load's
    cache is the front half's segments followed by those payloads unchanged. Each holds `SEGMENT_ROWS`
    entries at most (all but the last count no lines or bytes, so each is read as if the first; the first
    holds the notes, so that they keep their order): a reload
    then holds one small segment at a time, and the strings the tree keeps from each are not spread over the
    memory the rest of the segment leaves free (one segment of a million entries left ~100 MB of holes)."""
    tree = builder.tree
    skipped = [(s.line - lines_before, s.reason) for s in tree.skipped if s.line > lines_before]
    problems = [
        (p.line - lines_before, shifted_note(p.message, p.line, -lines_before))
        for p in tree.problems
        if p.line > lines_before and "is not in the file" not in p.message
    ]
    nodes = tree.nodes
    parts = [nodes[i : i + SEGMENT_ROWS] for i in range(first, len(nodes), SEGMENT_ROWS)] or [[]]
    last = len(parts) - 1
    return [
        marshal.dumps(
            (
                segment_columns.pack(part, lines_before),
                skipped if i == 0 else [],  # first: the notes come before those linking the entries makes again
                problems if i == 0 else [],
                builder.next_line - 1 - lines_before if i == last else 0,
                builder.size - size_before if i == last else 0,
                tree.dialect,
            ),
            SEGMENT_MARSHAL,
        )
        for i, part in enumerate(parts)
    ]


def remove_orphans(folder: Path) -> None:
    """Remove the unfinished files (`<key>.tmp<pid>`, a tree cache or a kept first screen) that writers which died
    left in the cache `folder` (a closed terminal, a kill): they would otherwise stay, as big as the tree they were
    writing. A writer still running (its pid alive, or not ours to signal) keeps its file."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        found = ORPHAN.fullmatch(name)
        if found is None or int(found[1]) == os.getpid():
            continue
        try:
            os.kill(int(found[1]), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                os.unlink(folder / name)
        except (OSError, OverflowError):
            continue


class CacheWriter:
    """Writes one cache file as the load goes: segments (marshalled columns of entries, in file order) to a temporary
    file, then a trailer naming the file they came from; renamed into place only when complete.

    Layout: MAGIC, the segments back to back, the trailer (marshal of FORMAT, the file's identity, the bytes
    covered, their CRC-32s (`SessionBuilder.spans`), header, version and the segments' lengths), the trailer's
    length (8 bytes). Best effort throughout: a failure only costs speed, and leaves no file behind."""

    def __init__(self, source: Path, target: Path, file_size: int) -> None:
        self.source, self.target = source, target
        self.segments: list[int] = []
        self._fh: Any = None
        if file_size < MIN_BYTES:
            return
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            remove_orphans(target.parent)
            self._tmp = target.with_suffix(f".tmp{os.getpid()}")
            self._fh = open(self._tmp, "wb")
            self._fh.write(MAGIC)
        except OSError:
            self.close()

    @classmethod
    def open(cls, path: Path, file_size: int) -> CacheWriter | None:
        """A writer for `path`'s cache, or None when caching is off."""
        target = _cache_file(path)
        return cls(path, target, file_size) if target is not None else None

    def wants(self, tree: SessionTree, builder: SessionBuilder) -> bool:
        """Whether this tree will be cached (so its segments are worth making): its bytes' CRCs known among the rest."""
        return (
            self._fh is not None
            and builder.size >= MIN_BYTES
            and tree.version >= 2
            and tree.header is not None
            and builder.spans is not None
        )

    def add(self, blob: bytes | bytearray) -> None:
        if self._fh is None:
            return
        try:
            self._fh.write(blob)
            self.segments.append(len(blob))
        except OSError:
            self.close()

    def copy(self, source: Any, lengths: list[int]) -> None:
        """The segments of another cache file, read from `source` (at its first segment) as they are."""
        if self._fh is None:
            return
        left = sum(lengths)
        while left:
            block = source.read(min(left, 1 << 20))
            if not block:
                raise OSError("the cache file ended early")
            self._fh.write(block)
            left -= len(block)
        self.segments.extend(lengths)

    def add_tree(self, builder: SessionBuilder) -> None:
        """The tree read so far by `builder`, as `segments`."""
        for blob in segments(builder):
            self.add(blob)

    def clear(self) -> None:
        """Drop what was written (the load starts over another way)."""
        if self._fh is None:
            return
        try:
            self._fh.seek(len(MAGIC))
            self._fh.truncate()
            self.segments = []
        except OSError:
            self.close()

    def finish(self, tree: SessionTree, builder: SessionBuilder) -> None:
        """Write the trailer and put the file in place, if this tree may be cached."""
        if not self.wants(tree, builder):
            return
        try:
            st = os.stat(self.source)
            trailer = marshal.dumps(
                (
                    FORMAT,
                    (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size),
                    builder.size,
                    builder.spans,
                    tree.header,
                    tree.version,
                    self.segments,
                )
            )
            self._fh.write(trailer + len(trailer).to_bytes(8, "little"))
            self._fh.close()
            self._fh = None
            os.replace(self._tmp, self.target)
        except (OSError, ValueError):
            self.close()

    def close(self) -> None:
        """Stop; a file not finished is removed."""
        if self._fh is None:
            return
        try:
            self._fh.close()
        except OSError:
            pass
        self._fh = None
        try:
            os.unlink(self._tmp)
        except OSError:
            pass
