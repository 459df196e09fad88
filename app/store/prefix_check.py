"""`check_prefix`: whether a file still starts with the bytes a parse read, by the CRC-32s the parse computed of
them (`SessionBuilder.spans`). The tree cache runs it on a reopen; the live tail of a running explorer runs it
again now and then (`widgets/live.py`), so a change in place anywhere in what was read is seen.

It reads into one anonymous map of `CHECK_BLOCK` bytes: `readinto` and `zlib.crc32` release the interpreter
lock, so it runs on another core beside the main thread, and the map is unmapped when it ends (a `bytearray` of
that size stayed in its thread's malloc arena).
"""

from __future__ import annotations

import mmap
import threading
import zlib
from collections.abc import Sequence
from pathlib import Path

from pitree.session.dialect_omp import SLOT_BYTES

CHECK_BLOCK = 16 << 20  # bytes read at a time: the thread waits for the interpreter lock after each read and sum


def slot_spans(spans: Sequence[tuple[int, int]], has_slot: bool) -> int:
    """How many of `spans` a check leaves out: 1 when the file has oh-my-pi's title slot and the first span is
    that slot alone (omp rewrites it in place: `SessionBuilder` gives it a span of its own), else 0."""
    return 1 if has_slot and spans and spans[0][0] == SLOT_BYTES else 0


def check_prefix(
    path: Path,
    spans: Sequence[tuple[int, int]],
    stop: threading.Event | None = None,
    first: int = 0,
    block_size: int = CHECK_BLOCK,
) -> bool | None:
    """True when `path` starts with bytes whose CRC-32s are `spans` ((end offset, CRC of the bytes since the
    span before), from byte 0), False when it does not (other bytes, or fewer), None when it could not tell
    (unreadable, or `stop` set first). `first`: the spans before it are not checked (they may change in place:
    oh-my-pi's title slot). `block_size`: bytes read at a time."""
    try:
        # buffering=0: `readinto` straight into the map, no second copy
        with open(path, "rb", buffering=0) as fh, mmap.mmap(-1, block_size) as block, memoryview(block) as buffer:
            start = spans[first - 1][0] if first else 0
            fh.seek(start)
            for end, crc in spans[first:]:
                got = 0
                while start < end:
                    if stop is not None and stop.is_set():
                        return None
                    n = fh.readinto(buffer[: min(block_size, end - start)])
                    if not n:
                        return False
                    got = zlib.crc32(buffer[:n], got)
                    start += n
                if got != crc:
                    return False
            return True
    except (OSError, ValueError, BufferError):
        return None
