"""`Spill`: pieces of bytes written once and read back, kept in a file with no name instead of in memory.

A big session's search index is most of what the explorer would hold after the tree (about a tenth of the file),
and it is read in whole only by a search. In a file it costs the page cache, which the system takes back when
it needs memory, not the process's own memory. The file has no name (O_TMPFILE where the system has it, else
unlinked at once), so it goes with the process, a killed one too. It is made in pitree's cache folder (`/tmp`
is often memory itself), else in the system's temporary folder; when neither takes it, or a write fails (a full
disk), the pieces stay in memory and nothing else changes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO


class Spill:
    """Pieces of bytes, each written once (`put` gives its key) and read whole or in part (`get`)."""

    def __init__(self, folder: Path | None = None, *, in_memory: bool = False) -> None:
        self._folder = folder
        self._file: IO[bytes] | None = None
        self._tried = in_memory  # a file was asked for already (or is not wanted)
        self._size = 0  # bytes written to the file
        self._where: list[int | bytes] = []  # by key: the piece's offset in the file, or the piece itself
        self._lengths: list[int] = []

    @property
    def on_disk(self) -> int:
        """How many bytes are in the file (not in memory)."""
        return self._size

    def put(self, data: bytes) -> int:
        key = len(self._where)
        fd = self._fd()
        if fd is not None:
            try:
                written = os.pwrite(fd, data, self._size)
                while written < len(data):  # a short write: the rest, after it
                    written += os.pwrite(fd, memoryview(data)[written:], self._size + written)
            except OSError:
                self._to_memory()  # a full or failing disk: this piece and the next stay in memory
            else:
                self._where.append(self._size)
                self._lengths.append(len(data))
                self._size += len(data)
                return key
        self._where.append(data)
        self._lengths.append(len(data))
        return key

    def get(self, key: int, start: int = 0, end: int | None = None) -> bytes:
        """The piece `key`, or its bytes `start:end`."""
        where, length = self._where[key], self._lengths[key]
        stop = length if end is None else min(end, length)
        if isinstance(where, bytes):
            return where if start == 0 and stop == length else where[start:stop]
        if stop <= start:
            return b""
        assert self._file is not None
        return os.pread(self._file.fileno(), stop - start, where + start)

    def length(self, key: int) -> int:
        return self._lengths[key]

    def _to_memory(self) -> None:
        """Stop using the file; the pieces already there move to memory first, so every key still reads."""
        file = self._file
        if file is None:
            return
        fd = file.fileno()
        for key, where in enumerate(self._where):
            if isinstance(where, int):
                try:
                    self._where[key] = os.pread(fd, self._lengths[key], where)
                except OSError:
                    self._where[key] = b""
        self._file = None
        self._size = 0
        file.close()

    def _fd(self) -> int | None:
        if self._file is None and not self._tried:
            self._tried = True
            for folder in (self._folder, None):  # None: the system's temporary folder
                try:
                    if folder is not None:
                        folder.mkdir(parents=True, exist_ok=True)
                    self._file = tempfile.TemporaryFile(dir=folder, buffering=0)
                    break
                except OSError:
                    continue
        return self._file.fileno() if self._file is not None else None
