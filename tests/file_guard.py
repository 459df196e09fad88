"""The file guard: a session file is never changed except by an explicit append (issue 6).

`install()` wraps pitree's file-opening entry points once, for good: the readers in `store.session_file`
(`check_readable`, which every load goes through, and `EntryReader`), the `Tailer` in `store.tail`, and the
writers in `store.append`. The wrappers tell the active `FileGuard` (if any) which file is opened and how;
the guard hashes it (sha256, size, last byte) the first time it sees it. `FileGuard.violations()` then
checks every such file that still exists:

- unchanged, byte for byte; or
- pitree appended to it (`append_line`): the old bytes are an exact prefix of the new ones and the extra
  bytes are whole JSON-object lines, each ending in b"\\n" (a leading b"\\n" may close a torn last line); or
- pitree rewrote it through the consented migration (`rewrite_atomically`): exempt, but a
  `<name>.bak-*` beside it must hold the bytes as they were just before that rewrite.

Subprocesses are guarded too: `FileGuard.env()` adds a folder holding a `sitecustomize.py` to PYTHONPATH
and names a log file; a Python subprocess with that environment installs the wrappers at startup and
appends what it opened to the log, which the guard reads back. Tests whose own writer changes a session
(a stand-in for Pi) opt out with `@pytest.mark.writes_session`.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import shutil
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

LOG_ENV = "PITREE_FILE_GUARD_LOG"
_REPO = Path(__file__).resolve().parents[1]
_SITE_DIR: Path | None = None
_CURRENT: FileGuard | None = None
_INSTALLED = False

SITECUSTOMIZE = f"""\
# Written by tests/file_guard.py: guard the session files a pitree subprocess opens.
import os, sys
if os.environ.get({LOG_ENV!r}):
    sys.path.insert(0, {str(_REPO)!r})
    try:
        from tests.file_guard import install_in_subprocess
        install_in_subprocess()
    finally:
        sys.path.remove({str(_REPO)!r})
"""


@dataclass
class Record:
    """What the guard knows about one file: how it was first, and what pitree did to it."""

    path: str
    sha: str
    size: int
    last: bytes  # the last byte when first seen (b"" for an empty file)
    seen_at: int  # time.monotonic_ns() of the first sighting (comparable across processes)
    appended: bool = False
    rewrites: list[str] = field(default_factory=list)  # sha256 of the bytes just before each rewrite


def _snapshot(path: str) -> tuple[str, int, bytes] | None:
    """(sha256, size, last byte) of a regular file, or None (missing, a FIFO, a directory, unreadable)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return None
        digest = hashlib.sha256()
        last = b""
        with open(path, "rb") as fh:
            while chunk := fh.read(8 << 20):
                digest.update(chunk)
                last = chunk[-1:]
        return digest.hexdigest(), st.st_size, last
    except OSError:
        return None


def _prefix_sha(path: str, size: int) -> str:
    digest = hashlib.sha256()
    left = size
    with open(path, "rb") as fh:
        while left > 0:
            chunk = fh.read(min(8 << 20, left))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
    return digest.hexdigest()


def _key(path: Any) -> str:
    return os.path.realpath(os.fspath(path))


class FileGuard:
    """Records the session files opened while it is active and checks them afterwards."""

    def __init__(self, log_dir: Path | None = None) -> None:
        self.records: dict[str, Record] = {}
        self._lock = threading.Lock()
        self.log_dir = Path(log_dir) if log_dir is not None else Path(tempfile.mkdtemp(prefix="pitree-guard-"))
        self.log = self.log_dir / "opened.jsonl"

    # ---- recording -----------------------------------------------------------------------------------

    def saw(self, path: Any, how: str) -> None:
        """`path` is being opened (`read`), appended to (`append`) or rewritten (`rewrite`) by pitree."""
        key = _key(path)
        with self._lock:
            record = self.records.get(key)
            snap = None
            if record is None or how == "rewrite":
                snap = _snapshot(key)
            if record is None:
                if snap is None:
                    return  # nothing there (yet), or not a regular file: nothing to protect
                record = self.records[key] = Record(key, snap[0], snap[1], snap[2], time.monotonic_ns())
            if how == "append":
                record.appended = True
            elif how == "rewrite" and snap is not None:
                record.rewrites.append(snap[0])

    def merge_log(self) -> None:
        """Add what guarded subprocesses wrote to the log (the earliest sighting of a file wins)."""
        try:
            lines = self.log.read_bytes().splitlines()
        except FileNotFoundError:
            return
        for line in lines:
            try:
                item = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # a subprocess killed mid-write of its log line
            key = item["path"]
            record = self.records.get(key)
            if record is None or item["seen_at"] < record.seen_at:
                fresh = Record(key, item["sha"], item["size"], bytes.fromhex(item["last"]), item["seen_at"])
                if record is not None:
                    fresh.appended, fresh.rewrites = record.appended, record.rewrites
                record = self.records[key] = fresh
            record.appended = record.appended or item["appended"]
            record.rewrites.extend(item["rewrites"])

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """An environment under which a Python subprocess reports what it opens to this guard."""
        env = dict(os.environ if base is None else base)
        env[LOG_ENV] = str(self.log)
        site = str(_site_dir())
        parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != site]
        env["PYTHONPATH"] = os.pathsep.join([site, *parts])
        return env

    # ---- checking ------------------------------------------------------------------------------------

    def violations(self) -> list[str]:
        """One line per guarded file that changed in a way pitree must never change a file."""
        self.merge_log()
        problems = []
        for record in self.records.values():
            problem = self._check(record)
            if problem:
                problems.append(f"{record.path}: {problem}")
        return problems

    def _check(self, r: Record) -> str | None:
        now = _snapshot(r.path)
        if now is None:
            return None  # removed (or replaced by something that is not a file): nothing left to compare
        sha, size, _ = now
        if sha == r.sha:
            return None
        if r.rewrites:
            backups = [p for p in Path(r.path).parent.glob(Path(r.path).name + ".bak-*") if p.is_file()]
            kept = {s for s in (_snapshot(str(p)) for p in backups) if s is not None}
            if any(s[0] in r.rewrites for s in kept):
                return None
            return "rewritten, but no .bak-* file beside it holds the bytes from before the rewrite"
        if not r.appended:
            return f"changed ({r.size} -> {size} bytes) although pitree only read it"
        if size < r.size:
            return f"shrank from {r.size} to {size} bytes after an append"
        if _prefix_sha(r.path, r.size) != r.sha:
            return f"its first {r.size} bytes changed: an append must never touch what was there"
        with open(r.path, "rb") as fh:
            fh.seek(r.size)
            extra = fh.read()
        if r.last not in (b"", b"\n") and extra.startswith(b"\n"):
            extra = extra[1:]  # the newline append_line adds to close a torn last line
        if not extra.endswith(b"\n"):
            return f"the appended bytes do not end in a newline: {extra[-80:]!r}"
        for line in extra[:-1].split(b"\n"):
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                return f"an appended line is not JSON: {line[:80]!r}"
            if not isinstance(value, dict):
                return f"an appended line is not a JSON object: {line[:80]!r}"
        return None

    @contextmanager
    def active(self) -> Iterator[FileGuard]:
        """Make this the guard the wrappers report to (in this process)."""
        global _CURRENT
        install()
        previous, _CURRENT = _CURRENT, self
        try:
            yield self
        finally:
            _CURRENT = previous


class _LogGuard(FileGuard):
    """The guard of a subprocess: each sighting is appended to the parent's log at once (it may be killed)."""

    def __init__(self, log: Path) -> None:
        self.records = {}
        self._lock = threading.Lock()
        self.log_dir = log.parent
        self.log = log

    def saw(self, path: Any, how: str) -> None:
        super().saw(path, how)
        key = _key(path)
        record = self.records.get(key)
        if record is None:
            return
        line = orjson.dumps(
            {
                "path": record.path,
                "sha": record.sha,
                "size": record.size,
                "last": record.last.hex(),
                "seen_at": record.seen_at,
                "appended": how == "append",
                "rewrites": record.rewrites[-1:] if how == "rewrite" else [],
            }
        )
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line + b"\n")
        finally:
            os.close(fd)


def _site_dir() -> Path:
    global _SITE_DIR
    if _SITE_DIR is None:
        folder = Path(tempfile.mkdtemp(prefix="pitree-guard-site-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
        _SITE_DIR = folder
    return _SITE_DIR


# ---- the wrappers ------------------------------------------------------------------------------------------


def _report(path: Any, how: str) -> None:
    guard = _CURRENT
    if guard is not None and path is not None:
        try:
            guard.saw(path, how)
        except (OSError, TypeError, ValueError):
            pass  # a path pitree itself will refuse (bytes garbage, NUL): the call reports it


def _wrap_function(module: Any, name: str, how: str) -> None:
    original = getattr(module, name)
    if getattr(original, "__file_guard__", False):
        return

    @functools.wraps(original)
    def wrapper(path: Any, *args: Any, **kwargs: Any) -> Any:
        _report(path, how)
        return original(path, *args, **kwargs)

    wrapper.__file_guard__ = True  # type: ignore[attr-defined]
    setattr(module, name, wrapper)
    _rebind(original, wrapper)


def _wrap_method(cls: type, name: str, how: str) -> None:
    original = getattr(cls, name)
    if getattr(original, "__file_guard__", False):
        return

    @functools.wraps(original)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        _report(getattr(self, "path", None), how)
        return original(self, *args, **kwargs)

    wrapper.__file_guard__ = True  # type: ignore[attr-defined]
    setattr(cls, name, wrapper)


def _rebind(original: Callable[..., Any], wrapper: Callable[..., Any]) -> None:
    """Modules that imported the function by name before the wrapping get the wrapper too."""
    for mod_name, module in list(sys.modules.items()):
        if not mod_name.startswith("pitree") or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if value is original:
                setattr(module, attr, wrapper)


def install() -> None:
    """Wrap the entry points (idempotent). Done at conftest import, before any test imports pitree's CLI."""
    global _INSTALLED
    if _INSTALLED:
        return
    from pitree.store import append, session_file, tail

    _wrap_function(session_file, "check_readable", "read")
    _wrap_method(session_file.EntryReader, "raw", "read")
    _wrap_method(session_file.EntryReader, "entries", "read")
    _wrap_method(tail.Tailer, "read_initial", "read")
    _wrap_method(tail.Tailer, "poll", "read")
    _wrap_method(tail.Tailer, "_adopt", "read")
    _wrap_function(append, "append_line", "append")
    _wrap_function(append, "rewrite_atomically", "rewrite")
    _INSTALLED = True


def install_in_subprocess() -> None:
    """Called by the generated sitecustomize.py: report to the log named in the environment."""
    global _CURRENT
    log = os.environ.get(LOG_ENV)
    if not log:
        return
    install()
    _CURRENT = _LogGuard(Path(log))


@contextmanager
def guarding(enabled: bool = True) -> Iterator[FileGuard | None]:
    """Activate a fresh guard (and its subprocess environment) for one test; fail it on a violation."""
    if not enabled:
        yield None
        return
    guard = FileGuard()
    saved = {k: os.environ.get(k) for k in (LOG_ENV, "PYTHONPATH")}
    os.environ.update({k: v for k, v in guard.env().items() if k in saved})
    try:
        with guard.active():
            yield guard
        problems = guard.violations()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(guard.log_dir, ignore_errors=True)
    if problems:
        raise AssertionError("the file guard found session files changed:\n" + "\n".join(problems))
