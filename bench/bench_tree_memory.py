"""What a loaded tree costs in memory, and what its layouts add: the figures behind the README's Caches paragraph.

    python bench/bench_tree_memory.py FILE [--runs 3] [--breakdown]

Each run is a fresh process that loads FILE as the explorer does (texts apart, tree cache on, in a cache folder of
its own: the first run is cold, the next ones reopen from that cache), then lays out every filter and fills the
search index. It prints the process's RSS (MB of 10^6 bytes) after each step, as a median over the runs after the
first, and with `--breakdown` the sizes of the tree's own objects by kind (`sys.getsizeof`, each object once).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
from pathlib import Path
from pitree.session.layout import FILTERS, build_layout
from pitree.store.session_file import load_session_fast

def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 / 1e6

out = {}
t = time.perf_counter()
tree, _ = load_session_fast(Path(sys.argv[1]))
out["load_s"], out["loaded"] = time.perf_counter() - t, rss()
kept = []
for mode in FILTERS:
    kept.append(build_layout(tree, mode))
    kept[-1].finder()  # what finds rows, as the explorer prepares it
    out[mode] = rss()
tree.search_index.update()
out["search index"] = rss()
if sys.argv[2] == "1":
    seen, sizes = set(), {}
    def size(kind, obj):
        if obj is not None and id(obj) not in seen:
            seen.add(id(obj))
            sizes[kind] = sizes.get(kind, 0) + sys.getsizeof(obj)
    for n in tree.nodes:
        size("entries (Node)", n); size("ids", n.id); size("idx ints", n.idx)
        size("children lists", n._kids if type(n._kids) is list else None)
        size("tool call ids", n._calls if type(n._calls) is not tuple else None)
        if type(n._calls) is tuple:
            size("tool call ids", n._calls)
            for c in n._calls:
                size("tool call ids", c)
    size("id map", tree.by_id); size("call map", tree.calls); size("entry list", tree.nodes)
    at = tree.at
    for column in (at.line, at.offset, at.length, at.ts, at.first_call, at.est, at.model, at.usage_end):
        size("columns", column)
    size("usage", at.usage_blob._tail)  # in memory: the rest is spilled (`SpilledBytes`)
    for chunk in at.usage_blob._cache.values():
        size("usage", chunk)
    size("meta", at.meta)
    for meta in at.meta.values():
        size("meta", meta)
    out["breakdown_mb"] = {k: round(v / 1e6, 1) for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])}
print(json.dumps(out))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--breakdown", action="store_true")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="pitree-bench-mem-") as cache:
        env = {**os.environ, "PITREE_CACHE_DIR": cache}
        for i in range(args.runs):
            last = args.breakdown and i == args.runs - 1
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(args.file), "1" if last else "0"],
                env=env,
                check=True,
                stdout=subprocess.PIPE,
            )
            results.append(json.loads(done.stdout))
            print(f"run {i + 1} ({'cold' if i == 0 else 'warm'}): {results[-1]}", file=sys.stderr)
    warm = results[1:] or results
    steps = [k for k in results[0] if k != "breakdown_mb"]
    print(f"{args.file.name} ({args.file.stat().st_size / 1e6:.0f} MB), RSS in MB after each step:")
    print(
        "  cold: "
        + ", ".join(f"{k} {results[0][k]:.2f}" if k == "load_s" else f"{k} {results[0][k]:.0f}" for k in steps)
    )
    print(
        f"  warm (median of {len(warm)}): "
        + ", ".join(
            f"{k} {statistics.median(r[k] for r in warm):.2f}"
            if k == "load_s"
            else f"{k} {statistics.median(r[k] for r in warm):.0f}"
            for k in steps
        )
    )
    if args.breakdown:
        print("  the tree's objects (MB):", results[-1]["breakdown_mb"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
