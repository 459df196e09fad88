"""Where oh-my-pi (npm `@oh-my-pi/pi-coding-agent` 18.x) keeps sessions and blobs, and its subagent transcripts.

Its rules (SPEC-pi1.md B, "Where files live"):
- config root `~/.omp` (`PI_CONFIG_DIR` renames the `.omp` part); a profile (`OMP_PROFILE`, else `PI_PROFILE`)
  lives in `<root>/profiles/<name>/agent`, else the agent dir is `<root>/agent`; `PI_CODING_AGENT_DIR` replaces it;
- sessions in `<agent>/sessions`, blobs in `<agent>/blobs`; with the default agent dir on Linux and macOS both
  move to `$XDG_DATA_HOME/omp/{sessions,blobs}` when `$XDG_DATA_HOME/omp` exists (`~/.local/share` when unset);
- `PI_CODING_AGENT_SESSION_DIR` replaces the sessions folder (flat, as Pi's);
- per-cwd folder: under home `-<rel>` (home itself `-`), under the temp dir `-tmp-<rel>`, else Pi's `--abs--`;
- a session's artifacts folder is its path without `.jsonl`: `<agentId>.jsonl` transcripts of its subagents
  (full sessions), nested the same way.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

_SEPS = re.compile(r"[/\\:]")
SUBAGENT_DEPTH = 8  # nesting followed below a session (omp nests subagents of subagents)


def _home(env: Mapping[str, str]) -> Path:
    home = env.get("HOME")
    return Path(home) if home else Path.home()


def _expand(path: str, env: Mapping[str, str]) -> Path:
    if path == "~" or path.startswith("~/"):
        return Path(str(_home(env)) + path[1:])
    return Path(path)


def config_root(env: Mapping[str, str] = os.environ) -> Path:
    return _home(env) / (env.get("PI_CONFIG_DIR") or ".omp")


def _default_agent(env: Mapping[str, str]) -> bool:
    return not env.get("PI_CODING_AGENT_DIR") and not (env.get("OMP_PROFILE") or env.get("PI_PROFILE"))


def agent_dir(env: Mapping[str, str] = os.environ) -> Path:
    explicit = env.get("PI_CODING_AGENT_DIR")
    if explicit:
        return _expand(explicit, env)
    profile = env.get("OMP_PROFILE") or env.get("PI_PROFILE")
    if profile:
        return config_root(env) / "profiles" / profile / "agent"
    return config_root(env) / "agent"


def _xdg_omp(env: Mapping[str, str]) -> Path | None:
    if sys.platform not in ("linux", "darwin") or not _default_agent(env):
        return None
    data = env.get("XDG_DATA_HOME")
    folder = (Path(data) if data else _home(env) / ".local" / "share") / "omp"
    return folder if folder.is_dir() else None


def sessions_dir(env: Mapping[str, str] = os.environ) -> Path:
    """oh-my-pi's sessions folder (without the per-cwd part)."""
    explicit = env.get("PI_CODING_AGENT_SESSION_DIR")
    if explicit:
        return _expand(explicit, env)
    xdg = _xdg_omp(env)
    return xdg / "sessions" if xdg is not None else agent_dir(env) / "sessions"


def blobs_dir(env: Mapping[str, str] = os.environ) -> Path:
    """oh-my-pi's content-addressed blob store (`<sha256>` files)."""
    xdg = _xdg_omp(env)
    return xdg / "blobs" if xdg is not None else agent_dir(env) / "blobs"


def cwd_folder(cwd: str, env: Mapping[str, str] = os.environ) -> str:
    """oh-my-pi's per-cwd folder name (`getDefaultSessionDirName`)."""
    resolved = os.path.realpath(cwd)
    for base, prefix in ((os.path.realpath(_home(env)), "-"), (os.path.realpath(tempfile.gettempdir()), "-tmp")):
        rel = os.path.relpath(resolved, base)
        if rel == ".":
            return prefix
        if not rel.startswith("..") and not os.path.isabs(rel):
            encoded = _SEPS.sub("-", rel)
            return f"{prefix}{encoded}" if prefix.endswith("-") else f"{prefix}-{encoded}"
    return f"--{_SEPS.sub('-', resolved.lstrip('/').lstrip(chr(92)))}--"  # Pi's form (catalog.cwd_folder_name)


def artifacts_dir(session: str | os.PathLike[str]) -> str:
    """The folder of a session's artifacts and subagent transcripts: its path without `.jsonl`."""
    path = os.fspath(session)
    return path[: -len(".jsonl")] if path.endswith(".jsonl") else path


def subagent_parent(path: str | os.PathLike[str]) -> str | None:
    """The session a transcript in an artifacts folder belongs to (the folder's path + `.jsonl`), or None when
    `path` is not in one. Only the name is looked at; the caller checks that the parent exists."""
    folder = os.path.dirname(os.fspath(path))
    return folder + ".jsonl" if folder else None


def find_subagents(session: str | os.PathLike[str], depth: int = SUBAGENT_DEPTH) -> list[str]:
    """Every `*.jsonl` transcript under the session's artifacts folder, nested ones too, sorted; symlinked
    folders are not entered."""
    found: list[str] = []
    stack = [(artifacts_dir(session), 0)]
    while stack:
        folder, level = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.name.endswith(".jsonl") and entry.is_file():
                    found.append(entry.path)
                    if level + 1 < depth:
                        stack.append((artifacts_dir(entry.path), level + 1))
            except OSError:
                continue
    return sorted(found)
