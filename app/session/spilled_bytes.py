"""`SpilledBytes`: one growing run of bytes (the tree's packed usage), kept out of memory but for its last chunk.

Usage is read for a few entries at a time (the context at the leaf, the entry shown) or in one pass in file order
(the usage report), yet as a `bytearray` it stayed in the process for the whole session: 16 MB at 1,000,000
entries. Here each full chunk of `CHUNK` bytes goes to a `Spill` (a file with no name; memory when no file can be
made); the chunks read last stay in memory (`CACHED`), so a pass in file order reads each chunk once.
"""

from __future__ import annotations

import threading

from pitree.cache_paths import cache_root
from pitree.session.spill import Spill

CHUNK = 1 << 18  # bytes a chunk
CACHED = 4  # chunks read back kept


class SpilledBytes:
    """Append (`extend`), cut back (`truncate`) and read any range (`read`); safe to read from a worker while
    the UI appends."""

    def __init__(self) -> None:
        self._spill: Spill | None = None
        self._keys: list[int] = []  # the spill's key of each full chunk: chunk k holds bytes k * CHUNK ...
        self._tail = bytearray()  # the bytes after the full chunks
        self._cache: dict[int, bytes] = {}  # chunks read back, the last read last
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._keys) * CHUNK + len(self._tail)

    def extend(self, data: bytes) -> None:
        tail = self._tail
        if len(tail) + len(data) < CHUNK:  # most calls: one entry's few bytes (appended under the GIL at once)
            tail += data
            return
        with self._lock:
            tail = self._tail
            tail += data
            if len(tail) >= CHUNK:
                if self._spill is None:
                    self._spill = Spill(cache_root())
                full = len(tail) // CHUNK * CHUNK
                view = memoryview(tail)
                for at in range(0, full, CHUNK):
                    self._keys.append(self._spill.put(bytes(view[at : at + CHUNK])))
                view.release()
                del tail[:full]

    def truncate(self, size: int) -> None:
        """Keep the first `size` bytes (at most as many as there are)."""
        with self._lock:
            k = size // CHUNK
            if k < len(self._keys):  # back into a full chunk: it becomes the tail again
                self._tail = bytearray(self._chunk(k)[: size - k * CHUNK])
                del self._keys[k:]
                self._cache.clear()
            else:
                del self._tail[size - k * CHUNK :]

    def read(self, start: int, end: int) -> bytes:
        """The bytes `start:end`, as a slice: what there is of them."""
        k = start // CHUNK
        if k == (end - 1) // CHUNK:  # most reads: a few bytes of one chunk, often one read just before
            data = self._cache.get(k)  # a chunk's bytes never change: no lock needed for them
            if data is not None:
                return data[start - k * CHUNK : end - k * CHUNK]
        with self._lock:
            end = min(end, len(self._keys) * CHUNK + len(self._tail))
            if end <= start:
                return b""
            full, parts = len(self._keys), []
            for c in range(start // CHUNK, (end - 1) // CHUNK + 1):
                base = c * CHUNK
                data = self._tail if c == full else self._chunk(c)
                parts.append(data[max(start - base, 0) : min(end - base, CHUNK)])
            return b"".join(parts)

    def _chunk(self, k: int) -> bytes:
        cache = self._cache
        data = cache.get(k)
        if data is None:
            assert self._spill is not None
            data = self._spill.get(self._keys[k])
            if len(cache) >= CACHED:
                del cache[next(iter(cache))]
            cache[k] = data
        return data
