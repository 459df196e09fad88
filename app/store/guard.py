"""Warnings before pitree writes: Pi may still be writing the session, or a running `pi` holds it.

A running Pi keeps its own leaf in memory; its next message is appended under that leaf, not under the
one pitree just moved to. So pitree warns when the file changed in the last minute or a pi process has
it open (Linux /proc; silently nothing elsewhere).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

RUNNING_PI = (
    "a running Pi appears to hold this session: it keeps its own leaf, so its next message will not "
    "follow this jump (quit it first, then `pi --session FILE`)"
)


def _pi_holders(path: Path, proc_root: Path) -> list[int]:
    target = os.path.realpath(path)
    pids = []
    try:
        procs = [p for p in proc_root.iterdir() if p.name.isdigit()]
    except OSError:
        return []
    me = str(os.getpid())
    for proc in procs:
        if proc.name == me:
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        holds = False
        try:
            for fd in (proc / "fd").iterdir():
                try:
                    if os.path.realpath(os.readlink(fd)) == target:
                        holds = True
                        break
                except OSError:
                    continue
        except OSError:
            pass
        is_pi = "pi-coding-agent" in cmdline or any(part.endswith("/pi") or part == "pi" for part in cmdline.split())
        if holds or (is_pi and (target in cmdline or path.name in cmdline)):
            pids.append(int(proc.name))
    return pids


def write_warnings(
    path: Path, *, now: float | None = None, recent_seconds: float = 60, proc_root: Path = Path("/proc")
) -> list[str]:
    warnings = []
    try:
        age = (time.time() if now is None else now) - path.stat().st_mtime
    except OSError:
        return warnings
    if age < recent_seconds:
        warnings.append(
            f"the session was written {max(0, int(age))} s ago: Pi may still be running on it, and a running "
            "Pi keeps its own leaf (its next message will not follow this jump)"
        )
    holders = _pi_holders(path, proc_root)
    if holders:
        warnings.append(f"{RUNNING_PI} (pid {', '.join(map(str, holders))})")
    return warnings
