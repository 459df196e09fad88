"""The explorer at size: first screen, keypress redraw latency, search, peak memory (headless pilot), and
first screen in a real terminal (tmux), each the median of several runs.

usage: python bench/bench_tui.py [--sizes 1000,10000,100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import PITREE, fmt_s, session  # noqa: E402


async def pilot_run(path: Path) -> dict[str, float]:
    from pitree.tui.app import PitreeApp
    from pitree.widgets.tree_view import TreeView

    t0 = time.perf_counter()
    app = PitreeApp(path, watch=False)
    out: dict[str, float] = {}
    async with app.run_test(size=(160, 50)) as pilot:
        while app.stree is None:
            await asyncio.sleep(0.005)
        await pilot.pause()
        out["first_screen"] = time.perf_counter() - t0
        view = app.query_one(TreeView)
        # Latency = key sent -> the tree's last line drawn for it. The pilot then idles a while before it
        # returns; that idle time is not the app's, so it is not counted.
        drawn = [0.0]
        original = view.render_line

        def render_line(y: int):  # type: ignore[no-untyped-def]
            drawn[0] = time.perf_counter()
            return original(y)

        view.render_line = render_line  # type: ignore[method-assign]

        async def timed(*keys: str) -> float:
            t = time.perf_counter()
            drawn[0] = t
            await pilot.press(*keys)
            await pilot.pause()
            return drawn[0] - t

        out["move"] = statistics.median([await timed("up") for _ in range(20)])
        out["page"] = statistics.median([await timed("pageup") for _ in range(10)])
        view.action_first()
        fold = []
        for _ in range(5):
            fold.append(await timed("ctrl+left"))  # fold the root
            fold.append(await timed("ctrl+right"))  # and unfold it
        out["fold"] = statistics.median(fold)
        app.prewarm_layouts()
        await app.workers.wait_for_complete()
        out["filter"] = statistics.median([await timed("ctrl+o") for _ in range(10)])
        await timed("ctrl+d")
        t = time.perf_counter()
        count = view.set_search("read src")
        out["search"] = time.perf_counter() - t
        out["matches"] = count
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def tmux_first_screen(path: Path) -> float | None:
    if shutil.which("tmux") is None:
        return None
    name = f"pitree-bench-{uuid.uuid4().hex[:6]}"
    t0 = time.perf_counter()
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "160", "-y", "50", f"{PITREE} {path}"], check=True)
    try:
        while time.perf_counter() - t0 < 60:
            shown = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout
            if " entries · " in shown and "•" in shown:
                return time.perf_counter() - t0
            time.sleep(0.01)
        return None
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(
        "| entries | file | first screen (pilot / tmux) | move | page | fold | filter change | search "
        "| peak RSS (× file) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.sizes.split(",")):
        path = session(n)
        size_mb = path.stat().st_size / 1e6
        runs = []
        for _ in range(args.runs):
            # A fresh process per run: peak memory is per process.
            code = (
                f"import asyncio, json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_tui; "
                f"print(json.dumps(asyncio.run(bench_tui.pilot_run(__import__('pathlib').Path({str(path)!r})))))"
            )
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
            if out.returncode != 0:
                print(out.stderr[-2000:], file=sys.stderr)
                return 1
            import json

            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        tm = [t for t in (tmux_first_screen(path) for _ in range(args.runs)) if t is not None]
        tmux_s = fmt_s(statistics.median(tm)) if tm else "n/a"
        print(
            f"| {n:,} | {size_mb:.1f} MB | {fmt_s(med['first_screen'])} / {tmux_s} | {med['move'] * 1000:.1f} ms "
            f"| {med['page'] * 1000:.1f} ms | {med['fold'] * 1000:.1f} ms | {med['filter'] * 1000:.1f} ms "
            f"| {med['search'] * 1000:.1f} ms ({int(med['matches'])} hits) "
            f"| {med['peak_rss_mb']:.0f} MB ({med['peak_rss_mb'] / size_mb:.2f}×) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
