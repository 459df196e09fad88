"""`store.tail.Tailer`: complete lines only and exactly once, through torn lines, shrinks, in-place rewrites,
replaced inodes, deletes, late creation and read errors, never writing and never keeping the file open.

Each case is a script of file operations and the `read_initial`/`poll` results expected after them.
"""

from __future__ import annotations

import builtins
import os
from pathlib import Path
from typing import Any

import pytest
from pitree.store import tail as tail_mod
from pitree.store.tail import FINGERPRINT, TailChunk, Tailer, TailEvent

Step = tuple[Any, ...]


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:  # one write per call, like Pi's appendFileSync
        fh.write(data)


def _in_place(path: Path, data: bytes) -> None:
    """Rewrite keeping the inode, the way Pi migrates an old file (writeFileSync truncates and writes)."""
    with open(path, "r+b") as fh:
        fh.write(data)
        fh.truncate()


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _recreate(path: Path, data: bytes) -> None:
    path.unlink()
    path.write_bytes(data)


OPS = {"append": _append, "in_place": _in_place, "replace": _replace, "recreate": _recreate}

BIG = b'{"type":"message","text":"' + b"x" * (5 << 20) + b'"}\n'
THIRD = len(BIG) // 3

CASES = [
    pytest.param(
        b"a\n",
        [("initial", b"a\n"), ("append", b"b\n"), ("poll", "append", b"b\n", 2), ("poll", "unchanged")],
        id="append",
    ),
    pytest.param(
        b"a\n",
        [
            ("initial", b"a\n"),
            ("append", b"b\n"),
            ("append", b"c\n"),
            ("append", b"d\n"),
            ("poll", "append", b"b\nc\nd\n", 2),
            ("append", b"e\n"),
            ("poll", "append", b"e\n", 8),
        ],
        id="several-appends-one-poll",
    ),
    pytest.param(
        b"a\n",
        [
            ("initial", b"a\n"),
            ("append", b'{"x"'),
            ("poll", "waiting"),
            ("poll", "waiting"),
            ("append", b":1}"),
            ("poll", "waiting"),
            ("append", b"\n"),
            ("poll", "append", b'{"x":1}\n', 2),
            ("poll", "unchanged"),
        ],
        id="torn-line-completed-later",
    ),
    pytest.param(
        b"a\n",
        [
            ("initial", b"a\n"),
            ("append", b"bb"),
            ("poll", "waiting"),
            ("append", b"b\ncc"),
            ("poll", "append", b"bbb\n", 2),
            ("append", b"c\n"),
            ("poll", "append", b"ccc\n", 6),
        ],
        id="completion-with-next-partial",
    ),
    pytest.param(
        b'a\n{"torn',
        [("initial", b"a\n", {"held": 6}), ("append", b'"}\n'), ("poll", "append", b'{"torn"}\n', 2)],
        id="torn-last-line-at-load",
    ),
    pytest.param(
        b"no newline yet",
        [("initial", b"", {"held": 14}), ("append", b"\n"), ("poll", "append", b"no newline yet\n", 0)],
        id="only-a-partial-line-at-load",
    ),
    pytest.param(
        b"",
        [("initial", b""), ("poll", "unchanged"), ("append", b"h\n"), ("poll", "append", b"h\n", 0)],
        id="empty-file",
    ),
    pytest.param(
        b"a\nb\n",
        [("initial", b"a\nb\n"), ("in_place", b"a\n"), ("poll", "reset"), ("initial", b"a\n")],
        id="shrink-resets",
    ),
    pytest.param(
        b"a\n",
        [
            ("initial", b"a\n"),
            ("append", b"bbb"),
            ("poll", "waiting"),
            ("in_place", b"a\nb"),
            ("poll", "reset"),
        ],
        id="shrink-into-held-partial-resets",
    ),
    pytest.param(
        b"a\nb\n",
        [
            ("initial", b"a\nb\n"),
            ("replace", b"a\nb\nc\n"),  # same prefix, bigger: only the inode tells
            ("poll", "reset"),
            ("poll", "append", b"a\nb\nc\n", 0),  # after a reset the tailer starts again at byte 0
        ],
        id="replaced-by-new-inode-resets",
    ),
    pytest.param(
        b'{"id":"aaaa"}\n',
        [("initial", b'{"id":"aaaa"}\n'), ("in_place", b'{"id":"bbbb"}\n'), ("poll", "reset")],
        id="same-size-rewrite-resets",
    ),
    pytest.param(
        b'{"id":"aaaa"}\n',
        [("initial", b'{"id":"aaaa"}\n'), ("in_place", b'{"id":"bbbb"}\n{"id":"c"}\n'), ("poll", "reset")],
        id="bigger-rewrite-resets",
    ),
    pytest.param(
        b"a\n",
        [("initial", b"a\n"), ("in_place", b"a\nb\n"), ("poll", "append", b"b\n", 2)],
        id="rewrite-keeping-the-bytes-is-an-append",
    ),
    pytest.param(
        b"x" * 200 + b"\n",
        [("initial", b"x" * 200 + b"\n"), ("in_place", b"x" * 99 + b"y" + b"x" * 100 + b"\n"), ("poll", "unchanged")],
        id="change-between-head-and-fingerprint-is-not-seen",  # the documented limit of two 64-byte samples
    ),
    pytest.param(
        b"x" * 100 + b"\n",
        [("initial", b"x" * 100 + b"\n"), ("in_place", b"y" + b"x" * 99 + b"\n"), ("poll", "reset")],
        id="same-size-rewrite-of-the-first-bytes-resets",  # Pi's v2 -> v3 migration: only the header's version
    ),
    pytest.param(
        b'{"id":"a"}\n',
        [("initial", b'{"id":"a"}\n'), ("recreate", b'{"id":"b"}\n{"id":"c"}\n'), ("poll", "reset")],
        id="delete-and-recreate-between-polls-resets",  # even when the inode number is reused
    ),
    pytest.param(
        b"a\n",
        [
            ("initial", b"a\n"),
            ("delete",),
            ("poll", "missing"),
            ("poll", "missing"),
            ("create", b"a\n"),
            ("poll", "reset"),
            ("initial", b"a\n"),
            ("poll", "unchanged"),
        ],
        id="delete-missing-recreate-resets",
    ),
    pytest.param(
        None,
        [
            ("poll", "missing"),
            ("poll", "missing"),
            ("create", b"h\nu\n"),
            ("poll", "created"),
            ("initial", b"h\nu\n"),
            ("append", b"a\n"),
            ("poll", "append", b"a\n", 4),
        ],
        id="not-created-yet-then-created",
    ),
    pytest.param(
        None,
        [
            ("initial", b"", {"missing": True}),
            ("create", b"h\n"),
            ("poll", "created"),
            ("poll", "append", b"h\n", 0),
        ],
        id="read-initial-of-missing-file",
    ),
    pytest.param(
        None,
        [("create", b"h\n"), ("initial", b"h\n"), ("poll", "unchanged")],
        id="created-before-first-read-is-just-read",
    ),
    pytest.param(
        b"a\n",
        [("poll", "append", b"a\n", 0), ("poll", "unchanged")],
        id="poll-without-read-initial-starts-at-zero",
    ),
    pytest.param(
        b"a\r\n",
        [
            ("initial", b"a\r\n"),
            ("append", b"b\r\n"),
            ("poll", "append", b"b\r\n", 3),
            ("append", b"c\r"),
            ("poll", "waiting"),
            ("append", b"\n"),
            ("poll", "append", b"c\r\n", 6),
        ],
        id="crlf",
    ),
    pytest.param(
        b"h\n",
        [
            ("initial", b"h\n"),
            ("append", BIG[:THIRD]),
            ("poll", "waiting"),
            ("append", BIG[THIRD : 2 * THIRD]),
            ("poll", "waiting"),
            ("append", BIG[2 * THIRD :]),
            ("poll", "append", BIG, 2),
            ("poll", "unchanged"),
        ],
        id="5MB-line-in-3-writes",
    ),
    pytest.param(
        b"ab\ncd\nef\ng",
        [
            ("initial", b"ab\n", {"max_bytes": 4, "held": 1}),
            ("poll", "append", b"cd\nef\n", 3),
            ("poll", "waiting"),
        ],
        id="max-bytes-then-poll-continues",
    ),
]


def _check_event(event: TailEvent, step: Step) -> None:
    kind = step[1]
    assert event.kind == kind, (event.kind, event.message)
    if kind == "append":
        assert (event.data, event.offset) == (step[2], step[3])
    else:
        assert event.data == b""


def _check_chunk(chunk: TailChunk, step: Step) -> None:
    opts = step[2] if len(step) > 2 else {}
    assert chunk.data == step[1]
    assert chunk.held == opts.get("held", 0)
    assert chunk.missing == opts.get("missing", False)
    assert chunk.message == ""


def _open_fds(path: Path) -> list[str]:
    fd_dir = Path("/proc/self/fd")
    found = []
    for fd in fd_dir.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(str(path)):
            found.append(target)
    return found


@pytest.mark.parametrize(("start", "steps"), CASES)
def test_tailer(tmp_path: Path, start: bytes | None, steps: list[Step]) -> None:
    path = tmp_path / "s.jsonl"
    if start is not None:
        path.write_bytes(start)
    tailer = Tailer(path)
    expected_bytes = start
    for step in steps:
        op = step[0]
        if op == "poll":
            _check_event(tailer.poll(), step)
        elif op == "initial":
            opts = step[2] if len(step) > 2 else {}
            _check_chunk(tailer.read_initial(max_bytes=opts.get("max_bytes")), step)
        elif op == "delete":
            path.unlink()
            expected_bytes = None
        elif op == "create":
            path.write_bytes(step[1])
            expected_bytes = step[1]
        else:
            OPS[op](path, step[1])
            expected_bytes = (expected_bytes or b"") + step[1] if op == "append" else step[1]
        # The tailer never writes and never keeps the file open.
        assert (path.read_bytes() if path.exists() else None) == expected_bytes
        if Path("/proc/self/fd").is_dir():
            assert _open_fds(path) == []


def test_every_byte_is_returned_exactly_once(tmp_path: Path) -> None:
    """Lines written in pieces at every split point come back whole, once, in order, at their offsets."""
    lines = [b'{"i":%d,"t":"%s"}\n' % (i, b"y" * (i * 7 % 23)) for i in range(40)]
    data = b"".join(lines)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    tailer = Tailer(path)
    tailer.read_initial()
    got = bytearray()
    pos = 0
    step = 1
    while pos < len(data):
        _append(path, data[pos : pos + step])
        pos += step
        step = step % 13 + 1
        event = tailer.poll()
        if event.kind == "append":
            assert event.offset == len(got)
            assert event.data.endswith(b"\n")
            got += event.data
        else:
            assert event.kind == "waiting"
    assert bytes(got) == data
    assert tailer.poll().kind == "unchanged"


def test_state_after_read_initial(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"a\nb\npartial")
    tailer = Tailer(path)
    chunk = tailer.read_initial()
    st = path.stat()
    assert (chunk.end, chunk.size, chunk.held) == (4, st.st_size, 7)
    assert (tailer.offset, tailer.size, tailer.held, tailer.inode) == (
        4,
        st.st_size,
        7,
        (st.st_ino, st.st_dev),
    )


def test_reset_clears_state(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"a\nb\n")
    tailer = Tailer(path)
    tailer.read_initial()
    _in_place(path, b"c\n")
    assert tailer.poll().kind == "reset"
    assert (tailer.offset, tailer.held, tailer.inode) == (0, 0, None)


@pytest.mark.parametrize(
    ("content", "offset", "appended", "expected"),
    [
        (b"a\nb\n", 2, b"", TailEvent("append", b"b\n", 2)),
        (b"a\nb\n", 4, b"c\n", TailEvent("append", b"c\n", 4)),
        (b"a\n", 9, b"", TailEvent("reset")),  # the caller's offset is past the end: not this file
    ],
)
def test_resume_from_offset(tmp_path: Path, content: bytes, offset: int, appended: bytes, expected: TailEvent) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    tailer = Tailer(path, offset=offset)
    if appended:
        _append(path, appended)
    assert tailer.poll() == expected


def test_resume_from_offset_notices_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"id":"aaaa"}\n')
    tailer = Tailer(path, offset=14)
    _in_place(path, b'{"id":"bbbb"}\n{"id":"cccc"}\n')
    assert tailer.poll().kind == "reset"


def test_huge_line_in_pieces_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 20 MB line in 40 pieces: each poll reads the new bytes (and the fingerprint), not what is held."""
    total_read = 0

    class Counting:
        def __init__(self, fh: Any) -> None:
            self._fh = fh

        def read(self, n: int = -1) -> bytes:
            nonlocal total_read
            data: bytes = self._fh.read(n)
            total_read += len(data)
            return data

        def __getattr__(self, name: str) -> Any:
            return getattr(self._fh, name)

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self._fh.close()

    monkeypatch.setattr(tail_mod, "open", lambda *a, **k: Counting(builtins.open(*a, **k)), raising=False)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"h\n")
    tailer = Tailer(path)
    tailer.read_initial()
    line = b"z" * (20 << 20) + b"\n"
    piece = len(line) // 40 + 1
    events = []
    for start in range(0, len(line), piece):
        _append(path, line[start : start + piece])
        events.append(tailer.poll())
    assert [e.kind for e in events] == ["waiting"] * (len(events) - 1) + ["append"]
    assert events[-1].data == line
    assert total_read <= 2 + len(line) + 2 * FINGERPRINT * len(events)  # the last bytes and the first


@pytest.mark.parametrize(
    "exc",
    [
        PermissionError(13, "Permission denied"),
        IsADirectoryError(21, "Is a directory"),
        OSError(5, "I/O error"),
    ],
)
def test_read_errors_are_events_and_keep_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: OSError) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"a\n")
    tailer = Tailer(path)
    tailer.read_initial()
    _append(path, b"b\n")

    def refuse(*_a: object, **_k: object) -> None:
        raise exc

    monkeypatch.setattr(tail_mod, "open", refuse, raising=False)
    event = tailer.poll()
    assert (event.kind, event.message) == ("error", exc.strerror)
    chunk = tailer.read_initial()
    assert chunk.message == exc.strerror and chunk.data == b""
    monkeypatch.undo()
    assert tailer.poll() == TailEvent("append", b"a\nb\n", 0)  # the failed read_initial started over


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_real_permission_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"a\n")
    tailer = Tailer(path)
    tailer.read_initial()
    _append(path, b"b\n")
    path.chmod(0)
    try:
        event = tailer.poll()
        assert event.kind == "error" and event.message
    finally:
        path.chmod(0o600)
    assert tailer.poll() == TailEvent("append", b"b\n", 2)


def test_directory_in_place_of_the_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.mkdir()
    event = Tailer(path).poll()
    assert event.kind == "error" and event.message


def test_missing_parent_folder_is_missing(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    for path in (tmp_path / "nope" / "s.jsonl", tmp_path / "file" / "s.jsonl"):
        assert Tailer(path).poll().kind == "missing"
