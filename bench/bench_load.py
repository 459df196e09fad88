"""Load to JSON: `pitree tree FILE --json > /dev/null` against Pi's own `SessionManager.open` + `getTree`
(bench/pi_load.mjs under Node) and against the physical floor (read the file, orjson every line), all in
one run, median of several runs each, with peak memory.

usage: python bench/bench_load.py [--sizes 1000,10000,100000] [--runs 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BENCH, PITREE, fmt_s, median, run_measured, session  # noqa: E402

FLOOR = (
    "import sys, orjson\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    for line in f:\n"
    "        if line.strip(): orjson.loads(line)\n"
)


def measure(entries: int, runs: int) -> dict:
    path = session(entries)
    size_mb = path.stat().st_size / 1e6
    result: dict = {"entries": entries, "file_mb": round(size_mb, 1)}
    walls, rss = [], []
    for _ in range(runs):  # cold: an empty tree cache every run, so every line is parsed
        env = {**os.environ, "PITREE_CACHE_DIR": tempfile.mkdtemp(prefix="pitree-bench-cold-")}
        w, m, _ = run_measured([str(PITREE), "tree", str(path), "--json"], env=env)
        walls.append(w)
        rss.append(m)
    result["pitree_s"] = median(walls)
    result["pitree_rss_mb"] = median(rss)
    warm_env = {**os.environ, "PITREE_CACHE_DIR": tempfile.mkdtemp(prefix="pitree-bench-warm-")}
    run_measured([str(PITREE), "tree", str(path), "--json"], env=warm_env)  # fills the cache
    warm = [run_measured([str(PITREE), "tree", str(path), "--json"], env=warm_env) for _ in range(runs)]
    result["warm_s"] = median([w for w, _, _ in warm])
    result["warm_rss_mb"] = median([m for _, m, _ in warm])
    floor = [run_measured([sys.executable, "-c", FLOOR, str(path)])[0] for _ in range(runs)]
    result["floor_s"] = median(floor)
    if shutil.which("node") and (BENCH / "node_modules" / "@mariozechner" / "pi-coding-agent").is_dir():
        pi_wall, pi_inner, pi_rss = [], [], []
        for _ in range(runs):
            w, m, out = run_measured(["node", str(BENCH / "pi_load.mjs"), str(path)], stdout=-1)
            info = json.loads(out.decode().strip().splitlines()[-1])
            pi_wall.append(w)
            pi_inner.append(info["ms_total"] / 1000)
            pi_rss.append(m)
        result["pi_s"] = median(pi_wall)
        result["pi_open_tree_s"] = median(pi_inner)
        result["pi_rss_mb"] = median(pi_rss)
    return result


def table(results: list[dict]) -> str:
    lines = [
        "| entries | file | pitree cold | pitree warm (tree cache) | Pi process (open+getTree only) "
        "| Pi ÷ pitree cold | Pi ÷ pitree warm | pitree cold ÷ floor | pitree peak RSS cold / warm (× file) "
        "| Pi peak RSS |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        pi = f"{fmt_s(r['pi_s'])} ({fmt_s(r['pi_open_tree_s'])})" if "pi_s" in r else "n/a"

        def ratio(key: str, r: dict = r) -> str:
            if "pi_s" not in r:
                return "n/a"
            return f"{r['pi_s'] / r[key]:.2f}× ({r['pi_open_tree_s'] / r[key]:.2f}×)"

        mb = max(r["file_mb"], 0.001)
        lines.append(
            f"| {r['entries']:,} | {r['file_mb']} MB | {fmt_s(r['pitree_s'])} | {fmt_s(r['warm_s'])} | {pi} "
            f"| {ratio('pitree_s')} | {ratio('warm_s')} | {r['pitree_s'] / r['floor_s']:.1f}× ({fmt_s(r['floor_s'])}) "
            f"| {r['pitree_rss_mb']:.0f} / {r['warm_rss_mb']:.0f} MB "
            f"({r['pitree_rss_mb'] / mb:.2f}× / {r['warm_rss_mb'] / mb:.2f}×) | {r.get('pi_rss_mb', 0):.0f} MB |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = [measure(int(n), args.runs) for n in args.sizes.split(",")]
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
