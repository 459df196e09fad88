"""A session changed in place while the explorer shows it: how long until the tree read again is shown, and the
explorer's memory before, at its highest and after (the figures behind the README's Live tail paragraph).

    python bench/bench_reload.py FILE [--runs 1]

Each run is a fresh process: a copy of FILE in a folder of its own (with its own tree cache) opened in a headless
pilot at 160×50, watching the file as `pitree FILE` does; once its filters are prepared, a word in the middle of
the file is changed in place (same size) and the tail's check is asked at once (`CHECK_GAP` 0). RSS is sampled
every 20 ms from the change until 3 s after the new tree is shown, in MB of 10^6 bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import asyncio, json, shutil, sys, threading, time
from pathlib import Path
from pitree.session.layout import FILTERS
from pitree.widgets import live
from pitree.widgets.app import PitreeApp

live.CHECK_GAP = 0.0

def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 / 1e6

async def main(path):
    app = PitreeApp(path, config_overrides={"summarizer": "extractive"})  # watching, as `pitree FILE` runs
    async with app.run_test(size=(160, 50)):
        explorer = app.explorer
        def idle():
            prepared = len(explorer.tree_view._layouts) == len(FILTERS)
            return explorer.stree is not None and prepared and not explorer.tree_workers_running()
        while not idle():
            await asyncio.sleep(0.05)
        old, before, peak, stop = explorer.stree, rss(), [0.0], threading.Event()
        def sample():
            while not stop.wait(0.02):
                peak[0] = max(peak[0], rss())
        threading.Thread(target=sample, daemon=True).start()
        # Six bytes written in place, found by reading from the middle a block at a time: a copy of the file held
        # here would count in the explorer's RSS (it did, until this was mended).
        key = b'"role":"user","content":[{"type":"text","text":"'
        with open(path, "r+b") as fh:
            fh.seek(path.stat().st_size // 2)
            base, tail = fh.tell(), b""
            while (at := tail.find(key)) < 0:
                block = fh.read(1 << 20)
                if not block:
                    raise SystemExit("no user text after the middle of the file")
                base, tail = base + len(tail) - len(tail[-len(key):]), tail[-len(key):] + block
            fh.seek(base + at + len(key))
            fh.write(b"QZXWVK")
        start = time.perf_counter()
        await explorer.live.check()
        while explorer.stree is None or explorer.stree is old:
            await asyncio.sleep(0.02)
        took = time.perf_counter() - start
        del old
        await asyncio.sleep(3)
        stop.set()
        print(json.dumps({"before_mb": before, "reload_s": took, "peak_mb": max(peak[0], rss()), "after_mb": rss()}))

asyncio.run(main(Path(sys.argv[1])))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="pitree-bench-reload-") as folder:
            copy = Path(folder) / args.file.name
            copy.write_bytes(args.file.read_bytes())
            env = {**os.environ, "PITREE_CACHE_DIR": str(Path(folder) / "cache")}
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(copy)], env=env, capture_output=True, text=True, check=True
            ).stdout
            result = json.loads(out.strip().splitlines()[-1])
            print(
                f"{args.file.name}: before {result['before_mb']:.0f} MB; reload {result['reload_s']:.1f} s; "
                f"highest {result['peak_mb']:.0f} MB; 3 s after {result['after_mb']:.0f} MB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
