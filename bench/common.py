"""Shared helpers for the benchmarks: generated sessions (cached in bench/out), timed child processes with
their own peak memory (wait4) and a timeout, a private tmux server, medians, percentiles, growth per 10×
entries, and the number formats of the tables."""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out"
REPO = BENCH.parent
PITREE = Path(sys.executable).with_name("pitree")


class BenchFailure(Exception):
    """A measured run failed or timed out; `reason` is short enough for a table cell."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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


@contextlib.contextmanager
def bench_env(cache_dir: Path | None = None) -> Iterator[dict[str, str]]:
    """An environment for a pitree child: its own tree cache folder (empty = a cold load unless given) and
    no user config. The folders are removed afterwards (a 1M-entry tree cache is hundreds of MB)."""
    own = Path(tempfile.mkdtemp(prefix="pitree-bench-"))
    # Without PYTHONDONTWRITEBYTECODE (set on this machine): an installed pitree has its modules compiled, and
    # with it set, the editable install in .venv compiled every one of them again at each launch (~70 ms).
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "PITREE_CACHE_DIR": str(cache_dir if cache_dir is not None else own / "cache"),
        "PITREE_CONFIG": str(own / "config.toml"),
    }
    try:
        yield env
    finally:
        shutil.rmtree(own, ignore_errors=True)


_NODE_ERROR = re.compile(r"^\s*(?:Uncaught )?([A-Z]\w*Error|Error)(?: \[\w+\])?: (.+)$")
_PY_ERROR = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt)): ?(.*)$")


def failure_reason(stderr: str, returncode: int | None = None) -> str:
    """One short line saying why a child failed: the JS or Python error, else the exit status."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        m = _PY_ERROR.match(line)
        if m:
            return f"{m.group(1).rsplit('.', 1)[-1]}: {m.group(2)}".rstrip(": ")[:120]
    for line in lines:
        m = _NODE_ERROR.match(line)
        if m:
            return f"{m.group(1)}: {m.group(2)}"[:120]
    if returncode is not None and returncode < 0:
        return f"killed by signal {-returncode}"
    if "heap out of memory" in stderr:
        return "JavaScript heap out of memory"
    tail = lines[-1][:100] if lines else ""
    return f"exit {returncode}" + (f": {tail}" if tail else "")


def _kb(path: str, field: bytes) -> int:
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            pass
    return out


def kib_to_mb(kib: float) -> float:
    """KiB (what the kernel reports memory in) to MB of 10^6 bytes, the unit file sizes are given in here: a
    ratio of memory to file size must not mix MiB with MB (that flattered it by 4.9%)."""
    return kib * 1024 / 1e6


def tree_memory_mb(pid: int) -> float:
    """Memory of a process and its descendants now, in MB (10^6 bytes): the sum of their PSS (shared pages
    split between them, so a forked child is not counted twice), or of their RSS where PSS is not available."""
    total = 0
    for p in _descendants(pid):
        total += _kb(f"/proc/{p}/smaps_rollup", b"Pss:") or _kb(f"/proc/{p}/status", b"VmRSS:")
    return kib_to_mb(total)


def run_measured(
    cmd: list[str],
    stdout: int | None = subprocess.DEVNULL,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
) -> tuple[float, float, bytes]:
    """(wall seconds, peak memory in MB of 10^6 bytes, stdout bytes if captured).

    Peak memory is the larger of the process's own peak RSS (wait4) and the peak of its and its children's memory
    together (`tree_memory_mb`, sampled every 50 ms): pitree parses a big file's back half in a forked child.
    Raises BenchFailure on a non-zero exit or when `timeout` passes (the child is killed)."""
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: a chatty child cannot block on it
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=err, env=env)
        timed_out = threading.Event()
        finished = threading.Event()
        sampled = [0.0]

        def sample() -> None:
            while not finished.wait(0.05):
                if time.perf_counter() - t0 > (timeout or float("inf")):
                    timed_out.set()
                    proc.kill()
                    return
                sampled[0] = max(sampled[0], tree_memory_mb(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        out = b""
        try:
            if stdout == subprocess.PIPE:
                assert proc.stdout is not None
                out = proc.stdout.read()
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            finished.set()
            sampler.join()
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if timed_out.is_set():
            raise BenchFailure(f"> {timeout:.0f} s")
        if proc.returncode != 0:
            err.seek(0)
            raise BenchFailure(failure_reason(err.read().decode(errors="replace"), proc.returncode))
    return wall, max(kib_to_mb(usage.ru_maxrss), sampled[0]), out


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by the nearest-rank rule: a value that was measured. NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def per_decade(n1: float, v1: float, n2: float, v2: float) -> float:
    """How much a measure grows per 10× entries between two sizes: (v2/v1) ** (1 / log10(n2/n1)).
    1.0 = flat, 10.0 = linear, 100.0 = quadratic."""
    if n1 <= 0 or n2 <= n1 or v1 <= 0 or v2 <= 0:
        return float("nan")
    return float((v2 / v1) ** (1 / math.log10(n2 / n1)))


def fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def fmt_ms(seconds: float) -> str:
    """Sub-second latencies, one decimal below 100 ms."""
    if seconds != seconds:
        return "n/a"
    if seconds >= 1:
        return fmt_s(seconds)
    ms = seconds * 1000
    return f"{ms:.1f} ms" if ms < 100 else f"{ms:.0f} ms"


def fmt_x(ratio: float) -> str:
    if ratio != ratio:
        return "n/a"
    return f"{ratio:.2f}×" if ratio < 10 else f"{ratio:.1f}×" if ratio < 100 else f"{ratio:.0f}×"


def fmt_n(entries: int) -> str:
    return f"{entries:,}"


def cell(reason: str) -> str:
    """A failure as a table cell (pipes would split the cell)."""
    return reason.replace("|", "/").replace("\n", " ")


# ---------------------------------------------------------------------------------------------- tmux


class Tmux:
    """A private tmux server (its own socket, no user config) with one pane of a fixed size, driven through one
    control-mode client (`tmux -C`), so a capture or a key is a round trip to the server, not a process start.

    The command runs via `exec`, so the pane's process is pitree itself (its CPU time tells when it is idle)."""

    def __init__(self, width: int = 160, height: int = 50) -> None:
        self.socket = f"pitree-bench-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.width, self.height = width, height
        self.pid: int | None = None
        self._client: subprocess.Popen[bytes] | None = None
        self._socket_path = ""

    @staticmethod
    def available() -> bool:
        return shutil.which("tmux") is not None

    def _base(self) -> list[str]:
        return ["tmux", "-L", self.socket, "-f", "/dev/null"]

    def start(self, argv: list[str], env: dict[str, str]) -> float:
        """Start `argv` in the pane with `env`'s PITREE_* settings; returns the launch time (perf_counter)."""
        settings = " ".join(f"{k}={_sh(v)}" for k, v in env.items() if k.startswith("PITREE_"))
        command = f"exec env {settings} {' '.join(_sh(a) for a in argv)}"
        size = ["-x", str(self.width), "-y", str(self.height)]
        t0 = time.perf_counter()
        # window-size manual: the control client must not resize the pane to its own default size.
        done = subprocess.run(
            [
                *self._base(),
                "new-session",
                "-d",
                "-s",
                "bench",
                *size,
                command,
                ";",
                "set-option",
                "-g",
                "window-size",
                "manual",
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise BenchFailure(f"tmux: {done.stderr.strip()[:80]}")
        self._client = subprocess.Popen(
            [*self._base(), "-C", "attach-session", "-t", "bench"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self._read_block()  # the reply to the attach itself
        self.command("refresh-client -f no-output")
        pid = "".join(self.command("display-message -p -t bench '#{pane_pid}'")).strip()
        self.pid = int(pid) if pid.isdigit() else None
        self._socket_path = "".join(self.command("display-message -p '#{socket_path}'")).strip()
        return t0

    def command(self, line: str) -> list[str]:
        """Run one tmux command through the control client; its output lines."""
        client = self._client
        assert client is not None and client.stdin is not None and client.stdout is not None
        client.stdin.write(line.encode() + b"\n")
        client.stdin.flush()
        return self._read_block()

    def _read_block(self) -> list[str]:
        client = self._client
        assert client is not None and client.stdout is not None
        out: list[str] = []
        inside = False
        while True:
            raw = client.stdout.readline()
            if not raw:
                raise BenchFailure("tmux control client ended")
            text = raw.decode(errors="replace").rstrip("\n")
            if not inside:
                inside = text.startswith("%begin ")
                continue
            if _END.match(text):
                return out
            out.append(text)

    def capture(self) -> str:
        return "\n".join(self.command("capture-pane -p -t bench"))

    def keys(self, *keys: str) -> None:
        self.command("send-keys -t bench " + " ".join(_sh(k) for k in keys))

    def cpu_seconds(self) -> float:
        """User + system CPU time of the pane's process so far (0 when it is gone)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def wait_idle(self, quiet: float = 0.4, timeout: float = 120.0) -> bool:
        """Wait until the pane's process used under 5% CPU for `quiet` seconds (its workers are done)."""
        deadline = time.perf_counter() + timeout
        last = self.cpu_seconds()
        while time.perf_counter() < deadline:
            time.sleep(quiet)
            now = self.cpu_seconds()
            if now - last < quiet * 0.05 + 0.011:  # + one clock tick
                return True
            last = now
        return False

    def stop(self) -> None:
        if self._client is not None:
            if self._client.stdin:
                self._client.stdin.close()
            self._client.kill()
            self._client.wait()
            self._client = None
        subprocess.run([*self._base(), "kill-server"], capture_output=True)
        if self._socket_path:  # tmux leaves the socket file behind
            Path(self._socket_path).unlink(missing_ok=True)

    def __enter__(self) -> Tmux:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_END = re.compile(r"^%(end|error) \d+ \d+ \d+$")


def _sh(text: str) -> str:
    import shlex

    return shlex.quote(text)


def wait_screen(
    tmux: Tmux, ready: re.Pattern[str] | str, t0: float, timeout: float, min_interval: float = 0.01
) -> tuple[float, str] | None:
    """Poll the pane until `ready` shows; (seconds since t0, screen) or None on timeout. Polls slow down as the
    wait grows (1% of the elapsed time, at least `min_interval`), so a long load is not slowed by the polling."""
    pattern = re.compile(re.escape(ready)) if isinstance(ready, str) else ready
    while (elapsed := time.perf_counter() - t0) < timeout:
        screen = tmux.capture()
        if pattern.search(screen):
            return time.perf_counter() - t0, screen
        time.sleep(max(min_interval, elapsed / 100))
    return None
