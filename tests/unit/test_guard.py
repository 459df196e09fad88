"""`store.guard.write_warnings`: a recent change and a running Pi are reported, nothing else is.

Process checks run against a fake /proc tree in tmp_path (pid dirs with cmdline, comm, cwd and fd links),
plus real checks with child processes holding the file open.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pitree.store.guard import session_dir_name, write_warnings

UUID = "1234abcd-0000-4000-8000-00000000abcd"
PROJECT = "/work/proj"
LEAF = "it keeps its own leaf in memory, so its next message will not follow the jump"


@dataclass
class FakeProc:
    argv: list[str]
    comm: str = ""
    cwd: str | None = None
    fds: list[str] = field(default_factory=list)  # link targets; "{file}" is the session file


@pytest.fixture
def session(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions" / session_dir_name(PROJECT)
    folder.mkdir(parents=True)
    path = folder / f"2026-01-01T00-00-00-000Z_{UUID}.jsonl"
    path.write_bytes(b'{"type":"session","version":3,"id":"x"}\n')
    os.utime(path, (1_000_000, 1_000_000))
    return path


def fake_proc(root: Path, procs: dict[int, FakeProc], session: Path) -> Path:
    root.mkdir(exist_ok=True)
    for name in ("self", "sys", "meminfo"):  # non-pid entries a real /proc has
        (root / name).mkdir(exist_ok=True)
    for pid, proc in procs.items():
        d = root / str(pid)
        (d / "fd").mkdir(parents=True)
        (d / "cmdline").write_bytes(b"".join(os.fsencode(a) + b"\0" for a in proc.argv))
        (d / "comm").write_text((proc.comm or os.path.basename(proc.argv[0] if proc.argv else "")) + "\n")
        if proc.cwd is not None:
            (d / "cwd").symlink_to(proc.cwd)
        for n, target in enumerate(proc.fds):
            (d / "fd" / str(n)).symlink_to(target.format(file=session, dir=session.parent))
    return root


def warnings_for(tmp_path: Path, session: Path, procs: dict[int, FakeProc]) -> list[str]:
    root = fake_proc(tmp_path / "proc", procs, session)
    return write_warnings(session, now=2_000_000, proc_root=root)


PI_CLI = "/usr/lib/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"


@pytest.mark.parametrize(
    ("procs", "expected"),
    [
        pytest.param({}, [], id="no-processes"),
        pytest.param(
            {101: FakeProc(["pi"], fds=["/dev/null", "{file}"])},
            [
                f"a running Pi (pid 101) has 2026-01-01T00-00-00-000Z_{UUID}.jsonl open: "
                f"{LEAF} (quit it first, then `pi --session FILE`)"
            ],
            id="pi-holds-fd",
        ),
        pytest.param(
            {102: FakeProc(["python3", "hold.py"], fds=["{file}"])},
            ["process 102 (python3 hold.py) has"],
            id="other-process-holds-fd",
        ),
        pytest.param(
            {103: FakeProc(["node", PI_CLI, "--session", "{file}"], cwd="/")},
            ["a running Pi (pid 103) was started on", LEAF],
            id="node-cli-with-session-path",
        ),
        pytest.param(
            {
                104: FakeProc(
                    [
                        "node",
                        "--max-old-space-size=4096",
                        "/usr/bin/pi",
                        "--session",
                        f"2026-01-01T00-00-00-000Z_{UUID}.jsonl",
                    ],
                    cwd="{dir}",
                )
            },
            ["a running Pi (pid 104) was started on"],
            id="relative-session-path",
        ),
        pytest.param(
            {105: FakeProc(["pi", "--session", "1234ab"], cwd="/elsewhere")},
            ["a running Pi (pid 105) was started on"],
            id="session-uuid-prefix",
        ),
        pytest.param(
            {106: FakeProc(["pi"], comm="pi", cwd=PROJECT)},
            [f"a running Pi (pid 106) works in {PROJECT}, the project of", LEAF],
            id="pi-title-in-project",
        ),
        pytest.param(
            {107: FakeProc(["bun", PI_CLI, "-c"], cwd=PROJECT)},
            ["a running Pi (pid 107) works in"],
            id="bun-continue-in-project",
        ),
        pytest.param(
            {108: FakeProc(["pi", "--session-dir", "{dir}"], cwd="/elsewhere")},
            ["a running Pi (pid 108) works in /elsewhere"],
            id="session-dir-option",
        ),
        pytest.param(
            {117: FakeProc(["node"], comm="pi", cwd=PROJECT)},
            ["a running Pi (pid 117) works in"],
            id="known-by-comm-only",
        ),
        pytest.param({109: FakeProc(["pi"], cwd="/work/other")}, [], id="pi-in-other-project"),
        pytest.param({118: FakeProc(["pi", "--fork", "{file}"], cwd=PROJECT)}, [], id="pi-forked-copy"),
        pytest.param(
            {110: FakeProc(["pi", "--session", "/tmp/other.jsonl"], cwd=PROJECT)}, [], id="pi-on-another-session"
        ),
        pytest.param({111: FakeProc(["pi", "--no-session"], cwd=PROJECT)}, [], id="pi-no-session"),
        pytest.param({112: FakeProc(["pi", "--session-dir", "/tmp/else"], cwd=PROJECT)}, [], id="pi-other-session-dir"),
        pytest.param({113: FakeProc(["vim", "{file}"], cwd=PROJECT)}, [], id="editor-names-file-not-open"),
        pytest.param({114: FakeProc(["node", "server.js"], cwd=PROJECT)}, [], id="other-node-in-project"),
        pytest.param({115: FakeProc(["pip", "install", "x"], cwd=PROJECT)}, [], id="pip-is-not-pi"),
        pytest.param({116: FakeProc([], comm="kworker")}, [], id="kernel-thread-empty-cmdline"),
    ],
)
def test_process_warnings(tmp_path: Path, session: Path, procs: dict[int, FakeProc], expected: list[str]) -> None:
    for proc in procs.values():
        proc.argv = [a.format(file=session, dir=session.parent) for a in proc.argv]
        if proc.cwd is not None:
            proc.cwd = proc.cwd.format(dir=session.parent)
    warnings = warnings_for(tmp_path, session, procs)
    if not expected:
        assert warnings == []
        return
    assert len(warnings) == 1, warnings
    for part in expected:
        assert part in warnings[0]


def test_same_name_other_file_is_not_a_holder(tmp_path: Path, session: Path) -> None:
    other = tmp_path / "copy" / session.name
    other.parent.mkdir()
    other.write_bytes(session.read_bytes())
    assert warnings_for(tmp_path, session, {120: FakeProc(["pi"], fds=[str(other)], cwd="/x")}) == []


def test_holder_through_another_path(tmp_path: Path, session: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(session.parent)
    warnings = warnings_for(tmp_path, session, {121: FakeProc(["pi"], fds=[str(alias / session.name)])})
    assert len(warnings) == 1 and "pid 121" in warnings[0]


def test_one_warning_per_process_and_all_processes(tmp_path: Path, session: Path) -> None:
    procs = {
        130: FakeProc(["pi", "--session", "{file}"], cwd=PROJECT, fds=["{file}"]),
        131: FakeProc(["pi"], cwd=PROJECT),
    }
    for proc in procs.values():
        proc.argv = [a.format(file=session) for a in proc.argv]
    warnings = warnings_for(tmp_path, session, procs)
    assert [w.split(")")[0] for w in warnings] == ["a running Pi (pid 130", "a running Pi (pid 131"]
    assert "has" in warnings[0] and "works in" in warnings[1]


def test_own_process_is_not_reported(tmp_path: Path, session: Path) -> None:
    assert warnings_for(tmp_path, session, {os.getpid(): FakeProc(["pi"], fds=["{file}"])}) == []


def test_untrusted_command_line_stays_one_printable_line(tmp_path: Path, session: Path) -> None:
    warnings = warnings_for(tmp_path, session, {140: FakeProc(["evil\x1b[31m\nname"], fds=["{file}"])})
    assert len(warnings) == 1 and warnings[0].isprintable() and "\x1b" not in warnings[0]


def test_broken_proc_entries_are_skipped(tmp_path: Path, session: Path) -> None:
    root = fake_proc(tmp_path / "proc", {150: FakeProc(["pi"], fds=["{file}"])}, session)
    (root / "151").mkdir()  # exited between listdir and read: no cmdline
    (root / "152").mkdir()
    (root / "152" / "cmdline").write_bytes(b"pi\0")
    (root / "152" / "fd").write_text("not a directory")
    warnings = write_warnings(session, now=2_000_000, proc_root=root)
    assert len(warnings) == 1 and "pid 150" in warnings[0]


@pytest.mark.parametrize("missing", ["absent", "file"])
def test_no_proc_is_silent(tmp_path: Path, session: Path, missing: str) -> None:
    root = tmp_path / "proc"
    if missing == "file":
        root.write_text("")
    assert write_warnings(session, now=2_000_000, proc_root=root) == []


@pytest.mark.parametrize(
    ("age", "recent", "expected"),
    [
        pytest.param(5, 60, "was modified 5 s ago: Pi may still be writing to it…", id="5s"),
        pytest.param(0.2, 60, "was modified just now: Pi may still be writing to it…", id="just-now"),
        pytest.param(-3, 60, "was modified just now", id="clock-skew-future"),
        pytest.param(59.5, 60, "was modified 59 s ago", id="edge-inside"),
        pytest.param(60, 60, None, id="edge-outside"),
        pytest.param(120, 60, None, id="old"),
        pytest.param(120, 300, "was modified 120 s ago", id="longer-window"),
    ],
)
def test_recent_change(tmp_path: Path, session: Path, age: float, recent: float, expected: str | None) -> None:
    empty = fake_proc(tmp_path / "proc", {}, session)
    warnings = write_warnings(session, now=1_000_000 + age, recent_seconds=recent, proc_root=empty)
    if expected is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and warnings[0].startswith(session.name) and expected in warnings[0]


def test_missing_file_gives_no_warning(tmp_path: Path) -> None:
    assert write_warnings(tmp_path / "gone.jsonl", proc_root=tmp_path) == []


def test_default_clock(session: Path, tmp_path: Path) -> None:
    empty = fake_proc(tmp_path / "proc", {}, session)
    assert write_warnings(session, proc_root=empty) == []
    os.utime(session)
    assert "Pi may still be writing" in write_warnings(session, proc_root=empty)[0]


# --- real processes -------------------------------------------------------------------------------------

linux_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux /proc")


@pytest.fixture
def spawn() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait(timeout=10)


def start(procs: list[subprocess.Popen[bytes]], argv: list[str], cwd: Path | None = None) -> int:
    """Start a child that says "open" once ready, then waits until killed."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd)
    procs.append(proc)
    assert proc.stdout is not None and proc.stdout.readline() == b"open\n"
    return proc.pid


@linux_proc
def test_real_process_holding_the_file(session: Path, spawn: list[subprocess.Popen[bytes]]) -> None:
    code = "import sys; f = open(sys.argv[1], 'rb'); print('open', flush=True); sys.stdin.readline()"
    pid = start(spawn, [sys.executable, "-c", code, str(session)])
    mine = [w for w in write_warnings(session, now=2_000_000) if w.startswith(f"process {pid} (")]
    assert len(mine) == 1 and f"has {session.name} open" in mine[0]
    spawn[0].kill()
    spawn[0].wait(timeout=10)
    assert not [w for w in write_warnings(session, now=2_000_000) if f"process {pid} " in w]


NODE_PI = (
    "process.title = 'pi';\n"  # what Pi's cli.js does first: /proc then shows only "pi"
    "const fs = require('fs');\n"
    "if (process.argv[2]) globalThis.keep = fs.openSync(process.argv[2], 'r');\n"
    "process.stdout.write('open\\n');\n"
    "process.stdin.on('data', () => {});\n"
)


@linux_proc
@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
@pytest.mark.parametrize("holds", [True, False], ids=["holds-open", "in-project"])
def test_real_node_titled_pi(tmp_path: Path, spawn: list[subprocess.Popen[bytes]], holds: bool) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    folder = tmp_path / "sessions" / session_dir_name(str(project))
    folder.mkdir(parents=True)
    path = folder / f"2026-01-01T00-00-00-000Z_{UUID}.jsonl"
    path.write_bytes(b'{"type":"session"}\n')
    script = tmp_path / "cli.js"
    script.write_text(NODE_PI)
    node = shutil.which("node")
    assert node is not None
    pid = start(spawn, [node, str(script), *([str(path)] if holds else [])], cwd=project)
    deadline = time.monotonic() + 10
    mine: list[str] = []
    while time.monotonic() < deadline and not mine:  # the title is set before "open"; poll anyway
        mine = [w for w in write_warnings(path, now=time.time() + 3600) if f"(pid {pid})" in w]
    assert len(mine) == 1
    assert ("has " if holds else "works in ") in mine[0] and LEAF in mine[0]


def test_pitrees_own_append_does_not_warn_but_a_later_write_does(
    tmp_path: Path, session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pitree.store import guard
    from pitree.store.append import append_line

    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    append_line(session, b'{"type":"custom","id":"a1","parentId":null}', expect_size=session.stat().st_size)
    now = session.stat().st_mtime + 1
    assert write_warnings(session, now=now, proc_root=tmp_path / "noproc") == []
    guard._own.clear()  # the next pitree process: the record in the cache folder still knows
    assert write_warnings(session, now=now, proc_root=tmp_path / "noproc") == []
    with session.open("ab") as f:  # Pi appends after pitree
        f.write(b'{"type":"custom","id":"a2","parentId":"a1"}\n')
    [warning] = write_warnings(session, now=session.stat().st_mtime + 1, proc_root=tmp_path / "noproc")
    assert "was modified 1 s ago" in warning
