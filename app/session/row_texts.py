"""`RowTexts`: every entry's row text, by file position (`Node.idx`), as UTF-8 in blocks kept out of memory.

A row text is read only when its row is drawn, searched or exported, yet as one `str` per entry the texts were
the largest part of a big tree after the entries themselves (about 100 bytes an entry). Here a full block of
`BLOCK` texts goes to a `Spill` (a file with no name; memory when no file can be made) and costs the process
four bytes an entry: where each text ends in its block. The last block, while it is not full, stays as strings;
the blocks read last stay decoded (`CACHED`), so drawing a screen or a pass in file order decodes each block once.
"""

from __future__ import annotations

import threading
from array import array
from itertools import accumulate

from pitree.cache_paths import cache_root
from pitree.session.spill import Spill

SHIFT = 12
BLOCK = 1 << SHIFT  # texts per block
CACHED = 4  # decoded blocks kept


def _encode(texts: list[str]) -> tuple[bytes, array]:
    """The block's bytes, and where each text ends in the block decoded (in characters)."""
    return "".join(texts).encode("utf-8", "surrogatepass"), array("I", accumulate(map(len, texts)))


class RowTexts:
    """Append-only (`put`, in idx order; `cut` goes back), read by idx (`get`); safe to read from a worker."""

    def __init__(self, spill: Spill | None = None) -> None:
        self._spill = spill
        self._keys: list[int] = []  # the spill's key of each full block
        self._ends: list[array] = []  # for each full block, where each text ends in it (decoded: in characters)
        self._open: list[str] = []  # the last block, not full yet
        self._cache: dict[int, list[str]] = {}  # decoded full blocks, the last read last
        self._lock = threading.Lock()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def put(self, idx: int, text: str) -> None:
        """The text of entry `idx`; what was put at and after `idx` before is dropped (`cut`)."""
        if idx != self._count:
            self.cut(idx)
        opened = self._open
        opened.append(text)
        self._count += 1
        if len(opened) == BLOCK:
            self._close_block()

    def extend(self, idx: int, texts: list[str]) -> None:
        """`put` each of `texts`, the first at `idx`."""
        opened = self._open
        if idx == self._count and len(opened) + len(texts) < BLOCK:  # most calls: a few texts, room for them
            opened.extend(texts)
            self._count += len(texts)
            return
        if idx != self._count:
            self.cut(idx)
        at = 0
        while at < len(texts):
            room = BLOCK - len(self._open)
            part = texts[at : at + room]
            self._open.extend(part)
            self._count += len(part)
            at += len(part)
            if len(self._open) == BLOCK:
                self._close_block()

    def range(self, start: int, stop: int) -> list[str]:
        """The texts of `start` ... `stop - 1`."""
        opened, b, i = self._open, start >> SHIFT, start & (BLOCK - 1)
        if i + stop - start <= BLOCK:  # within one block: most calls
            if b == len(self._keys):
                return opened[i : i + stop - start]
            return (self._cache.get(b) or self._decode(b))[i : i + stop - start]
        out: list[str] = []
        while start < stop:
            opened, b, i = self._open, start >> SHIFT, start & (BLOCK - 1)
            block = opened if b == len(self._keys) else self._cache.get(b) or self._decode(b)
            part = block[i : i + stop - start]
            out.extend(part)
            start += len(part)
        return out

    def _close_block(self) -> None:
        data, ends = _encode(self._open)
        if self._spill is None:
            self._spill = Spill(cache_root())
        key = self._spill.put(data)
        with self._lock:  # in this order: a reader takes `_open` first, then counts `_keys` (`get`)
            self._ends.append(ends)
            self._keys.append(key)
            self._open = []

    def get(self, idx: int) -> str:
        opened, b = self._open, idx >> SHIFT
        if b == len(self._keys):
            return opened[idx & (BLOCK - 1)]
        block = self._cache.get(b)
        if block is None:
            block = self._decode(b)
        return block[idx & (BLOCK - 1)]

    def cut(self, idx: int) -> None:
        """Make `idx` the next entry to `put`: texts at and after it go, missing ones before it are empty."""
        with self._lock:
            b, i = divmod(idx, BLOCK)
            if b < len(self._keys):  # back into a full block: it becomes the open one again
                self._open = self._decode_unlocked(b)[:i]
                del self._keys[b:], self._ends[b:]
                self._cache.clear()
            elif b == len(self._keys):
                del self._open[i:]
            self._count = len(self._keys) * BLOCK + len(self._open)
        while self._count < idx:
            self.put(len(self), "")

    def _decode(self, b: int) -> list[str]:
        with self._lock:
            return self._decode_unlocked(b)

    def _decode_unlocked(self, b: int) -> list[str]:
        cache = self._cache
        block = cache.get(b)
        if block is not None:
            return block
        assert self._spill is not None
        whole = self._spill.get(self._keys[b]).decode("utf-8", "surrogatepass")
        starts = [0, *self._ends[b]]
        block = [whole[s:e] for s, e in zip(starts, starts[1:], strict=False)]
        if len(cache) >= CACHED:
            del cache[next(iter(cache))]
        cache[b] = block
        return block
