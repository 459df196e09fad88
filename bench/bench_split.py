"""How much of a big file the parent should parse itself (`parse_child.SHARE`, `EARLY_SHARE`).

`cli`: the whole `pitree tree FILE --json > /dev/null`, cold (empty tree cache), with the parent's share set
to each value. `early`: what the explorer does before its first screen: `fork_early` with the share, import
the explorer (Textual), then `load_session_fast`; timed from the process's start to the tree loaded (share 0:
no early fork, the baseline). Shares
interleaved run by run, median of the runs, each as a ratio to the best median of the same run.

usage: python bench/bench_split.py [--entries 100000] [--runs 5] [--cli 0.3,0.35,0.4,0.45,0.5]
       [--early 0,0.25,0.3,0.35]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import bench_env, median, run_measured, session  # noqa: E402

CLI = """
import sys
from pitree.cli import main as cli
from pitree.store import parse_child
parse_child.SHARE = float(sys.argv[1])
sys.exit(cli.main(["tree", sys.argv[2], "--json"]))
"""

EARLY = """
import sys, time
from pathlib import Path
from pitree.store import parse_child
parse_child.EARLY_SHARE = float(sys.argv[1])
path = Path(sys.argv[2])
if parse_child.EARLY_SHARE:  # 0: no early fork (the load forks after the imports), the baseline
    parse_child.fork_early(path)
import pitree.widgets.app  # what the explorer imports while the child parses
from pitree.store.session_file import load_session_fast
load_session_fast(path)
"""


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x]


def measure(path: Path, script: str, shares: list[float], runs: int) -> dict[float, float]:
    walls: dict[float, list[float]] = {s: [] for s in shares}
    for _ in range(runs):
        for share in shares:
            with bench_env() as env:  # a fresh, empty tree cache each run
                wall, _, _ = run_measured([sys.executable, "-c", script, str(share), str(path)], env=env)
            walls[share].append(wall)
    return {s: median(w) for s, w in walls.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cli", default="0.3,0.35,0.4,0.45,0.5")
    ap.add_argument("--early", default="0,0.25,0.3,0.35")
    args = ap.parse_args()
    path = session(args.entries)
    out = {}
    for name, script, shares in (("cli", CLI, _floats(args.cli)), ("early", EARLY, _floats(args.early))):
        if not shares:
            continue
        medians = measure(path, script, shares, args.runs)
        best = min(medians.values())
        print(f"{name} (median of {args.runs}, {args.entries:,} entries):")
        for share, wall in medians.items():
            print(f"  share {share:.2f}: {wall * 1000:6.0f} ms  {wall / best:.2f}x the best")
        out[name] = {str(s): round(w * 1000) for s, w in medians.items()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
