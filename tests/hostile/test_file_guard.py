"""The file guard itself (tests/file_guard.py): it must notice every change that is not an append by pitree,
in this process and in pitree subprocesses, and let appends and the backed-up migration through."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from pitree.store.append import append_line, rewrite_atomically
from pitree.store.session_file import EntryReader, load_session_fast, read_bytes
from pitree.store.tail import Tailer

from tests.file_guard import FileGuard
from tests.sessions import chain, to_bytes, user

pytestmark = pytest.mark.writes_session  # each test runs its own guard and changes files on purpose

LINE = orjson.dumps(user("n0000001", "e0000004", "new"))


def load(path: Path) -> None:
    tree, _ = load_session_fast(path, save_cache=False)
    EntryReader(path, tree).entries(tree.nodes[:2])


def poke(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[10] ^= 1
    path.write_bytes(bytes(data))


def raw_append(data: bytes) -> Callable[[Path], None]:
    def run(path: Path) -> None:
        with open(path, "ab") as fh:
            fh.write(data)

    return run


def pitree_append(path: Path) -> None:
    append_line(path, LINE, expect_size=path.stat().st_size)


def cli(*args: str) -> Callable[[Path], None]:
    def run(path: Path) -> None:
        argv = [sys.executable, "-m", "pitree.cli.main", args[0], str(path), *args[1:]]
        out = subprocess.run(argv, capture_output=True)
        assert out.returncode == 0, out.stderr.decode()

    return run


def both(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def run(path: Path) -> None:
        for step in steps:
            step(path)

    return run


def migrate(backup: bool) -> Callable[[Path], None]:
    def run(path: Path) -> None:
        rewrite_atomically(path, to_bytes(chain(3)), backup=backup)

    return run


@pytest.mark.parametrize(
    ("steps", "problem"),
    [
        pytest.param(load, None, id="read-unchanged"),
        pytest.param(both(load, poke), "although pitree only read it", id="read-then-changed"),
        pytest.param(both(lambda p: Tailer(p).poll(), poke), "although pitree only read it", id="tailed-then-changed"),
        pytest.param(both(read_bytes, raw_append(LINE + b"\n")), "although pitree only read it", id="read-then-grew"),
        pytest.param(pitree_append, None, id="pitree-append"),
        pytest.param(both(raw_append(b'{"torn'), pitree_append), None, id="pitree-append-closing-a-torn-line"),
        pytest.param(both(pitree_append, raw_append(b'{"half')), "do not end in a newline", id="append-then-torn"),
        pytest.param(both(pitree_append, raw_append(b"junk\n")), "not JSON", id="append-then-junk"),
        pytest.param(both(pitree_append, raw_append(b"[1]\n")), "not a JSON object", id="append-then-array"),
        pytest.param(both(pitree_append, poke), "first", id="append-then-old-bytes-changed"),
        pytest.param(both(pitree_append, lambda p: p.write_bytes(p.read_bytes()[:-5])), "", id="append-then-shrunk"),
        pytest.param(migrate(backup=True), None, id="migration-with-backup"),
        pytest.param(migrate(backup=False), "no .bak-*", id="migration-without-backup"),
        pytest.param(both(load, lambda p: p.unlink()), None, id="deleted"),
        pytest.param(cli("info", "--json"), None, id="subprocess-read"),
        pytest.param(both(cli("tree"), poke), "although pitree only read it", id="subprocess-read-then-changed"),
        pytest.param(cli("label", "e0000002", "x", "--yes"), None, id="subprocess-append"),
        pytest.param(
            both(cli("label", "e0000002", "x", "--yes"), raw_append(b"{")), "newline", id="subprocess-append-then-torn"
        ),
    ],
)
def test_guard(tmp_path: Path, steps: Callable[[Path], None], problem: str | None) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(5)))
    guard = FileGuard(tmp_path / "guard")
    (tmp_path / "guard").mkdir()
    env = guard.env()
    with pytest.MonkeyPatch.context() as mp:
        for key in ("PITREE_FILE_GUARD_LOG", "PYTHONPATH"):
            mp.setenv(key, env[key])
        with guard.active():
            steps(path)
    found = guard.violations()
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1 and problem in found[0], found


def test_a_file_pitree_never_opened_is_not_guarded(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(5)))
    guard = FileGuard(tmp_path)
    with guard.active():
        poke(path)
    assert guard.violations() == [] and not guard.records
