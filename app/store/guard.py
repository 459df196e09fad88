"""Warnings to show before pitree writes to a session: it changed very recently, or a running Pi has it.

A running Pi keeps its leaf in memory. It does not see an entry pitree appends, and its next message goes
under its own leaf, not under the one pitree moved to. These checks are heuristics and never block a write.
Process checks read Linux /proc and silently find nothing where it is absent or unreadable.

Pi does not keep its session file open (one `appendFileSync` per entry), and once it runs, its
`process.title = "pi"` overwrites the command line with just "pi". So besides open descriptors and command
lines that name the file, a Pi whose working directory is the project this session belongs to (the sessions
folder is named after the cwd) is reported as one that may have the session loaded.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from pitree.session.text import one_line

PI_NAMES = frozenset({"pi", "pi-coding-agent"})
OWN_WRITES = "own-writes.json"
_OWN_KEEP = 64
_own: dict[str, list[int]] = {}
_RUNTIME = re.compile(r"(node|nodejs|bun)[\d.]*")
_CONSEQUENCE = (
    "it keeps its own leaf in memory, so its next message will not follow the jump "
    "(quit it first, then `pi --session FILE`)"
)

SHOWN_MAX = 80  # another process's command line or folder, cut so a warning stays one readable line


@dataclass(frozen=True, slots=True)
class _Proc:
    pid: int
    argv: list[str]
    comm: str
    cwd: str | None


def _read_proc(pid_dir: Path) -> _Proc | None:
    try:
        raw = (pid_dir / "cmdline").read_bytes()
    except OSError:
        return None
    argv = [os.fsdecode(part) for part in raw.split(b"\0")]
    while argv and not argv[-1]:  # a rewritten title leaves NUL padding behind
        argv.pop()
    try:
        comm = (pid_dir / "comm").read_bytes().decode("utf-8", "replace").strip()
    except OSError:
        comm = ""
    try:
        cwd: str | None = os.readlink(pid_dir / "cwd")
    except OSError:
        cwd = None
    return _Proc(int(pid_dir.name), argv, comm, cwd)


def _is_pi(proc: _Proc) -> bool:
    if proc.comm in PI_NAMES:
        return True
    if not proc.argv:
        return False
    if os.path.basename(proc.argv[0]) in PI_NAMES:
        return True
    if not _RUNTIME.fullmatch(os.path.basename(proc.argv[0])):
        return False
    script = next((arg for arg in proc.argv[1:] if not arg.startswith("-")), "")
    return os.path.basename(script) in PI_NAMES or "pi-coding-agent" in script.split("/")


def _same_file(candidate: str, st: os.stat_result) -> bool:
    try:
        other = os.stat(candidate)
    except (OSError, ValueError):
        return False
    return (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)


def _holds_open(pid_dir: Path, target: str, st: os.stat_result) -> bool:
    fd_dir = pid_dir / "fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return False
    name = os.path.basename(target)
    for fd in fds:
        try:
            dest = os.readlink(fd_dir / fd)
        except OSError:
            continue
        if dest == target:
            return True
        # The same file under another name (bind mount, symlinked folder): compare inodes, but only
        # for a matching file name, so the scan does not stat every socket and pipe on the machine.
        if os.path.basename(dest.removesuffix(" (deleted)")) == name and _same_file(str(fd_dir / fd), st):
            return True
    return False


def _option(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):  # Pi's parser takes no "--name=value" form
            return argv[i + 1]
    return None


def _resolve(arg: str, cwd: str | None) -> str:
    arg = os.path.expanduser(arg)
    return arg if os.path.isabs(arg) or cwd is None else os.path.join(cwd, arg)


def _names_file(proc: _Proc, path: Path, st: os.stat_result) -> bool:
    """Pi was started with `--session` naming this file, by path or by a prefix of its uuid.

    Only `--session` counts: `--fork FILE` copies the file into a new session, and a file named in a
    prompt is only read."""
    session = _option(proc.argv, "--session")
    if not session:
        return False
    if "/" not in session and not session.endswith(".jsonl"):
        return path.stem.rsplit("_", 1)[-1].startswith(session)
    return _same_file(_resolve(session, proc.cwd), st)


def session_dir_name(cwd: str) -> str:
    """The folder Pi keeps a project's sessions in, named after its cwd (Pi's `getDefaultSessionDir`)."""
    return "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", cwd)) + "--"


def _works_here(proc: _Proc, path: Path) -> bool:
    """A Pi that may have this session loaded: started without naming another session, in this project."""
    if any(flag in proc.argv for flag in ("--session", "--no-session", "--fork")):
        return False
    session_dir = _option(proc.argv, "--session-dir")
    if session_dir is not None:
        return os.path.realpath(_resolve(session_dir, proc.cwd)) == os.path.realpath(path.parent)
    return proc.cwd is not None and session_dir_name(proc.cwd) == path.parent.name


def _process_warnings(path: Path, st: os.stat_result, proc_root: Path) -> list[str]:
    try:
        pids = sorted(int(name) for name in os.listdir(proc_root) if name.isdigit())
    except OSError:
        return []
    target = os.path.realpath(path)
    name = one_line(path.name, SHOWN_MAX)
    me = os.getpid()
    warnings = []
    for pid in pids:
        if pid == me:
            continue
        pid_dir = proc_root / str(pid)
        proc = _read_proc(pid_dir)
        if proc is None:
            continue
        pi = _is_pi(proc)
        if _holds_open(pid_dir, target, st):
            if pi:
                warnings.append(f"a running Pi (pid {pid}) has {name} open: {_CONSEQUENCE}")
            else:
                who = one_line(" ".join(proc.argv) or proc.comm or "?", SHOWN_MAX)
                warnings.append(f"process {pid} ({who}) has {name} open and may write to it too")
        elif pi and _names_file(proc, path, st):
            warnings.append(f"a running Pi (pid {pid}) was started on {name}: {_CONSEQUENCE}")
        elif pi and _works_here(proc, path):
            where = one_line(proc.cwd or "?", SHOWN_MAX)
            warnings.append(
                f"a running Pi (pid {pid}) works in {where}, the project of {name}; "
                f"if it has this session loaded, {_CONSEQUENCE}"
            )
    return warnings


def _signature(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def _own_file() -> Path | None:
    from pitree.store.tree_cache import cache_dir

    folder = cache_dir()
    return folder / OWN_WRITES if folder is not None else None


def note_own_write(path: Path | str) -> None:
    """Remember the file as pitree's own append left it, so the next write does not warn that it "was modified
    just now" because of pitree itself. Kept in memory and in pitree's cache folder (for the next command)."""
    try:
        st = os.stat(path)
    except OSError:
        return
    key = os.path.realpath(path)
    _own[key] = _signature(st)
    record = _own_file()
    if record is None:
        return
    import orjson

    try:
        try:
            saved = orjson.loads(record.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            saved = {}
        saved = saved if isinstance(saved, dict) else {}
        saved.pop(key, None)
        saved[key] = _own[key]
        saved = dict(list(saved.items())[-_OWN_KEEP:])
        record.parent.mkdir(parents=True, exist_ok=True)
        tmp = record.with_name(f"{OWN_WRITES}.{os.getpid()}.tmp")
        tmp.write_bytes(orjson.dumps(saved))
        os.replace(tmp, record)
    except OSError:
        pass  # only a hint: without it the next write warns once more


def _was_own_write(path: Path, st: os.stat_result) -> bool:
    key = os.path.realpath(path)
    if _own.get(key) == _signature(st):
        return True
    record = _own_file()
    if record is None:
        return False
    import orjson

    try:
        saved = orjson.loads(record.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(saved, dict) and saved.get(key) == _signature(st)


def write_warnings(
    path: Path | str,
    *,
    now: float | None = None,
    recent_seconds: float = 60,
    proc_root: Path | str = "/proc",
) -> list[str]:
    """One-line warnings to show before writing to `path`; empty when nothing suggests a risk.

    A missing or unreadable file gives no warning: the write itself reports that."""
    path = Path(path)
    try:
        st = os.stat(path)
    except OSError:
        return []
    warnings = []
    age = (time.time() if now is None else now) - st.st_mtime
    if age < recent_seconds and not _was_own_write(path, st):
        ago = "just now" if age < 1 else f"{int(age)} s ago"
        warnings.append(f"{one_line(path.name, SHOWN_MAX)} was modified {ago}: Pi may still be writing to it…")
    warnings.extend(_process_warnings(path, st, Path(proc_root)))
    return warnings
