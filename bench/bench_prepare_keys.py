"""Keys while the explorer prepares a big session's other filters and search index, and after.

usage: python bench/bench_prepare_keys.py FILE [--runs 1]

Headless Textual pilot at 160x50 in this process, a new tree cache (a temporary folder): open FILE, wait for the
tree to be ready, then press ↑ ×20 and PgUp ×10 at once (the explorer is then preparing the other filters' layouts
and the search index in a thread), wait until that is done, press them again, and search the whole tree for
`read src` (a thread from 250,000 entries: until its matches are on the rows). Latency = key sent -> the tree's last
line drawn for it; median and max of each run's presses. Prints one JSON line per run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


async def run(path: Path) -> dict[str, Any]:
    from bench_tui import key_timer, timed_search
    from pitree.widgets.app import PitreeApp
    from pitree.widgets.tree_view import TreeView
    from textual.worker import WorkerCancelled

    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    app = PitreeApp(path, watch=False)
    async with app.run_test(size=(160, 50)) as pilot:
        view = app.query_one(TreeView)
        while view.stree is None:
            await asyncio.sleep(0.05)
        out["ready_s"] = round(time.perf_counter() - t0, 1)
        timed = key_timer(view, pilot)

        async def keys(when: str) -> None:
            for key, presses in (("up", 20), ("pageup", 10)):
                times = [await timed(key) for _ in range(presses)]
                out[f"{key}_{when}_ms"] = round(statistics.median(times) * 1000, 1)
                out[f"{key}_{when}_max_ms"] = round(max(times) * 1000, 1)

        await keys("preparing")
        for _ in range(20):  # the explorer's own preparation may cancel this one as it starts: again
            try:
                await app.explorer.prewarm_layouts().wait()
                break
            except WorkerCancelled:
                await pilot.pause(0.5)
        out["prepared_s"] = round(time.perf_counter() - t0, 1)
        await keys("after")
        out["search_s"] = round(await timed_search(view, "read src"), 2)
        out["matches"] = len(view.matches)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("file", type=Path)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    sys.setrecursionlimit(100_000)
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="pitree-bench-keys-") as cache:
            os.environ["PITREE_CACHE_DIR"] = cache
            print(json.dumps({"file": str(args.file), **asyncio.run(run(args.file))}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
