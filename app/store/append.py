"""pitree's only write path: appending one whole line to a session file, and the consented migration.

`append_line` opens with O_APPEND (never O_TRUNC, never O_CREAT), takes an advisory lock so two pitree
processes cannot interleave, checks under the lock that the file is still the size that was read (else
nothing is written), repairs a torn last line by starting with a newline, writes the line in ONE write
and fsyncs. A short or failed write is undone by truncating back to the size before the append, which
only removes bytes this call wrote. Pi takes no lock, but its appends are single writes too.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path


class AppendError(Exception):
    """A write was refused or failed; the message is one line; the file is as it was."""


class LockBusy(AppendError):
    pass


class SessionChanged(AppendError):
    pass


class AppendFailed(AppendError):
    pass


@dataclass(frozen=True, slots=True)
class AppendResult:
    offset: int  # where the new entry's line starts
    size_before: int
    size_after: int
    repaired_torn_line: bool


def _open_for_append(path: Path) -> int:
    try:
        return os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise AppendError(f"{path}: no such file (pitree never creates session files)") from None
    except IsADirectoryError:
        raise AppendError(f"{path}: is a directory") from None
    except PermissionError:
        raise AppendError(f"{path}: permission denied (cannot write)") from None
    except OSError as exc:
        raise AppendError(f"{path}: {exc.strerror or exc}") from None


def _lock(fd: int, path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockBusy(f"{path}: another pitree is writing to this session; try again") from None
            time.sleep(0.02)


def _last_byte(path: Path, size: int) -> bytes:
    if size == 0:
        return b""
    with open(path, "rb") as fh:
        fh.seek(size - 1)
        return fh.read(1)


def append_line(path: Path, line: bytes, *, expect_size: int | None, lock_timeout: float = 5.0) -> AppendResult:
    """Append `line` (one JSON object, no newline) as a complete line. See the module docstring."""
    if not line or b"\n" in line or b"\r" in line:
        raise ValueError("append_line takes one non-empty line without newline characters")
    fd = _open_for_append(path)
    try:
        _lock(fd, path, lock_timeout)
        size = os.fstat(fd).st_size
        if expect_size is not None and size != expect_size:
            raise SessionChanged(
                f"{path.name} changed on disk since it was read ({expect_size} bytes, now {size}); "
                "reload and try again — nothing was written"
            )
        torn = size > 0 and _last_byte(path, size) != b"\n"
        payload = (b"\n" if torn else b"") + line + b"\n"
        try:
            written = os.write(fd, payload)
        except OSError as exc:
            state = _undo(fd, path, size, 0)
            raise AppendFailed(f"{path.name}: write failed ({exc.strerror or exc}); {state}") from None
        if written != len(payload):
            state = _undo(fd, path, size, written)
            raise AppendFailed(f"{path.name}: short write ({written} of {len(payload)} bytes); {state}")
        try:
            os.fsync(fd)
        except OSError as exc:
            raise AppendFailed(f"{path.name}: fsync failed ({exc.strerror or exc})") from None
        return AppendResult(size + (1 if torn else 0), size, size + len(payload), torn)
    finally:
        os.close(fd)  # closing releases the lock


def _undo(fd: int, path: Path, size: int, written: int) -> str:
    """Remove the partial line this call wrote, only when nobody else has appended since (else say so)."""
    try:
        now = os.fstat(fd).st_size
        if now == size:
            return "the file is as it was"
        if now == size + written:
            with open(path, "r+b") as fh:
                fh.truncate(size)
                fh.flush()
                os.fsync(fh.fileno())
            return "the partial line was removed; the file is as it was"
        return f"the file grew to {now} bytes meanwhile (another writer), so pitree left it untouched"
    except OSError as exc:
        return f"could not check the file afterwards ({exc.strerror or exc})"


def rewrite_atomically(path: Path, data: bytes, *, backup: bool = True) -> Path | None:
    """Replace the file's content with `data`: temp file + fsync + rename, a backup copy kept first."""
    fd = _open_for_append(path)
    try:
        _lock(fd, path, 5.0)
        mode = os.fstat(fd).st_mode & 0o7777
        backup_path = None
        if backup:
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            backup_path = path.with_name(f"{path.name}.bak-{stamp}")
            n = 1
            while backup_path.exists():
                backup_path = path.with_name(f"{path.name}.bak-{stamp}-{n}")
                n += 1
            shutil.copy2(path, backup_path)
        tmp = path.with_name(f".{path.name}.pitree-tmp-{os.getpid()}")
        try:
            with open(tmp, "xb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            if exc.errno == errno.ENOSPC:
                raise AppendFailed(f"{path.name}: disk full; the file is as it was") from None
            raise AppendFailed(f"{path.name}: rewrite failed ({exc.strerror or exc}); the file is as it was") from None
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return backup_path
    finally:
        os.close(fd)
