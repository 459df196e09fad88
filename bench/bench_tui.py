"""The explorer at size: first screen, keypress redraw latency, search, peak memory (headless pilot), and the
same in a real terminal (`pitree FILE` in a tmux pane of 160×50): launch → the tree's first rows / the status
bar's loaded state on screen (cold and warm tree cache), keypress → screen changed. Each a median of several runs.

usage: python bench/bench_tui.py [--sizes 1000,10000,100000,1000000] [--runs 3] [--big-runs 1] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    PITREE,
    BenchFailure,
    Tmux,
    bench_env,
    cell,
    fmt_ms,
    fmt_n,
    fmt_s,
    kib_to_mb,
    median,
    run_measured,
    session,
    wait_screen,
)

BIG_BYTES = 500_000_000
# pitree.widgets.explorer_state.EXACT_TOKENS_FROM (a test keeps them equal; importing it here means Textual)
EXACT_FROM = 32_000_000
FIRST_ROWS = re.compile(r"^[› ] .*• ", re.M)  # a tree row on the active path (the loading screen has none)
LOADED = re.compile(r"[\d,]+ entries · [\d,]+ branches · leaf [0-9a-f]+")  # counts have thousands commas


async def pilot_run(path: Path, exact: bool = False) -> dict[str, float]:
    """`exact`: press `t` at the first screen (tiktoken's exact counts, which wait for it in a big session)
    and wait for the entry pane's count before the keys."""
    from pitree.store.parse_child import fork_early
    from pitree.summary.tokens import encoder_built
    from pitree.widgets.app import PitreeApp
    from pitree.widgets.entry_view import EntryView
    from pitree.widgets.tree_view import TreeView

    # First screen = the tree's first line drawn (by `render_line`) once the session is in it.
    first_drawn: list[float] = []
    draw = TreeView.render_line

    def first_line(view: TreeView, y: int):  # type: ignore[no-untyped-def]
        if not first_drawn and view.stree is not None:
            first_drawn.append(time.perf_counter())
        return draw(view, y)

    t0 = time.perf_counter()
    fork_early(path)  # as `pitree FILE` does before it starts the app
    app = PitreeApp(path, watch=False)
    out: dict[str, float] = {}
    TreeView.render_line = first_line  # type: ignore[method-assign]
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            while not first_drawn:
                await asyncio.sleep(0.005)
            out["first_screen"] = first_drawn[0] - t0
            await pilot.pause()
            TreeView.render_line = draw  # type: ignore[method-assign]
            if exact:
                entry = app.query_one(EntryView)
                await pilot.press("t")
                deadline = time.perf_counter() + 60
                while not (encoder_built() and not entry.loading and not isinstance(entry.tokens, str)):
                    if time.perf_counter() > deadline:
                        raise RuntimeError("no exact count 60 s after t")
                    await asyncio.sleep(0.01)
            await _keys(app, pilot, out)
    finally:
        TreeView.render_line = draw  # type: ignore[method-assign]
    out["peak_rss_mb"] = kib_to_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return out


def key_timer(view: Any, pilot: Any) -> Callable[..., Awaitable[float]]:
    """`await timed(*keys)`: seconds from the keys sent to the tree view's last line drawn for them. The pilot then
    idles a while before it returns; that idle time is not the app's, so it is not counted."""
    drawn = [0.0]
    original = view.render_line

    def render_line(y: int):  # type: ignore[no-untyped-def]
        drawn[0] = time.perf_counter()
        return original(y)

    view.render_line = render_line

    async def timed(*keys: str) -> float:
        t = drawn[0] = time.perf_counter()
        await pilot.press(*keys)
        await pilot.pause()
        return drawn[0] - t

    return timed


async def timed_search(view: Any, query: str) -> float:
    """Seconds until a search of the whole tree has its matches on the rows (a big tree's runs in a thread)."""
    t = time.perf_counter()
    view.set_search(query)
    while view.searching:
        await asyncio.sleep(0.002)
    return time.perf_counter() - t


async def _keys(app: Any, pilot: Any, out: dict[str, float]) -> None:
    """Keypress -> redrawn latencies, and a search of the whole tree, into `out`."""
    from pitree.widgets.tree_view import TreeView

    view = app.query_one(TreeView)
    timed = key_timer(view, pilot)
    out["move"] = statistics.median([await timed("up") for _ in range(20)])
    out["page"] = statistics.median([await timed("pageup") for _ in range(10)])
    view.action_first()
    fold = []
    for _ in range(5):
        fold.append(await timed("ctrl+left"))  # fold the root
        fold.append(await timed("ctrl+right"))  # and unfold it
    out["fold"] = statistics.median(fold)
    await app.explorer.prewarm_layouts().wait()  # that worker only: the live tail's never completes
    out["filter"] = statistics.median([await timed("ctrl+o") for _ in range(10)])
    await timed("ctrl+d")
    out["search"] = await timed_search(view, "read src")
    out["matches"] = len(view.matches)


def pilot_process(path: Path, timeout: float, env: dict[str, str], exact: bool = False) -> dict[str, float]:
    """One pilot run in a fresh process (peak memory is per process) with `env` (its tree cache folder)."""
    code = (
        f"import asyncio, json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_tui; "
        f"print(json.dumps(asyncio.run(bench_tui.pilot_run(__import__('pathlib').Path({str(path)!r}), {exact}))))"
    )
    _, peak_mb, out = run_measured([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env, timeout=timeout)
    result: dict[str, float] = json.loads(out.decode().strip().splitlines()[-1])
    # With the forked parse child (big files), which the process's own figure leaves out.
    result["peak_rss_mb"] = max(result["peak_rss_mb"], peak_mb)
    return result


def _changed_after(tmux: Tmux, key: str, timeout: float) -> float | None:
    """Send `key`; seconds until the pane shows anything different (None on timeout)."""
    before = tmux.capture()
    t0 = time.perf_counter()
    tmux.keys(key)
    while time.perf_counter() - t0 < timeout:
        if tmux.capture() != before:
            return time.perf_counter() - t0
        time.sleep(0.001)  # a breath between polls (each is ~1 ms): a tight loop would take CPU from pitree
    return None


def tmux_run(path: Path, env: dict[str, str], timeout: float, keys: int) -> dict[str, float]:
    """Launch → first rows / loaded status on screen; with `keys`, keypress → screen changed (medians of `keys`
    presses of ↑ and half as many of PgUp and ^o)."""
    out: dict[str, float] = {}
    with Tmux(160, 50) as tmux:
        t0 = tmux.start([str(PITREE), str(path)], env)
        rows = wait_screen(tmux, FIRST_ROWS, t0, timeout)
        if rows is None:
            raise BenchFailure(f"> {timeout:.0f} s")
        out["first_rows"] = rows[0]
        loaded = rows if LOADED.search(rows[1]) else wait_screen(tmux, LOADED, t0, timeout)
        if loaded is None:
            raise BenchFailure(f"status > {timeout:.0f} s")
        out["loaded"] = loaded[0]
        if keys:
            # Idle first: the filter layouts are prepared in a worker after load, and the entry pane follows
            # the cursor 80 ms after it rests; neither should be counted as (or hide) a key's redraw.
            half = max(2, keys // 2)
            for name, key, count in (("move", "Up", keys), ("page", "PPage", half), ("filter", "C-o", half)):
                samples = []
                for _ in range(count):
                    tmux.wait_idle(quiet=0.3, timeout=timeout)
                    lat = _changed_after(tmux, key, timeout=min(timeout, 30))
                    if lat is not None:
                        samples.append(lat)
                out[name] = median(samples) if samples else float("nan")
    return out


def measure(n: int, runs: int, timeout: float, big_runs: int = 1, keys: int = 10) -> dict[str, Any]:
    path = session(n)
    size_mb = path.stat().st_size / 1e6
    if size_mb * 1e6 >= BIG_BYTES:
        runs = min(runs, big_runs)
    res: dict[str, Any] = {"entries": n, "file_mb": round(size_mb, 1), "runs": runs}
    big = size_mb * 1e6 >= BIG_BYTES
    with bench_env() as warm_env:
        # Every pilot run starts with an empty tree cache; the last one's is kept for the warm tmux runs.
        try:
            pilots = []
            for i in range(runs):
                if i == runs - 1:
                    pilots.append(pilot_process(path, timeout, warm_env))
                else:
                    with bench_env() as env:
                        pilots.append(pilot_process(path, timeout, env))
            res["pilot"] = {k: statistics.median(r[k] for r in pilots) for k in pilots[0]}
            if EXACT_FROM <= size_mb * 1e6 < BIG_BYTES:  # exact counts wait for `t` here: measure them once too
                with bench_env() as env:
                    res["exact_peak_mb"] = pilot_process(path, timeout, env, exact=True)["peak_rss_mb"]
        except BenchFailure as exc:
            res["pilot_error"] = exc.reason
        if not Tmux.available():
            res["tmux_error"] = "tmux not installed"
            return res
        try:
            if not big:  # a cold load of a big file is the pilot's cold figure plus imports: not run twice
                cold = []
                for _ in range(runs):
                    with bench_env() as env:
                        cold.append(tmux_run(path, env, timeout, keys=0))
                res["tmux_cold"] = {k: median([r[k] for r in cold]) for k in cold[0]}
            # Keys in the last warm run only: each press waits for the app to go idle first.
            warm = [tmux_run(path, warm_env, timeout, keys=keys if i == runs - 1 else 0) for i in range(runs)]
            res["tmux_warm"] = {k: median([r[k] for r in warm if k in r]) for k in warm[-1]}
        except BenchFailure as exc:
            res["tmux_error"] = exc.reason
    return res


def pilot_table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| entries | file | first screen (pilot / tmux) | move | page | fold | filter change | search "
        "| peak RSS (× file) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        tm = fmt_s(r["tmux_cold"]["first_rows"]) if "tmux_cold" in r else "—"
        if "pilot" not in r:
            lines.append(
                f"| {fmt_n(r['entries'])} | {r['file_mb']:g} MB | fails ({cell(r['pilot_error'])}) / {tm} |"
                + " — |" * 6
            )
            continue
        p = r["pilot"]
        lines.append(
            f"| {fmt_n(r['entries'])} | {r['file_mb']:g} MB | {fmt_s(p['first_screen'])} / {tm} "
            f"| {fmt_ms(p['move'])} | {fmt_ms(p['page'])} | {fmt_ms(p['fold'])} | {fmt_ms(p['filter'])} "
            f"| {fmt_ms(p['search'])} ({int(p['matches'])} hits) "
            f"| {_peak(p['peak_rss_mb'], r['file_mb'])}"
            + (f"; with t: {_peak(r['exact_peak_mb'], r['file_mb'])}" if "exact_peak_mb" in r else "")
            + " |"
        )
    runs = " / ".join(map(str, sorted({r["runs"] for r in results})))
    lines.append("")
    lines.append(
        f"How measured: headless Textual pilot at 160×50 in a fresh process with an empty tree cache, median of "
        f"{runs} runs; first screen = app start (with the early parse fork `pitree FILE` makes) → the tree's "
        "first line drawn (imports excluded; tmux = the cold figure below, imports included); keys: ↑ ×20, "
        "PgUp ×10, fold/unfold the root ×10, ^o ×10 after the filter layouts "
        "were prepared, each key → the tree's last line drawn for it; search = `set_search('read src')` over "
        "the whole tree; peak RSS of that process with its forked parse child (as in the load table, in MB of "
        "10^6 bytes); with t = one more run that pressed `t` at the first screen (tiktoken's exact counts, which "
        f"wait for it in sessions of {EXACT_FROM // 1_000_000} MB or more) and waited for the entry's count."
    )
    return "\n".join(lines)


def _peak(mb: float, file_mb: float) -> str:
    return f"{mb:.0f} MB ({mb / max(file_mb, 0.001):.2f}×)"


def tmux_table(results: list[dict[str, Any]], keys: int = 10) -> str:
    lines = [
        "| entries | file | first rows cold / warm | loaded status bar cold / warm | ↑ → screen changed "
        "| PgUp → changed | ^o filter → changed |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        head = f"| {fmt_n(r['entries'])} | {r['file_mb']:g} MB "
        if "tmux_warm" not in r:
            lines.append(head + f"| fails ({cell(r.get('tmux_error', '?'))}) |" + " — |" * 4)
            continue
        c, w = r.get("tmux_cold", {}), r["tmux_warm"]
        cold_rows = fmt_s(c["first_rows"]) if c else "(pilot)"
        cold_loaded = fmt_s(c["loaded"]) if c else "(pilot)"
        lines.append(
            head + f"| {cold_rows} / {fmt_s(w['first_rows'])} "
            f"| {cold_loaded} / {fmt_s(w['loaded'])} | {fmt_ms(w['move'])} | {fmt_ms(w['page'])} "
            f"| {fmt_ms(w['filter'])} |"
        )
    runs = " / ".join(map(str, sorted({r["runs"] for r in results})))
    lines.append("")
    lines.append(
        f"How measured: `pitree FILE` (its modules' bytecode cached, as installed) in a private tmux server, "
        "pane 160×50, polling `capture-pane` through a "
        "control-mode client (~1 ms a poll); launch → a tree row on the active path shown / the status bar "
        "showing the entry count and leaf; "
        f"cold = empty tree cache (not repeated for files of 500 MB and more: see the pilot's figure), warm = the "
        f"cache filled by the last pilot run; median of {runs} runs each; keys in the last warm run, each sent "
        f"with `send-keys` once the process is idle: ↑ ×{keys}, PgUp and ^o ×{max(2, keys // 2)}, → the first "
        "capture that differs (median)."
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--big-runs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--keys", type=int, default=10, help="tmux: presses of ↑ (PgUp and ^o: half as many)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = []
    for n in (int(x) for x in args.sizes.split(",") if x):
        results.append(measure(n, args.runs, args.timeout, args.big_runs, args.keys))
        print(f"bench_tui: {n} done", file=sys.stderr, flush=True)
    print(pilot_table(results))
    print()
    print("**Explorer in a real terminal** (`bench/bench_tui.py`, tmux)")
    print()
    print(tmux_table(results, args.keys))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
