"""Faults: Pi rewriting the file in place while pitree tails it, the file deleted and recreated, its folder
removed, the disk full on append (a failing write, and a real tiny tmpfs), and pitree itself SIGKILLed at
random points of an append, thirty times: the file always loads (in pitree and in Pi) with zero or one new entry.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.cli.main import main
from pitree.session.load import load_bytes
from pitree.widgets.app import PitreeApp
from pitree.widgets.tree_view import TreeView

from tests.hostile.helpers import until
from tests.pi.pirun import pi_node_modules
from tests.sessions import chain, to_bytes, user

PI_LOAD_MANY = Path(__file__).with_name("pi_load_many.mjs")
# Key order as Pi writes it: the version near the start of the file.
PI_V2_HEADER = {
    "type": "session",
    "version": 2,
    "id": "11111111-2222-3333-4444-555555555555",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/work/x",
}


def make_app(path: Path) -> PitreeApp:
    return PitreeApp(path, watch=True, config_overrides={"summarizer": "extractive"})


def append(path: Path, *entries: dict) -> None:
    with open(path, "ab") as fh:
        for e in entries:
            fh.write(orjson.dumps(e) + b"\n")


def rewrite_in_place(path: Path, data: bytes) -> None:
    """Pi's writeFileSync: truncate, then write, on the same inode (not atomic)."""
    with open(path, "r+b") as fh:
        fh.truncate(0)
        fh.write(data)


# ---- while tailing (real watcher) --------------------------------------------------------------------------


@pytest.mark.writes_session
async def test_rewrite_in_place_while_tailing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(40), head=PI_V2_HEADER))
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        append(path, *chain(10, prefix="x", start="e0000039"))
        await until(pilot, lambda: app.explorer.stree.entry_count == 50)
        app.query_one(TreeView).select_id("e0000005")
        # Someone rewrites the file shorter, in place; then it is appended to again.
        rewrite_in_place(path, to_bytes(chain(12), head=PI_V2_HEADER))
        await until(pilot, lambda: tree_of(app) is not None and tree_of(app).entry_count == 12)  # read again
        assert app.query_one(TreeView).cursor_node.id == "e0000005"  # the selection kept by id
        append(path, user("y0000001", "e0000011", "after the rewrite"))
        await until(pilot, lambda: tree_of(app).entry_count == 13 and tree_of(app).leaf.id == "y0000001")
        assert app.explorer.stree.version == 2
        # Pi opening it migrates v2 -> v3: with no role to rename, only the header's version changes, so the
        # file keeps its size and its last bytes. The tailer must still see it (it compares the first bytes too).
        migrated = path.read_bytes().replace(b'"version":2', b'"version":3', 1)
        assert len(migrated) == path.stat().st_size
        rewrite_in_place(path, migrated)
        await until(pilot, lambda: tree_of(app) is not None and tree_of(app).version == 3)
        assert [n.id for n in app.explorer.stree.nodes] == [n.id for n in load_bytes(migrated).nodes]


def tree_of(app: Any) -> Any:
    """The explorer's tree; None while a file rewritten or created is read again (its loading pane is shown)."""
    return app.explorer.stree


@pytest.mark.writes_session
async def test_deleted_recreated_and_folder_removed(tmp_path: Path) -> None:
    folder = tmp_path / "--work-x--"
    folder.mkdir()
    path = folder / "s.jsonl"
    path.write_bytes(to_bytes(chain(8)))
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        path.unlink()
        await until(pilot, lambda: "deleted" in app.explorer.status_bar.status.file_state)
        assert app.explorer.stree.entry_count == 8  # what was read stays on screen
        path.write_bytes(to_bytes(chain(3, prefix="r")))
        await until(pilot, lambda: tree_of(app) is not None and tree_of(app).get("r0000002") is not None)
        assert tree_of(app).entry_count == 3
        shutil.rmtree(folder)
        await until(pilot, lambda: "deleted" in app.explorer.status_bar.status.file_state)
        folder.mkdir()
        path.write_bytes(to_bytes(chain(5, prefix="z")))
        await until(pilot, lambda: tree_of(app) is not None and tree_of(app).leaf.id == "z0000004", timeout=30)
        assert tree_of(app).entry_count == 5
        append(path, user("z0000099", "z0000004"))
        await until(pilot, lambda: app.explorer.stree.entry_count == 6)  # and it keeps tailing the new file


# ---- disk full ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def disk_full_for(path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """os.write raises ENOSPC for writes to `path` (any descriptor on its inode); other writes go through."""
    real_write = os.write
    inode = path.stat().st_ino
    refused: list[int] = []

    def write(fd: int, data: bytes) -> int:  # type: ignore[override]
        try:
            same = os.fstat(fd).st_ino == inode
        except OSError:
            same = False
        if same:
            refused.append(len(data))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    try:
        yield refused
    finally:
        monkeypatch.setattr(os, "write", real_write)


def run_main(*args: str) -> tuple[int, str, str]:
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    out.flush()
    return code, out.buffer.getvalue().decode(), err.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "args",
    [
        ["label", "{f}", "e0000002", "keep", "--yes"],
        ["branch", "{f}", "--to", "e0000002", "--summary", "extractive", "--yes"],
        ["branch", "{f}", "--to", "e0000002", "--summary", "none", "--yes", "--json"],
    ],
    ids=["label", "branch-summary", "branch-marker"],
)
def test_disk_full_on_append_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(6)))
    before = path.read_bytes()
    with disk_full_for(path, monkeypatch) as refused:
        code, out, err = run_main(*[a.replace("{f}", str(path)) for a in args])
    assert refused, "the append never reached os.write"
    assert code == 1 and out == ""
    errors = [ln for ln in err.splitlines() if not ln.startswith("pitree: warning:")]
    assert len(errors) == 1 and "No space left on device" in errors[0], err
    assert "the file is unchanged" in errors[0]
    assert path.read_bytes() == before


async def test_disk_full_on_append_tui(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(6)))
    before = path.read_bytes()
    app = PitreeApp(path, watch=False, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        app.query_one(TreeView).select_id("e0000002")
        with disk_full_for(path, monkeypatch) as refused:
            await pilot.press("L")
            await pilot.pause(0.1)
            await pilot.press(*"keep", "enter")
            await until(pilot, lambda: bool(refused))
            await until(pilot, lambda: any("No space left" in str(n.message) for n in app._notifications))
        assert path.read_bytes() == before
        assert "e0000002" not in app.explorer.stree.labels


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, mounted for this test (root only, where mounting is allowed)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "full"
    mnt.mkdir()
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True)
    if out.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {out.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_disk_full_on_a_real_tmpfs(tiny_tmpfs: Path) -> None:
    path = tiny_tmpfs / "s.jsonl"
    path.write_bytes(to_bytes(chain(10)))
    filler = tiny_tmpfs / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    with contextlib.suppress(OSError):  # take every free block
        while os.write(fd, b"\0" * 4096):
            pass
    os.close(fd)
    before = path.read_bytes()
    label = "a long label " * 1200  # ~15 KB: more than the free part of the file's last block
    out = subprocess.run(
        [sys.executable, "-m", "pitree.cli.main", "label", str(path), "e0000003", label, "--yes"], capture_output=True
    )
    assert out.returncode == 1
    err = [ln for ln in out.stderr.decode().splitlines() if not ln.startswith("pitree: warning:")]
    assert len(err) == 1 and ("No space left on device" in err[0] or "short write" in err[0]), err
    assert "the file is as it was" in err[0] or "the file is unchanged" in err[0], err
    assert path.read_bytes() == before
    filler.unlink()
    out = subprocess.run([sys.executable, "-m", "pitree.cli.main", "label", str(path), "e0000003", "ok", "--yes"])
    assert out.returncode == 0 and load_bytes(path.read_bytes()).labels == {"e0000003": "ok"}


# ---- SIGKILL during an append ------------------------------------------------------------------------------

ROUNDS = 30


def command(i: int, path: Path) -> list[str]:
    if i % 3 == 0:
        return ["label", str(path), f"e{i % 10:07d}", f"label {i}", "--yes"]
    summary = "extractive" if i % 3 == 1 else "none"
    return ["branch", str(path), "--to", f"e{i % 10:07d}", "--summary", summary, "--yes"]


def test_sigkill_during_append_leaves_a_loadable_file(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    path.write_bytes(to_bytes(chain(10)))
    rng = random.Random(6)
    run = [sys.executable, "-m", "pitree.cli.main"]
    spans = []
    for i in range(3):  # how long one run takes: the median of a label and two branch runs, warm
        started = time.monotonic()
        subprocess.run([*run, *command(i, path)], check=True, capture_output=True)
        spans.append(time.monotonic() - started)
    span = statistics.median(spans)
    snapshots: list[Path] = []
    killed = completed = 0
    for i in range(ROUNDS):
        before = path.read_bytes()
        proc = subprocess.Popen([*run, *command(i, path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Every sixth round runs to its end, so a finished append is always among the outcomes; the others are
        # killed at a random point of the run, weighted to its end, where the append happens.
        limit = 60.0 if i % 6 == 5 else rng.uniform(0.3, 1.1) * span
        try:
            proc.wait(timeout=limit)
            completed += 1
        except subprocess.TimeoutExpired:
            proc.kill()  # SIGKILL: no cleanup of any kind
            proc.wait()
            killed += 1
        after = path.read_bytes()
        assert after.startswith(before), f"round {i}: existing bytes changed"
        extra = after[len(before) :]
        assert extra == b"" or (extra.endswith(b"\n") and extra.count(b"\n") == 1), f"round {i}: {extra[:200]!r}"
        if extra:
            assert isinstance(orjson.loads(extra), dict)
        tree = load_bytes(after)
        assert not tree.skipped and not tree.problems, (i, tree.skipped, tree.problems)
        snap = tmp_path / f"snap{i:02d}.jsonl"
        snap.write_bytes(after)
        snapshots.append(snap)
    assert killed >= 5 and completed >= 1, (killed, completed)  # both outcomes were exercised
    modules = pi_node_modules()
    if shutil.which("node") is None or modules is None:
        return
    out = subprocess.run(
        ["node", str(PI_LOAD_MANY), *map(str, snapshots)],
        capture_output=True,
        timeout=300,
        env={**os.environ, "PITREE_PI_NODE_MODULES": str(modules)},
    )
    assert out.returncode == 0, out.stderr.decode()
    for snap, pi in zip(snapshots, orjson.loads(out.stdout), strict=True):
        tree = load_bytes(snap.read_bytes())
        assert not pi["rewritten"], snap  # a v3 file Pi reads as it is
        assert pi["entries"] == tree.entry_count and pi["leafId"] == tree.leaf.id, snap
        assert pi["branch"] == [n.id for n in tree.active_path()], snap
