"""Exporting a whole path (issue #19: nothing that runs after the first screen may hold the whole session): `pitree
export FILE --format md|html|jsonl` of the file's leaf against `pitree info FILE --json` (the same load, nothing
exported) as the baseline, interleaved, in the same run; time and peak memory of the whole process (sampled, with
its parse child), the tree cache warm for both.

    python bench/bench_export.py [--sizes 100000,1000000] [--runs 3] [--big-runs 1]

Prints a Markdown table; `--json PATH` also writes the figures. By hand (not in `make bench`): a 1M-entry
Markdown export takes ~2 min.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import PITREE, BenchFailure, bench_env, fmt_n, fmt_s, median, run_measured, session

FORMATS = ("md", "html", "jsonl")
BIG = 1_000_000


def measure(n: int, runs: int, timeout: float) -> dict[str, Any]:
    path = session(n)
    file_mb = path.stat().st_size / 1e6
    load = [str(PITREE), "info", str(path), "--json"]
    figures: dict[str, list[tuple[float, float]]] = {"load": [], **{f: [] for f in FORMATS}}
    sizes: dict[str, float] = {}
    with bench_env() as env, tempfile.TemporaryDirectory(prefix="pitree-export-") as out_dir:
        run_measured(load, env=env, timeout=timeout)  # fills the tree cache: every run below is warm
        for _ in range(runs):
            wall, peak, _ = run_measured(load, env=env, timeout=timeout)
            figures["load"].append((wall, peak))
            for fmt in FORMATS:
                out = Path(out_dir) / f"out.{fmt}"
                cmd = [str(PITREE), "export", str(path), "--format", fmt, "-o", str(out), "--force"]
                try:
                    wall, peak, _ = run_measured(cmd, env=env, timeout=timeout)
                except BenchFailure as exc:
                    return {"entries": n, "file_mb": file_mb, "error": f"{fmt}: {exc.reason}"}
                figures[fmt].append((wall, peak))
                sizes[fmt] = out.stat().st_size / 1e6
                out.unlink()
    result: dict[str, Any] = {"entries": n, "file_mb": file_mb, "runs": runs}
    for name, values in figures.items():
        result[f"{name}_s"] = median([w for w, _ in values])
        result[f"{name}_mb"] = median([m for _, m in values])
    result.update({f"{fmt}_out_mb": size for fmt, size in sizes.items()})
    return result


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| entries | file | load only (`info --json`) | format | output | export | export ÷ load time "
        "| peak: load → export | export peak × file |\n|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for r in results:
        if "error" in r:
            rows.append(f"| {fmt_n(r['entries'])} | {r['file_mb']:.0f} MB | fails ({r['error']}) |||||||")
            continue
        load = f"{fmt_s(r['load_s'])}, {r['load_mb']:.0f} MB"
        for fmt in FORMATS:
            rows.append(
                f"| {fmt_n(r['entries'])} | {r['file_mb']:.0f} MB | {load} | {fmt} | {r[f'{fmt}_out_mb']:.0f} MB "
                f"| {fmt_s(r[f'{fmt}_s'])} | {r[f'{fmt}_s'] / r['load_s']:.2f}× "
                f"| {r['load_mb']:.0f} → {r[f'{fmt}_mb']:.0f} MB ({r[f'{fmt}_mb'] / r['load_mb']:.2f}×) "
                f"| {r[f'{fmt}_mb'] / r['file_mb']:.2f}× |"
            )
    how = (
        "\n\nHow measured: each command a fresh process with the tree cache warm (filled by a first load, not "
        "counted), the load and the three exports interleaved, median of the runs; peak = the process's own peak "
        "RSS or its and its parse child's PSS sampled every 50 ms, in MB of 10^6 bytes; the export is of the "
        "file's leaf, root → leaf, written to a temporary folder."
    )
    return head + "\n".join(rows) + how


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--big-runs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = []
    for n in [int(x) for x in args.sizes.split(",") if x]:
        results.append(measure(n, args.big_runs if n >= BIG else args.runs, args.timeout))
        print(f"bench_export: {n} done", file=sys.stderr, flush=True)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
