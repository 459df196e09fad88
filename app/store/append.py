"""pitree's only write path to session files.

`append_line` adds one complete JSON line; `rewrite_atomically` replaces a whole file, used only for the
consented v1/v2 -> v3 migration, and keeps a backup first. Both refuse with an `AppendError` subclass
carrying one line for the user.

What `append_line` guarantees about the bytes already in the file: they are never changed. The file is
opened O_WRONLY|O_APPEND, never with O_TRUNC or O_CREAT. The entry goes out in one `os.write`, so it cannot
interleave with another O_APPEND writer (Pi's `appendFileSync` is one write too). A torn last line, left by
a crash mid-write, is first closed with a newline so the new entry stays a line of its own. The single
exception is undoing our own failed write: `os.ftruncate` back to the original size, and only when the
file holds exactly the original size plus a prefix of our payload (checked byte for byte). That restores
the file as it was before the append and never cuts anything another writer added.

The lock is advisory (`fcntl.flock` on the descriptor we write through). It keeps two pitree processes
from writing at the same time. Pi takes no lock, so the `expect_size` check and the O_APPEND write are what
protect against Pi.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson
from pitree.session.text import one_line
from pitree.store.atomic import replace_with, write_new, write_temp
from pitree.store.guard import note_own_write


class AppendError(Exception):
    """Writing to a session file failed or was refused; the message is one line for the user."""


class CannotOpen(AppendError):
    """The file is missing, a directory or other non-regular file, read-only, or not accessible."""


class LockBusy(AppendError):
    """Another pitree holds the write lock and did not let go of it within the timeout."""


class SessionChanged(AppendError):
    """The file is no longer what the caller read: its size differs, or it was replaced or removed."""


class AppendFailed(AppendError):
    """The write or the flush failed (disk full, I/O error); the message says what state the file is in."""


@dataclass(frozen=True, slots=True)
class AppendResult:
    offset: int  # where the new line starts (after the newline added to close a torn line)
    size_before: int
    size_after: int
    repaired_torn_line: bool


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def _check_line(line: bytes) -> None:
    if not isinstance(line, bytes):
        raise TypeError(f"line must be bytes, not {type(line).__name__}")
    if not line:
        raise ValueError("the line is empty")
    if b"\n" in line or b"\r" in line:
        raise ValueError("the line contains a line break; pass one JSON object without the trailing newline")
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"the line is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError("the line is not a JSON object")


def _open_error(path: Path, exc: OSError) -> CannotOpen:
    shown = one_line(path)
    if isinstance(exc, FileNotFoundError):
        return CannotOpen(f"{shown}: no such file (pitree never creates session files)")
    if isinstance(exc, NotADirectoryError):
        return CannotOpen(f"{shown}: no such file (a part of the path is not a directory)")
    if isinstance(exc, IsADirectoryError):
        return CannotOpen(f"{shown}: is a directory, not a session file")
    if isinstance(exc, PermissionError):
        return CannotOpen(f"{shown}: permission denied (cannot open it for writing)")
    if exc.errno == errno.EROFS:
        return CannotOpen(f"{shown}: is on a read-only file system")
    if exc.errno == errno.ENXIO:
        return CannotOpen(f"{shown}: is a pipe or socket, not a session file")
    return CannotOpen(f"{shown}: cannot open it for writing: {_reason(exc)}")


def _check_regular(path: Path, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise CannotOpen(f"{one_line(path)}: is a directory, not a session file")
    if not stat.S_ISREG(st.st_mode):
        raise CannotOpen(f"{one_line(path)}: is not a regular file, not a session file")
    # Enforced even for root (who bypasses permissions): a session made read-only is a request to leave it be.
    if st.st_mode & 0o222 == 0:
        mode = stat.S_IMODE(st.st_mode)
        raise CannotOpen(f"{one_line(path)}: is read-only (mode {mode:o}); pitree will not write to it")


def _open_for_append(path: Path) -> tuple[int, os.stat_result]:
    """Open the existing regular file O_WRONLY|O_APPEND; never creates, never truncates."""
    try:
        _check_regular(path, os.stat(path))  # refuse devices and FIFOs before opening them at all
        # O_NONBLOCK: a FIFO swapped in after the stat must not hang the open.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        raise _open_error(path, exc) from None
    try:
        st = os.fstat(fd)
        _check_regular(path, st)
        os.set_blocking(fd, True)
    except OSError as exc:
        os.close(fd)
        raise _open_error(path, exc) from None
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _open_for_reading(path: Path, st: os.stat_result) -> int:
    """A read descriptor on the same file as `st` (the write descriptor is O_WRONLY and cannot read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise SessionChanged(f"{one_line(path)} was removed or renamed while pitree was writing") from None
    except PermissionError:
        raise CannotOpen(f"{one_line(path)}: permission denied (pitree must also read it)") from None
    except OSError as exc:
        raise CannotOpen(f"{one_line(path)}: cannot read it: {_reason(exc)}") from None
    rst = os.fstat(fd)
    if (rst.st_dev, rst.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise _replaced(path)
    return fd


def _replaced(path: Path) -> SessionChanged:
    return SessionChanged(f"{one_line(path)} was replaced on disk since it was read; reload and try again")


def _check_same_file(path: Path, st: os.stat_result) -> None:
    """The name still points at the file we hold: a waiting writer must not append to a replaced file."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        raise SessionChanged(f"{one_line(path)} was removed or renamed since it was read; reload") from None
    except OSError as exc:
        raise CannotOpen(f"{one_line(path)}: {_reason(exc)}") from None
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        raise _replaced(path)


def _lock(fd: int, path: Path, timeout: float) -> None:
    deadline = time.monotonic() + max(0.0, timeout)
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        except OSError as exc:
            raise AppendError(f"{one_line(path)}: cannot lock it for writing: {_reason(exc)}") from None
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise LockBusy(
                f"{one_line(path)}: another pitree is writing to this session "
                f"(still locked after {timeout:g} s); try again"
            )
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, 0.05)


def _unlock_and_close(fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def _fstat(fd: int, path: Path) -> os.stat_result:
    try:
        return os.fstat(fd)
    except OSError as exc:
        raise AppendError(f"{one_line(path)}: cannot stat it: {_reason(exc)}") from None


def _pread(fd: int, length: int, offset: int) -> bytes:
    chunks = []
    while length > 0:
        chunk = os.pread(fd, length, offset)
        if not chunk:
            break
        chunks.append(chunk)
        length -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _roll_back(wfd: int, rfd: int, payload: bytes, size: int, written: int | None) -> str:
    """Undo a partial write if, and only if, the file is the original plus a prefix of `payload`.

    `written` is None when `os.write` raised: then the count is unknown and the byte comparison alone decides.
    Returns what state the file was left in, for the error message."""
    try:
        now = os.fstat(wfd).st_size
    except OSError:
        return "its state could not be checked; it may end with a partial line (Pi skips such a line)"
    extra = now - size
    if extra == 0:
        return "nothing was written; the file is unchanged"
    left = "the file changed meanwhile, so pitree left it as is; it may end with a partial line (Pi skips it)"
    if not 0 < extra <= len(payload) or (written is not None and extra != written):
        return left
    try:
        if _pread(rfd, extra, size) != payload[:extra]:
            return left
        os.ftruncate(wfd, size)  # restores the pre-append state; never cuts into bytes that were there
        os.fsync(wfd)
    except OSError as exc:
        return f"undoing the partial write failed ({_reason(exc)}); it ends with a partial line (Pi skips it)"
    return "the partial write was undone; the file is as it was"


def _locate(rfd: int, payload: bytes, size: int, after: int) -> int:
    """Where our payload landed. Normally at `size`; if Pi appended in between, look on either side."""
    if after == size + len(payload):
        return size
    for start in (after - len(payload), size):
        if start >= size:
            with contextlib.suppress(OSError):
                if _pread(rfd, len(payload), start) == payload:
                    return start
    return size


def append_line(path: Path | str, line: bytes, *, expect_size: int | None, lock_timeout: float = 5.0) -> AppendResult:
    """Append `line` (one JSON object, no trailing newline) plus b"\\n" to the existing file at `path`.

    `expect_size` is the size the caller read; if the file differs, nothing is written (`SessionChanged`).
    Waits up to `lock_timeout` seconds for another pitree's lock (`LockBusy`). Raises `ValueError` for a
    line that is empty, holds a line break or is not a JSON object."""
    path = Path(path)
    _check_line(line)
    wfd, _ = _open_for_append(path)
    rfd = -1
    try:
        _lock(wfd, path, lock_timeout)
        st = _fstat(wfd, path)
        _check_same_file(path, st)
        size = st.st_size
        if expect_size is not None and size != expect_size:
            raise SessionChanged(
                f"{one_line(path)} changed on disk since it was read ({expect_size} bytes, now {size}); "
                "reload and try again"
            )
        rfd = _open_for_reading(path, st)
        try:
            torn = size > 0 and _pread(rfd, 1, size - 1) != b"\n"
        except OSError as exc:
            raise CannotOpen(f"{one_line(path)}: cannot read its last line: {_reason(exc)}") from None
        payload = (b"\n" if torn else b"") + line + b"\n"

        written: int | None = None
        failure = ""
        try:
            written = os.write(wfd, payload)  # one call: O_APPEND makes it land whole at the end
        except OSError as exc:
            failure = _reason(exc)
        if written != len(payload):
            if not failure:
                failure = f"short write ({written} of {len(payload)} bytes; is the disk full?)"
            state = _roll_back(wfd, rfd, payload, size, written)
            raise AppendFailed(f"{one_line(path)}: could not append the entry: {failure}; {state}")
        try:
            os.fsync(wfd)
        except OSError as exc:
            raise AppendFailed(
                f"{one_line(path)}: the entry was written but could not be flushed to disk ({_reason(exc)}); "
                "it may be lost if the machine crashes"
            ) from None
        after = _fstat(wfd, path).st_size
        start = _locate(rfd, payload, size, after)
        note_own_write(path)
        return AppendResult(offset=start + int(torn), size_before=size, size_after=after, repaired_torn_line=torn)
    finally:
        if rfd >= 0:
            os.close(rfd)
        _unlock_and_close(wfd)  # closing alone would release the flock too; this says so


def _utc_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def _write_backup(path: Path, old: bytes, st: os.stat_result) -> Path:
    """`<name>.bak-<UTC time>` beside the file, never over an existing one (O_EXCL, then -2, -3, ...)."""
    base = f"{path.name}.bak-{_utc_stamp()}"
    mode = stat.S_IMODE(st.st_mode)
    for n in range(1, 1000):
        candidate = path.with_name(base if n == 1 else f"{base}-{n}")
        try:
            write_new(candidate, old, mode=mode, times_ns=(st.st_atime_ns, st.st_mtime_ns))
        except FileExistsError:
            continue
        return candidate
    raise OSError(errno.EEXIST, f"too many backups named {base}*")


def rewrite_atomically(
    path: Path | str,
    data: bytes,
    *,
    backup: bool = True,
    expect_size: int | None = None,
    lock_timeout: float = 5.0,
) -> Path | None:
    """Replace the file's content with `data`: temp file + fsync, backup, rename, fsync of the folder (`atomic`).

    Only for the consented migration of a pre-v3 file. Holds the same lock as `append_line`, keeps the
    file's mode (and owner, where allowed), follows a symlink to the real file, and returns the backup's
    path (None with `backup=False`). `expect_size`, when given, refuses if the file is not the size the
    caller read. On failure the original is untouched."""
    if not isinstance(data, bytes):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    if not data or not data.endswith(b"\n"):
        raise ValueError("the new content must be non-empty and end with a newline")
    real = Path(os.path.realpath(path))  # replace the file a symlink points to, never the link itself
    wfd, _ = _open_for_append(real)
    rfd = -1
    try:
        _lock(wfd, real, lock_timeout)
        st = _fstat(wfd, real)
        _check_same_file(real, st)
        if expect_size is not None and st.st_size != expect_size:
            raise SessionChanged(
                f"{one_line(real)} changed on disk since it was read ({expect_size} bytes, now {st.st_size}); "
                "reload and try again"
            )
        rfd = _open_for_reading(real, st)
        try:
            old = _pread(rfd, st.st_size, 0)
        except OSError as exc:
            raise CannotOpen(f"{one_line(real)}: cannot read it: {_reason(exc)}") from None
        temp: Path | None = None
        saved: Path | None = None
        done = False
        try:
            temp = write_temp(real, data, mode=stat.S_IMODE(st.st_mode), owner=(st.st_uid, st.st_gid))
            saved = _write_backup(real, old, st) if backup else None
            # Pi takes no lock: if it appended while we copied, replacing now would drop its entry.
            if os.fstat(wfd).st_size != len(old):
                raise SessionChanged(f"{one_line(real)} changed on disk during the rewrite; nothing replaced")
            replace_with(temp, real)
            done = True
        except OSError as exc:
            raise AppendFailed(
                f"{one_line(real)}: could not rewrite it: {_reason(exc)}; the original is unchanged"
            ) from None
        finally:
            if not done:
                # The original is untouched, so a backup of it is only clutter; both names are ours (O_EXCL).
                for leftover in (temp, saved):
                    if leftover is not None:
                        with contextlib.suppress(OSError):
                            os.unlink(leftover)
        note_own_write(real)
        return saved
    finally:
        if rfd >= 0:
            os.close(rfd)
        _unlock_and_close(wfd)
