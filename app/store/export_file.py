"""Writing an export: a temp file beside the target, fsync, then an atomic rename (or link) into place.

`check_target` refuses early (before any rendering); `write_export` checks again and writes. An existing
target is kept unless `force`; without `force` the file is put in place with `os.link`, which fails if
something appeared at that name meanwhile, so nothing is ever overwritten by accident. A target that is
the source session itself (same path, same file through a link) is always refused. The source is only
ever read.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from pitree.session.text import one_line
from pitree.store.atomic import fsync_dir, write_temp


class ExportFileError(Exception):
    """The export target is refused or could not be written; one line for the user."""


def _same_file(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_target(out: Path, *, force: bool = False, source: Path | None = None) -> None:
    """Raise ExportFileError when `out` may not be written (exists without force, is the source, ...)."""
    if source is not None and _same_file(out, source):
        raise ExportFileError(f"{one_line(out)} is the session being exported; choose another output file")
    if os.path.isdir(out):
        raise ExportFileError(f"{one_line(out)} is a directory; give a file name")
    if os.path.lexists(out):
        if not force:
            raise ExportFileError(f"{one_line(out)} already exists; pass --force to overwrite it")
        if not os.path.isfile(out) and not os.path.islink(out):
            raise ExportFileError(f"{one_line(out)} is not a regular file; pitree will not replace it")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise ExportFileError(f"{one_line(parent)}: no such folder")


def write_export(out: Path, data: bytes | Iterable[bytes], *, force: bool = False, source: Path | None = None) -> Path:
    """Write `data` (bytes, or its pieces as an iterable makes them) to `out` atomically; returns `out`. See the
    module docstring for what is refused. An exception from the iterable removes the temporary file and goes on
    up: `out` is left as it was."""
    out = Path(out)
    check_target(out, force=force, source=source)
    mode = None
    if force and os.path.isfile(out):
        with contextlib.suppress(OSError):
            mode = stat.S_IMODE(os.stat(out).st_mode)  # an overwritten file keeps its permissions
    try:
        temp = write_temp(out, data, mode=mode)
    except OSError as exc:
        raise ExportFileError(f"{one_line(out)}: cannot write it: {exc.strerror or exc}") from None
    try:
        if force:
            os.replace(temp, out)
        else:
            try:
                os.link(temp, out)  # fails if the name was taken meanwhile: never overwrites
            except FileExistsError:
                raise ExportFileError(f"{one_line(out)} already exists; pass --force to overwrite it") from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                    raise
                if os.path.lexists(out):  # no hard links here: check, then rename
                    raise ExportFileError(f"{one_line(out)} already exists; pass --force to overwrite it") from None
                os.replace(temp, out)
    except OSError as exc:
        raise ExportFileError(f"{one_line(out)}: cannot write it: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    fsync_dir(out.parent)
    return out
