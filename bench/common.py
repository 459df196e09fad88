"""Shared helpers for the benchmarks: generated sessions (cached in bench/out), timed child processes with
their own peak memory (wait4), medians."""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out"
REPO = BENCH.parent
PITREE = Path(sys.executable).with_name("pitree")


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_session", BENCH / "gen_session.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def session(entries: int, shape: str = "normal") -> Path:
    """A generated v3 session of `entries` entries (made once, then reused)."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{shape}-{entries}.jsonl"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        _generator().generate(tmp, entries, shape=shape, seed=1)
        tmp.rename(path)
    return path


def run_measured(
    cmd: list[str], stdout: int | None = subprocess.DEVNULL, env: dict[str, str] | None = None
) -> tuple[float, float, bytes]:
    """(wall seconds, peak RSS in MB of that process alone, stdout bytes if captured)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
    out = b""
    if stdout == subprocess.PIPE:
        assert proc.stdout is not None
        out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read() if proc.stderr else b""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}): {err.decode(errors='replace')[-400:]}")
    return wall, usage.ru_maxrss / 1024, out


def median(values: list[float]) -> float:
    return statistics.median(values)


def fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"
