"""`Tailer`: what was appended to a session file since the last look, as complete lines only.

Never writes and never keeps the file open between polls (Pi must be free to rename or replace it).
It tells apart: lines appended, only part of a line so far (wait), the file rewritten in place or
replaced (reset: reload), the file gone (missing), the file appearing (created), and read errors.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

FINGERPRINT = 64  # bytes before the offset that must still be there, to notice in-place rewrites


@dataclass(frozen=True, slots=True)
class TailEvent:
    kind: str  # append | unchanged | waiting | reset | missing | created | error
    data: bytes = b""
    offset: int = 0
    message: str = ""


class Tailer:
    """Follows one file from `offset` (the end of the complete lines already read)."""

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.path = path
        self.offset = offset
        self._ident: tuple[int, int] | None = None
        self._fingerprint = b""
        self._existed = False
        try:
            st = os.stat(path)
        except OSError:
            return
        self._existed = True
        self._ident = (st.st_dev, st.st_ino)
        self._fingerprint = self._read_fingerprint()

    def _read_fingerprint(self) -> bytes:
        start = max(0, self.offset - FINGERPRINT)
        try:
            with open(self.path, "rb") as fh:
                fh.seek(start)
                return fh.read(self.offset - start)
        except OSError:
            return b""

    def poll(self) -> TailEvent:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self._existed:
                self._existed = False
                return TailEvent("missing")
            return TailEvent("missing")
        except OSError as exc:
            return TailEvent("error", message=exc.strerror or str(exc))
        ident = (st.st_dev, st.st_ino)
        if not self._existed:
            self._existed = True
            self._ident = ident
            return TailEvent("created")
        if ident != self._ident or st.st_size < self.offset:
            return TailEvent("reset")
        if st.st_size == self.offset:
            return TailEvent("unchanged")
        try:
            with open(self.path, "rb") as fh:
                start = max(0, self.offset - len(self._fingerprint))
                fh.seek(start)
                head = fh.read(self.offset - start)
                if head != self._fingerprint:
                    return TailEvent("reset")
                data = fh.read(st.st_size - self.offset)
        except FileNotFoundError:
            self._existed = False
            return TailEvent("missing")
        except OSError as exc:
            return TailEvent("error", message=exc.strerror or str(exc))
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            return TailEvent("waiting")
        chunk = data[:cut]
        offset = self.offset
        self.offset += cut
        self._fingerprint = (self._fingerprint + chunk)[-FINGERPRINT:]
        return TailEvent("append", chunk, offset)
