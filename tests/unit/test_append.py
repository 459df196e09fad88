"""`store.append`: appends keep every existing byte, refuse clearly, lock against other pitrees, roll back
their own failed writes; `rewrite_atomically` keeps a backup, the mode, and never half-replaces a file.

Every test that leaves a file in place checks that its original bytes are still its prefix (by hash).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pitree.store.append as append_mod
import pytest
from pitree.store.append import (
    AppendError,
    AppendFailed,
    AppendResult,
    CannotOpen,
    LockBusy,
    SessionChanged,
    append_line,
    rewrite_atomically,
)

HEADER = b'{"type":"session","version":3,"id":"11111111-2222-3333-4444-555555555555","cwd":"/w"}'
ENTRY = b'{"type":"message","id":"aaaa0001","parentId":null,"message":{"role":"user","content":"hi"}}'
LINE = b'{"type":"label","id":"bbbb0002","parentId":"aaaa0001","targetId":"aaaa0001","label":"x"}'
BASE = HEADER + b"\n" + ENTRY + b"\n"

# Holds an exclusive flock on argv[1] until a line arrives on stdin (or it is killed).
HOLD_LOCK = (
    "import fcntl, os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "print('locked', flush=True)\n"
    "sys.stdin.readline()\n"
)

# Appends 200 lines tagged argv[2] once a line arrives on stdin; says "ready" first so both start together.
WRITER = (
    "import sys\n"
    "from pitree.store.append import append_line\n"
    "path, tag = sys.argv[1], sys.argv[2]\n"
    "pad = 'x' * 3000\n"
    "print('ready', flush=True)\n"
    "sys.stdin.readline()\n"
    "for i in range(200):\n"
    '    line = (\'{"w":"%s","i":%d,"pad":"%s"}\' % (tag, i, pad)).encode()\n'
    "    append_line(path, line, expect_size=None, lock_timeout=60)\n"
)


@dataclass(frozen=True)
class Original:
    data: bytes
    sha: str

    def assert_prefix_of(self, path: Path) -> bytes:
        now = path.read_bytes()
        assert hashlib.sha256(now[: len(self.data)]).hexdigest() == self.sha, "existing bytes were changed"
        return now


def _listing(directory: Path) -> set[str]:
    return set(os.listdir(directory))


def keep(path: Path) -> Original:
    data = path.read_bytes()
    return Original(data, hashlib.sha256(data).hexdigest())


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BASE)
    return path


@pytest.fixture
def holder(session: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Another process holding the append lock on `session`; release it by writing a line to its stdin."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(session)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"locked\n"
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def release(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(b"go\n")
    proc.stdin.flush()


# --- successful appends -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "expect", "added", "offset", "torn"),
    [
        pytest.param(BASE, True, LINE + b"\n", len(BASE), False, id="normal"),
        pytest.param(BASE, False, LINE + b"\n", len(BASE), False, id="no-size-check"),
        pytest.param(BASE + b'{"type":"mess', True, b"\n" + LINE + b"\n", len(BASE) + 14, True, id="torn"),
        pytest.param(HEADER, True, b"\n" + LINE + b"\n", len(HEADER) + 1, True, id="torn-header-only"),
        pytest.param(b"", True, LINE + b"\n", 0, False, id="empty-file"),
        pytest.param(HEADER + b"\r\n", True, LINE + b"\n", len(HEADER) + 2, False, id="crlf-ending"),
        pytest.param(HEADER + b"\r", True, b"\n" + LINE + b"\n", len(HEADER) + 2, True, id="bare-cr-ending"),
    ],
)
def test_append(tmp_path: Path, start: bytes, expect: bool, added: bytes, offset: int, torn: bool) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(start)
    original = keep(path)
    result = append_line(path, LINE, expect_size=len(start) if expect else None)
    assert result == AppendResult(
        offset=offset, size_before=len(start), size_after=len(start) + len(added), repaired_torn_line=torn
    )
    now = original.assert_prefix_of(path)
    assert now == start + added
    assert now[result.offset : result.offset + len(LINE) + 1] == LINE + b"\n"
    assert now[result.offset - 1 : result.offset] in (b"", b"\n")


def test_appends_accumulate(session: Path) -> None:
    original = keep(session)
    size = len(BASE)
    for i in range(5):
        line = orjson.dumps({"type": "custom", "id": f"cccc000{i}", "customType": "t", "data": {"i": i}})
        result = append_line(session, line, expect_size=size)
        assert result.offset == size and not result.repaired_torn_line
        size = result.size_after
    lines = original.assert_prefix_of(session)[len(BASE) :].splitlines()
    assert [orjson.loads(x)["data"]["i"] for x in lines] == list(range(5))


# --- refusals: nothing written --------------------------------------------------------------------------


def _fifo(path: Path) -> Path:
    fifo = path.with_name("fifo.jsonl")
    os.mkfifo(fifo)
    return fifo


def _read_only(path: Path) -> Path:
    path.chmod(0o444)
    return path


def _symlink_to_dir(path: Path) -> Path:
    link = path.with_name("link.jsonl")
    link.symlink_to(path.parent)
    return link


@pytest.mark.parametrize(
    ("make", "expect", "error", "message"),
    [
        pytest.param(
            lambda p: p,
            len(BASE) - 1,
            SessionChanged,
            f"changed on disk since it was read ({len(BASE) - 1} bytes, now {len(BASE)}); reload",
            id="size-mismatch",
        ),
        pytest.param(lambda p: p, len(BASE) + 10, SessionChanged, "reload and try again", id="size-larger"),
        pytest.param(lambda p: p.with_name("missing.jsonl"), None, CannotOpen, "no such file", id="missing"),
        pytest.param(lambda p: p / "x.jsonl", None, CannotOpen, "no such file", id="parent-is-file"),
        pytest.param(lambda p: p.parent, None, CannotOpen, "is a directory", id="directory"),
        pytest.param(_symlink_to_dir, None, CannotOpen, "is a directory", id="symlink-to-directory"),
        pytest.param(_read_only, None, CannotOpen, "is read-only (mode 444)", id="read-only"),
        pytest.param(_fifo, None, CannotOpen, "not a regular file", id="fifo"),
    ],
)
def test_refused(
    session: Path, make: Callable[[Path], Path], expect: int | None, error: type[AppendError], message: str
) -> None:
    original = keep(session)
    target = make(session)
    before = _listing(session.parent)
    with pytest.raises(error) as info:
        append_line(target, LINE, expect_size=expect, lock_timeout=1)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert original.assert_prefix_of(session) == BASE
    assert _listing(session.parent) == before  # nothing created, not even the missing file


def test_permission_denied_message(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The suite runs as root here, where a real EACCES cannot happen; simulate the open failing.
    original = keep(session)
    real_open = os.open

    def deny(path: object, flags: int, *args: int) -> int:
        if flags & os.O_WRONLY:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(append_mod.os, "open", deny)
    with pytest.raises(CannotOpen, match="permission denied"):
        append_line(session, LINE, expect_size=None)
    monkeypatch.undo()
    assert original.assert_prefix_of(session) == BASE


@pytest.mark.parametrize(
    ("line", "error"),
    [
        pytest.param(b"", ValueError, id="empty"),
        pytest.param(LINE + b"\n", ValueError, id="trailing-newline"),
        pytest.param(b'{"a":\n1}', ValueError, id="inner-newline"),
        pytest.param(LINE + b"\r", ValueError, id="carriage-return"),
        pytest.param(b"[1, 2]", ValueError, id="not-an-object"),
        pytest.param(b"not json", ValueError, id="not-json"),
        pytest.param(b'{"a":1}{"b":2}', ValueError, id="two-objects"),
        pytest.param(b'{"a":"\xff"}', ValueError, id="invalid-utf8"),
        pytest.param(LINE.decode(), TypeError, id="str-not-bytes"),
    ],
)
def test_bad_line_rejected(session: Path, line: bytes, error: type[Exception]) -> None:
    original = keep(session)
    with pytest.raises(error):
        append_line(session, line, expect_size=len(BASE))
    assert original.assert_prefix_of(session) == BASE


def test_replaced_while_waiting_for_lock(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that got the lock after the file was replaced (e.g. by a migration) must not append."""
    replacement = session.with_name("new.jsonl")
    replacement.write_bytes(BASE)
    original = keep(replacement)
    real_flock = append_mod.fcntl.flock

    def flock(fd: int, op: int) -> None:
        if op & append_mod.fcntl.LOCK_EX and replacement.exists():
            os.replace(replacement, session)
        real_flock(fd, op)

    monkeypatch.setattr(append_mod.fcntl, "flock", flock)
    with pytest.raises(SessionChanged, match="was replaced"):
        append_line(session, LINE, expect_size=None)
    assert original.assert_prefix_of(session) == BASE


# --- locking and concurrency ----------------------------------------------------------------------------


def test_lock_busy_within_timeout(session: Path, holder: subprocess.Popen[bytes]) -> None:
    original = keep(session)
    start = time.monotonic()
    with pytest.raises(LockBusy, match="another pitree is writing"):
        append_line(session, LINE, expect_size=len(BASE), lock_timeout=0.3)
    elapsed = time.monotonic() - start
    assert 0.3 <= elapsed < 3
    assert original.assert_prefix_of(session) == BASE


def test_lock_acquired_once_released(session: Path, holder: subprocess.Popen[bytes]) -> None:
    original = keep(session)
    results: list[AppendResult | BaseException] = []

    def run() -> None:
        try:
            results.append(append_line(session, LINE, expect_size=len(BASE), lock_timeout=30))
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            results.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    release(holder)
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert isinstance(results[0], AppendResult), results
    assert original.assert_prefix_of(session) == BASE + LINE + b"\n"


def test_two_processes_append_concurrently(session: Path) -> None:
    original = keep(session)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(session), tag], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        for tag in ("A", "B")
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        for proc in procs:
            release(proc)
        for proc in procs:
            assert proc.wait(timeout=120) == 0
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=10)
    data = original.assert_prefix_of(session)
    assert data.endswith(b"\n")
    lines = data[len(BASE) :].split(b"\n")[:-1]
    assert len(lines) == 400
    seen: dict[str, list[int]] = {"A": [], "B": []}
    for raw in lines:
        obj = orjson.loads(raw)  # an interleaved or torn line would not parse
        assert len(obj["pad"]) == 3000
        seen[obj["w"]].append(obj["i"])
    assert seen == {"A": list(range(200)), "B": list(range(200))}


# --- failed writes --------------------------------------------------------------------------------------


def _half_then_raise(real: Callable[[int, bytes], int], fd: int, data: bytes, path: Path) -> int:
    real(fd, data[: len(data) // 2])
    raise OSError(errno.ENOSPC, "No space left on device")


def _half_and_return(real: Callable[[int, bytes], int], fd: int, data: bytes, path: Path) -> int:
    return real(fd, data[: len(data) // 2])


def _raise_only(real: Callable[[int, bytes], int], fd: int, data: bytes, path: Path) -> int:
    raise OSError(errno.EIO, "Input/output error")


def _half_then_other_writer(real: Callable[[int, bytes], int], fd: int, data: bytes, path: Path) -> int:
    real(fd, data[: len(data) // 2])
    with open(path, "ab") as other:  # Pi appends in the meantime: its bytes must survive
        other.write(b"PI\n")
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize(
    ("fake", "message", "undone"),
    [
        pytest.param(
            _half_then_raise, "No space left on device; the partial write was undone", True, id="half-then-enospc"
        ),
        pytest.param(_half_and_return, "short write", True, id="short-write"),
        pytest.param(_raise_only, "Input/output error; nothing was written", True, id="raise-only"),
        pytest.param(_half_then_other_writer, "left it as is", False, id="other-writer-kept"),
    ],
)
@pytest.mark.parametrize("start", [BASE, BASE + b'{"torn'], ids=["clean", "torn"])
def test_failed_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start: bytes, fake: Callable[..., int], message: str, undone: bool
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(start)
    original = keep(path)
    real_write = os.write
    calls: list[int] = []

    def write(fd: int, data: bytes) -> int:
        calls.append(fd)
        if len(calls) == 1:
            return fake(real_write, fd, data, path)
        return real_write(fd, data)

    monkeypatch.setattr(append_mod.os, "write", write)
    with pytest.raises(AppendFailed) as info:
        append_line(path, LINE, expect_size=len(start))
    monkeypatch.undo()
    assert message in str(info.value) and "\n" not in str(info.value)
    now = original.assert_prefix_of(path)
    if undone:
        assert now == start
    else:
        assert now.endswith(b"PI\n") and len(now) > len(start) + 3
    assert len(calls) == 1  # one write call, never a retry of the rest


def test_fsync_failure_is_reported(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = keep(session)

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(append_mod.os, "fsync", fsync)
    with pytest.raises(AppendFailed, match="written but could not be flushed"):
        append_line(session, LINE, expect_size=len(BASE))
    monkeypatch.undo()
    assert original.assert_prefix_of(session) == BASE + LINE + b"\n"


# --- rewrite_atomically ---------------------------------------------------------------------------------

NEW = HEADER + b"\n" + LINE + b"\n"
BACKUP_NAME = re.compile(r"s\.jsonl\.bak-\d{8}T\d{6}Z(-\d+)?")


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600])
def test_rewrite_keeps_backup_and_mode(session: Path, mode: int) -> None:
    session.chmod(mode)
    os.utime(session, (1_700_000_000, 1_700_000_000))
    original = keep(session)
    inode = session.stat().st_ino
    backup = rewrite_atomically(session, NEW)
    assert backup is not None and BACKUP_NAME.fullmatch(backup.name) and backup.parent == session.parent
    assert session.read_bytes() == NEW
    assert stat.S_IMODE(session.stat().st_mode) == mode
    assert session.stat().st_ino != inode  # replaced by rename, not rewritten in place
    assert hashlib.sha256(backup.read_bytes()).hexdigest() == original.sha
    assert stat.S_IMODE(backup.stat().st_mode) == mode and backup.stat().st_mtime == 1_700_000_000
    assert _listing(session.parent) == {"s.jsonl", backup.name}  # no temp file left behind


def test_rewrite_without_backup(session: Path) -> None:
    assert rewrite_atomically(session, NEW, backup=False) is None
    assert session.read_bytes() == NEW and _listing(session.parent) == {"s.jsonl"}


def test_rewrite_never_overwrites_a_backup(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(append_mod, "_utc_stamp", lambda: "20260101T000000Z")
    taken = session.with_name("s.jsonl.bak-20260101T000000Z")
    taken.write_bytes(b"older backup")
    original = keep(session)
    first = rewrite_atomically(session, NEW)
    second = rewrite_atomically(session, NEW + LINE + b"\n")
    assert taken.read_bytes() == b"older backup"
    assert first is not None and first.name == "s.jsonl.bak-20260101T000000Z-2"
    assert second is not None and second.name == "s.jsonl.bak-20260101T000000Z-3"
    assert hashlib.sha256(first.read_bytes()).hexdigest() == original.sha
    assert second.read_bytes() == NEW


def test_rewrite_through_symlink_replaces_the_target(session: Path) -> None:
    link = session.with_name("link.jsonl")
    link.symlink_to(session.name)
    backup = rewrite_atomically(link, NEW)
    assert link.is_symlink() and session.read_bytes() == NEW
    assert backup is not None and backup.read_bytes() == BASE and backup.name.startswith("s.jsonl.bak-")


def test_append_after_rewrite(session: Path) -> None:
    rewrite_atomically(session, NEW)
    original = keep(session)
    append_line(session, ENTRY, expect_size=len(NEW))
    assert original.assert_prefix_of(session) == NEW + ENTRY + b"\n"


def _pi_appends_during_rewrite(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    real = append_mod.write_temp

    def write_temp(*args: Any, **kwargs: Any) -> Path:
        with open(path, "ab") as other:
            other.write(b"PI\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(append_mod, "write_temp", write_temp)


def _replace_fails(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    def replace(src: object, dst: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(append_mod.os, "replace", replace)


def _size_mismatch(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    pass


@pytest.mark.parametrize(
    ("setup", "kwargs", "error", "message", "after"),
    [
        pytest.param(_size_mismatch, {"expect_size": 3}, SessionChanged, "(3 bytes, now", BASE, id="size"),
        pytest.param(
            _pi_appends_during_rewrite,
            {},
            SessionChanged,
            "during the rewrite",
            BASE + b"PI\n",
            id="pi-appended-meanwhile",
        ),
        pytest.param(
            _replace_fails, {}, AppendFailed, "Input/output error; the original is unchanged", BASE, id="replace-fails"
        ),
    ],
)
def test_rewrite_failures_leave_original(
    session: Path,
    monkeypatch: pytest.MonkeyPatch,
    setup: Callable[[pytest.MonkeyPatch, Path], None],
    kwargs: dict[str, int],
    error: type[AppendError],
    message: str,
    after: bytes,
) -> None:
    original = keep(session)
    inode = session.stat().st_ino
    setup(monkeypatch, session)
    with pytest.raises(error) as info:
        rewrite_atomically(session, NEW, **kwargs)
    monkeypatch.undo()
    assert message in str(info.value)
    assert original.assert_prefix_of(session) == after and session.stat().st_ino == inode
    assert _listing(session.parent) == {"s.jsonl"}  # neither temp file nor backup left


@pytest.mark.parametrize(
    ("make", "data", "error"),
    [
        pytest.param(lambda p: p, b"", ValueError, id="empty-data"),
        pytest.param(lambda p: p, NEW.rstrip(b"\n"), ValueError, id="no-final-newline"),
        pytest.param(lambda p: p.with_name("missing.jsonl"), NEW, CannotOpen, id="missing"),
        pytest.param(lambda p: p.parent, NEW, CannotOpen, id="directory"),
        pytest.param(_read_only, NEW, CannotOpen, id="read-only"),
    ],
)
def test_rewrite_refused(session: Path, make: Callable[[Path], Path], data: bytes, error: type[Exception]) -> None:
    original = keep(session)
    with pytest.raises(error):
        rewrite_atomically(make(session), data)
    assert original.assert_prefix_of(session) == BASE
    assert _listing(session.parent) == {"s.jsonl"}


def test_rewrite_waits_for_the_lock(session: Path, holder: subprocess.Popen[bytes]) -> None:
    original = keep(session)
    with pytest.raises(LockBusy):
        rewrite_atomically(session, NEW, lock_timeout=0.2)
    assert original.assert_prefix_of(session) == BASE and _listing(session.parent) == {"s.jsonl"}
