"""Tail latency: a writer process appends entries (one write per entry, as Pi does) at 1, 50 and 200 per second
while the explorer watches the file for real (watchfiles); latency = write -> the entry drawn in the tree.
Median and 95th percentile per rate.

usage: python bench/bench_tail.py [--rates 1,50,200] [--seconds 4]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import session  # noqa: E402


async def measure(rate: int, seconds: float, base: Path) -> tuple[float, float, int]:
    from pitree.tui.app import PitreeApp
    from pitree.widgets.tree_view import TreeView

    folder = Path(tempfile.mkdtemp(prefix="pitree-tail-"))
    path = folder / "s.jsonl"
    shutil.copyfile(base, path)
    app = PitreeApp(path, watch=True)
    written: dict[str, float] = {}
    seen: dict[str, float] = {}
    async with app.run_test(size=(160, 50)) as pilot:
        while app.stree is None or app.live is None or app.live.worker is None:
            await asyncio.sleep(0.01)
        await pilot.pause(0.3)
        view = app.query_one(TreeView)
        original = view.render_line

        def render_line(y: int):  # type: ignore[no-untyped-def]
            strip = original(y)
            node = view.cursor_node
            if node is not None and node.id in written and node.id not in seen:
                seen[node.id] = time.perf_counter()
            return strip

        view.render_line = render_line  # type: ignore[method-assign]
        parent = app.stree.leaf.id
        n = max(1, int(rate * seconds))
        interval = 1.0 / rate
        start = time.perf_counter()
        with open(path, "ab", buffering=0) as fh:
            for i in range(n):
                target = start + i * interval
                while (delay := target - time.perf_counter()) > 0:
                    await asyncio.sleep(min(delay, 0.005))
                eid = f"t{rate:03d}{i:04d}"
                line = orjson.dumps(
                    {
                        "type": "message",
                        "id": eid,
                        "parentId": parent,
                        "timestamp": "2026-12-01T00:00:00.000Z",
                        "message": {"role": "user", "content": [{"type": "text", "text": f"tail {i}"}]},
                    }
                )
                written[eid] = time.perf_counter()
                fh.write(line + b"\n")
                parent = eid
        deadline = time.perf_counter() + 5
        while len(seen) < len(written) and time.perf_counter() < deadline:
            await asyncio.sleep(0.01)
    shutil.rmtree(folder, ignore_errors=True)
    # In a burst several entries arrive in one batch; only the newest is drawn as the cursor, and the others
    # are on screen in the same frame: give them that frame's time.
    lat = []
    last_seen = None
    for eid in reversed(list(written)):
        if eid in seen:
            last_seen = seen[eid]
        if last_seen is not None:
            lat.append(last_seen - written[eid])
    lat.sort()
    p95 = lat[int(0.95 * (len(lat) - 1))] if lat else float("nan")
    return statistics.median(lat) if lat else float("nan"), p95, len(lat)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rates", default="1,50,200")
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    base = session(1000)
    print("| appends/s | entries | median append → on screen | 95th percentile |")
    print("|---|---|---|---|")
    for rate in (int(r) for r in args.rates.split(",")):
        seconds = max(args.seconds, 5 / rate)
        med, p95, count = asyncio.run(measure(rate, seconds, base))
        print(f"| {rate} | {count} | {med * 1000:.0f} ms | {p95 * 1000:.0f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
