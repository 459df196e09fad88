"""The model alone, in-process, on a generated session: `build_layout` per filter (CPU time, median and min of
several runs, so a busy machine moves it less than wall time), and what the loaded tree holds (tracemalloc)
with the part of it that is packed usage. For comparing two versions of app/session, not for the README table.

usage: python bench/bench_layout.py [--entries 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import session  # noqa: E402
from pitree.session.layout import FILTERS, build_layout  # noqa: E402
from pitree.session.load import load_bytes  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    data = session(args.entries).read_bytes()

    tracemalloc.start()
    tree = load_bytes(data)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    packed = [n._usage for n in tree.by_id.values() if n._usage is not None]
    usage_bytes = sum(sys.getsizeof(p) for p in packed)
    print(f"{args.entries:,} entries: the tree holds {held / 1e6:.2f} MB (tracemalloc), of which packed usage")
    print(f"  {usage_bytes / 1e6:.2f} MB for {len(packed):,} entries")

    for mode in FILTERS:
        times = []
        for _ in range(args.runs):
            start = time.process_time()
            build_layout(tree, mode)
            times.append(time.process_time() - start)
        median, best = statistics.median(times) * 1000, min(times) * 1000
        print(f"build_layout {mode:>12}: median {median:.0f} ms, min {best:.0f} ms (CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
