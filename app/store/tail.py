"""`Tailer`: what was appended to a session file since the last look, as complete lines only.

Pi appends one whole JSON line per entry, but a reader can still see a line half written, a torn last line
left by a crash, a file rewritten in place (Pi migrating an old file: it may shrink, or keep or grow its
size), a file replaced by a new inode, a file deleted, or a file that does not exist yet. `Tailer.poll`
tells these apart as `TailEvent`s: lines appended, nothing new, part of a line so far (held back, never
returned twice), reset (reload from scratch), missing, created, and read errors.

It never writes and never keeps the file open between calls, so Pi stays free to rename or replace it.

oh-my-pi keeps a 256-byte title slot on line 1 and rewrites it in place when the title changes: a change there
(to another slot) is neither a rewrite nor a truncation; the event carries the new slot line (`slot`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

FINGERPRINT = 64
"""Bytes at the start of the file and just before the read position that must still be there: notices rewrites
that do not shrink."""

SLOT = 256
"""oh-my-pi's title slot: line 1, exactly this many bytes with its newline."""
_SLOT_START = b'{"type":"title"'

CHUNK = 8 << 20
"""Read size for big reads, so a huge file is not asked for in one system call."""

TailKind = Literal["append", "unchanged", "waiting", "reset", "missing", "created", "error"]


@dataclass(frozen=True, slots=True)
class TailEvent:
    """What one `Tailer.poll` found.

    - `append`: `data` is one or more complete lines (each ends in b"\\n"), starting at file `offset`.
    - `unchanged`: nothing new, and no partial line held.
    - `waiting`: no complete line, but part of one is held (it arrived now or earlier, or the file ends
      in a torn line); it is returned with the rest once its newline is there.
    - `reset`: the file shrank, was replaced (new inode or device) or rewritten in place; what the caller
      has is stale. The tailer forgot everything: the next `read_initial` (or `poll`) starts at byte 0.
    - `missing`: the file does not exist (now). If it reappears, the next poll says `reset`
      (or `created` if nothing had been read from it).
    - `created`: the file appeared where there was none; the caller loads it (the tailer starts at 0).
    - `error`: it could not be read; `message` says why. The tailer keeps its state and can be polled again.
    """

    kind: TailKind
    data: bytes = b""
    offset: int = 0
    message: str = ""
    slot: bytes = b""  # oh-my-pi's title slot line, when it was rewritten in place since the last poll


@dataclass(frozen=True, slots=True)
class TailChunk:
    """What `Tailer.read_initial` read: complete lines from byte 0 (`data`), and how the file stood.

    `size` is the file size when read, `held` the bytes of a trailing partial line kept back (a torn line,
    or one still being written), `missing` tells that there is no file, `message` carries a read error.
    """

    data: bytes = b""
    size: int = 0
    held: int = 0
    missing: bool = False
    message: str = ""

    @property
    def end(self) -> int:
        """The offset just past `data`, where tailing continues."""
        return len(self.data)


def _is_slot(line: bytes) -> bool:
    return len(line) == SLOT and line.startswith(_SLOT_START) and line.endswith(b"\n") and b"\n" not in line[:-1]


def _errtext(exc: OSError) -> str:
    return exc.strerror or str(exc)


class Tailer:
    """Follows one file: `read_initial` once, then `poll` whenever the file may have changed.

    `offset` is the end of the complete lines handed out so far. Bytes after it that are not yet a
    complete line are held in memory, so a huge line arriving in pieces is read once, not on every poll.
    """

    def __init__(self, path: Path, offset: int = 0) -> None:
        """`offset` > 0 resumes after bytes the caller already read some other way; the fingerprint and
        identity are then taken from the file as it is now."""
        self.path = Path(path)
        self._clear()
        if offset > 0:
            self._adopt(offset)
        elif not os.path.lexists(self.path):
            self._missing = True

    # -- state --------------------------------------------------------------------------------------

    def _clear(self) -> None:
        self._offset = 0
        self._size = 0
        self._ident: tuple[int, int] | None = None  # (st_ino, st_dev) of the file the state belongs to
        self._fingerprint = b""  # the last up-to-FINGERPRINT bytes before `_offset + len(_pending)`
        # The first up-to-FINGERPRINT bytes: Pi's migration rewrites the header's version, which a rewrite to
        # the same size with the same last bytes (v2 -> v3 without renamed roles) shows nowhere else.
        self._head = b""
        self._slot = b""  # oh-my-pi's title slot as last read (the head then starts after it)
        self._pending = bytearray()  # bytes after `_offset` with no newline among them
        self._missing = False  # the file was missing at construction or at the last poll

    def _adopt(self, offset: int) -> None:
        start = max(0, offset - FINGERPRINT)
        try:
            with open(self.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                slot = fh.read(min(SLOT, offset))
                self._slot = slot if _is_slot(slot) else b""
                fh.seek(len(self._slot))
                head = fh.read(max(0, min(FINGERPRINT, offset - len(self._slot))))
                fh.seek(start)
                tail = fh.read(offset - start)
        except (FileNotFoundError, NotADirectoryError):
            self._missing = True
            return
        except OSError:
            return  # poll() reports it
        self._ident = (st.st_ino, st.st_dev)
        self._size = st.st_size
        # A file shorter than `offset` keeps `_offset` past its end, so the first poll reports a reset.
        self._offset = offset
        self._fingerprint = tail
        self._head = head

    @property
    def offset(self) -> int:
        """End of the complete lines handed out so far."""
        return self._offset

    @property
    def size(self) -> int:
        """File size at the last read."""
        return self._size

    @property
    def inode(self) -> tuple[int, int] | None:
        """(st_ino, st_dev) of the file being followed, None before the first read."""
        return self._ident

    @property
    def held(self) -> int:
        """Bytes of an incomplete last line held back."""
        return len(self._pending)

    # -- reading ------------------------------------------------------------------------------------

    def read_initial(self, max_bytes: int | None = None) -> TailChunk:
        """Forget any state and read the file from byte 0 to its last newline (at most `max_bytes` bytes
        now; `poll` continues from there)."""
        self._clear()
        try:
            with open(self.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                parts: list[bytes] = []
                left = max_bytes
                while left is None or left > 0:
                    part = fh.read(CHUNK if left is None else min(CHUNK, left))
                    if not part:
                        break
                    parts.append(part)
                    if left is not None:
                        left -= len(part)
        except (FileNotFoundError, NotADirectoryError):
            self._missing = True
            return TailChunk(missing=True)
        except OSError as exc:
            return TailChunk(message=_errtext(exc))
        data = b"".join(parts)
        self._ident = (st.st_ino, st.st_dev)
        self._size = max(st.st_size, len(data))
        cut = data.rfind(b"\n") + 1
        self._offset = cut
        self._pending = bytearray(data[cut:])
        self._fingerprint = data[-FINGERPRINT:]
        self._slot = data[:SLOT] if _is_slot(data[:SLOT]) else b""
        self._head = data[len(self._slot) : len(self._slot) + FINGERPRINT]
        return TailChunk(data[:cut], size=self._size, held=len(data) - cut)

    def poll(self) -> TailEvent:
        """Look at the file once: see `TailEvent` for what can come back."""
        try:
            fh = open(self.path, "rb")
        except (FileNotFoundError, NotADirectoryError):
            self._missing = True
            return TailEvent("missing")
        except OSError as exc:
            return TailEvent("error", message=_errtext(exc))
        with fh:
            try:
                return self._poll_open(fh)
            except OSError as exc:
                return TailEvent("error", message=_errtext(exc))

    def _poll_open(self, fh: BinaryIO) -> TailEvent:
        st = os.fstat(fh.fileno())
        ident = (st.st_ino, st.st_dev)
        if self._missing:
            # The path had no file last time: whatever the caller holds (if anything) is not this file.
            had_state = self._ident is not None
            self._clear()
            return TailEvent("reset" if had_state else "created")
        if self._ident is None:
            self._ident = ident  # nothing read yet: start at byte 0
        elif ident != self._ident:
            self._clear()
            return TailEvent("reset")
        pos = self._offset + len(self._pending)
        if st.st_size < pos:
            self._clear()
            return TailEvent("reset")
        slot = b""
        if self._slot:
            now = fh.read(SLOT)
            if not _is_slot(now):
                self._clear()
                return TailEvent("reset")
            if now != self._slot:
                self._slot = slot = now
        if self._head and fh.read(len(self._head)) != self._head:
            self._clear()
            return TailEvent("reset")
        if self._fingerprint:
            # Checked even when the size is unchanged: a same-size rewrite can share the mtime tick. Bytes of
            # the title slot are left out: omp rewrites them in place.
            fp = self._fingerprint
            start = pos - len(fp)
            if start < len(self._slot):
                fp, start = fp[len(self._slot) - start :], len(self._slot)
            fh.seek(start)
            if fh.read(len(fp)) != fp:
                self._clear()
                return TailEvent("reset")
        else:
            fh.seek(pos)
        event = self._read_new(fh, st, pos)
        if slot:
            return TailEvent(event.kind, event.data, event.offset, event.message, slot)
        return event

    def _read_new(self, fh: BinaryIO, st: os.stat_result, pos: int) -> TailEvent:
        new = self._read_rest(fh)
        self._size = max(st.st_size, pos + len(new))
        if not new:
            return TailEvent("waiting" if self._pending else "unchanged")
        self._fingerprint = (self._fingerprint + new[-FINGERPRINT:])[-FINGERPRINT:]
        cut = new.rfind(b"\n") + 1
        if cut == 0:
            self._pending += new
            return TailEvent("waiting")
        if self._pending:
            self._pending += new[:cut]
            data = bytes(self._pending)
            self._pending = bytearray(new[cut:])
        else:
            data = new[:cut]
            self._pending = bytearray(new[cut:])
        start = self._offset
        self._offset += len(data)
        return TailEvent("append", data, start)

    @staticmethod
    def _read_rest(fh: BinaryIO) -> bytes:
        parts: list[bytes] = []
        while part := fh.read(CHUNK):
            parts.append(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)
