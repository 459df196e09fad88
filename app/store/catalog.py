"""Where Pi keeps its sessions on disk, and finding the session files there.

Pi 0.73's rules (config.js `getAgentDir`/`getSessionsDir`, session-manager.js `getDefaultSessionDir`, `listAll`):
the root is `$PI_CODING_AGENT_DIR/sessions` (a leading `~` expanded), else `~/.pi/agent/sessions`; each cwd has
one folder `--<cwd without its leading / or \\, then / \\ : each replaced by ->--` holding `<time>_<uuid>.jsonl`.
An explicit session folder (`--session-dir DIR`, or Pi's `PI_CODING_AGENT_SESSION_DIR`) replaces the root; Pi
writes there flat, pitree scans it and one level of subfolders. Like Pi's `listAll`, symlinked subfolders are not
entered and nothing deeper than one level is read, so a session root inside a huge tree stays cheap.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from pitree.session.dialect_omp import SLOT_BYTES
from pitree.store.omp_paths import find_subagents
from pitree.store.omp_paths import sessions_dir as omp_sessions_dir

HEADER_MAX = 64 * 1024  # a header line longer than this is not one Pi wrote


def _expand_tilde(path: str) -> str:
    # Pi's expandTildePath: only a bare `~` or `~/…`, never `~user`.
    if path == "~":
        return str(Path.home())
    if path.startswith("~/"):
        return str(Path.home()) + path[1:]
    return path


def sessions_root(session_dir: str | os.PathLike[str] | None = None, env: Mapping[str, str] = os.environ) -> Path:
    """The folder to scan: `session_dir`, else `PI_CODING_AGENT_SESSION_DIR`, else the agent dir's `sessions`."""
    if session_dir is not None and str(session_dir):
        return Path(_expand_tilde(os.fspath(session_dir)))
    explicit = env.get("PI_CODING_AGENT_SESSION_DIR")
    if explicit:
        return Path(_expand_tilde(explicit))
    agent = env.get("PI_CODING_AGENT_DIR")
    if agent:
        return Path(_expand_tilde(agent)) / "sessions"
    return Path.home() / ".pi" / "agent" / "sessions"


def session_roots(
    session_dir: str | os.PathLike[str] | None = None, env: Mapping[str, str] = os.environ
) -> list[tuple[Path, str]]:
    """The folders to scan and the per-cwd naming each uses ("pi" or "omp"): `session_dir` alone when given,
    else Pi's (`sessions_root`) and oh-my-pi's (`omp_paths.sessions_dir`), once when they are the same."""
    pi = sessions_root(session_dir, env)
    if session_dir is not None and str(session_dir):
        return [(pi, "pi")]
    omp = omp_sessions_dir(env)
    same = os.path.abspath(omp) == os.path.abspath(pi)
    return [(pi, "pi")] if same else [(pi, "pi"), (omp, "omp")]


def is_default_layout(session_dir: str | os.PathLike[str] | None = None, env: Mapping[str, str] = os.environ) -> bool:
    """True when sessions sit in per-cwd folders (no explicit session folder given)."""
    return not (session_dir is not None and str(session_dir)) and not env.get("PI_CODING_AGENT_SESSION_DIR")


_LEADING_SEP = re.compile(r"^[/\\]")
_SEPS = re.compile(r"[/\\:]")


def cwd_folder_name(cwd: str) -> str:
    """Pi's folder name for a cwd: `/home/me/x` -> `--home-me-x--`."""
    return f"--{_SEPS.sub('-', _LEADING_SEP.sub('', cwd))}--"


def find_session_files(root: Path) -> list[Path]:
    """Every `*.jsonl` file in `root` and in its direct (non-symlinked) subfolders, sorted; unreadable parts skipped."""
    return [Path(p) for p in find_session_paths(root)]


def find_session_paths(root: str | os.PathLike[str]) -> list[str]:
    """`find_session_files` as plain strings (sorted as strings): no pathlib cost for a warm list of thousands.

    A folder beside a session with its name less `.jsonl` is oh-my-pi's artifacts folder: the subagent
    transcripts in it (nested ones too) are listed, and it is not taken for a folder of sessions."""
    found: list[str] = []
    subdirs: list[str] = []
    try:
        with os.scandir(root) as it:
            for entry in it:
                try:
                    if entry.name.endswith(".jsonl") and entry.is_file():
                        found.append(entry.path)
                    elif entry.is_dir(follow_symlinks=False):
                        subdirs.append(entry.path)
                except OSError:
                    continue
    except OSError:
        return []
    sessions = set(found)
    artifacts = [d for d in subdirs if d + ".jsonl" in sessions]
    for sub in subdirs:
        if sub + ".jsonl" in sessions:
            continue
        inner: list[str] = []
        folders: list[str] = []
        try:
            with os.scandir(sub) as it:
                for entry in it:
                    try:
                        if entry.name.endswith(".jsonl") and entry.is_file():
                            inner.append(entry.path)
                        elif entry.is_dir(follow_symlinks=False):
                            folders.append(entry.path)
                    except OSError:
                        continue
        except OSError:
            continue
        found.extend(inner)
        names = set(inner)
        artifacts.extend(d for d in folders if d + ".jsonl" in names)
    for folder in artifacts:
        found.extend(find_subagents(folder + ".jsonl"))
    found.sort()
    return found


def stat_files(files: list[Path]) -> dict[Path, os.stat_result]:
    """`os.stat` of each file that still exists and is a regular file (errors skipped)."""
    out: dict[Path, os.stat_result] = {}
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if (st.st_mode & 0o170000) == 0o100000:
            out[path] = st
    return out


def read_header(path: Path) -> dict[str, Any] | None:
    """The session header of `path` (first line, `type: session` with a string id), or None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEADER_MAX)
    except OSError:
        return None
    line, _, rest = head.partition(b"\n")
    if len(line) + 1 == SLOT_BYTES and line.startswith(b'{"type":"title"'):
        line = rest.split(b"\n", 1)[0]  # oh-my-pi's title slot: the header is line 2
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str):
        return obj
    return None
