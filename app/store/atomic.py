"""The one way pitree writes a whole file: a new file written in full and fsynced (`write_new`, `write_temp`
beside the target), put in place by a rename, then the folder fsynced (`fsync_dir`), so a crash leaves the old
file or the new one, never half of one. Used by the migration's rewrite and backup (`append`) and by exports.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from pitree.session.text import one_line

TEMP_SUFFIX = ".pitree-tmp"  # not .jsonl: neither Pi nor pitree lists a half-written file as a session


def write_all(fd: int, data: bytes) -> None:
    """All of `data` to `fd`, however many writes it takes; an OSError if a write makes no progress."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.EIO, "write made no progress")
        view = view[n:]


def _create(path: Path, mode: int | None) -> int:
    """A new file at `path` (FileExistsError if the name is taken), open for writing."""
    # Private until written when a mode is given; else the umask decides, as for any new file.
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600 if mode is not None else 0o666)


def _fill(
    fd: int,
    path: Path,
    data: bytes | Iterable[bytes],
    mode: int | None,
    owner: tuple[int, int] | None,
    times_ns: tuple[int, int] | None,
) -> None:
    """Write `data` to the new file `fd` at `path`, set mode/owner/times, fsync, close; on any failure, an
    exception from the iterable included, close and remove it, and raise."""
    try:
        for piece in (data,) if isinstance(data, bytes | bytearray | memoryview) else data:
            write_all(fd, piece)
        if mode is not None:
            os.fchmod(fd, mode)
        if owner is not None and owner != (os.getuid(), os.getgid()):
            with contextlib.suppress(OSError):  # only root may give a file away; the mode still applies
                os.fchown(fd, *owner)
        if times_ns is not None:
            os.utime(fd, ns=times_ns)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)


def write_new(
    path: Path,
    data: bytes | Iterable[bytes],
    *,
    mode: int | None = None,
    owner: tuple[int, int] | None = None,
    times_ns: tuple[int, int] | None = None,
) -> None:
    """Create `path` (FileExistsError if the name is taken), write `data` (bytes, or its pieces as an iterable
    makes them), set mode/owner/times, fsync. On any failure, or an exception from the iterable, the new file is
    removed again."""
    _fill(_create(path, mode), path, data, mode, owner, times_ns)


def write_temp(
    beside: Path, data: bytes | Iterable[bytes], *, mode: int | None = None, owner: tuple[int, int] | None = None
) -> Path:
    """`data` in a new fsynced file in `beside`'s folder, named `.<name>.<random>.pitree-tmp`; its path."""
    parent = beside.parent if str(beside.parent) else Path(".")
    for _ in range(100):
        temp = parent / f".{beside.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            fd = _create(temp, mode)
        except FileExistsError:
            continue
        _fill(fd, temp, data, mode, owner, None)  # outside the retry: an iterable can be read only once
        return temp
    raise OSError(errno.EEXIST, f"{one_line(parent)}: could not create a temporary file")


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable. Best effort: some file systems cannot fsync a directory."""
    with contextlib.suppress(OSError):
        fd = os.open(directory if str(directory) else ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def replace_with(temp: Path, target: Path) -> None:
    """Rename `temp` over `target` (atomic on one file system) and make the rename durable."""
    os.replace(temp, target)
    fsync_dir(target.parent)
