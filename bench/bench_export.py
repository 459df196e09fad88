"""Exporting a whole path (issue #19: nothing that runs after the first screen may hold the whole session): `pitree
export FILE --format md|html|jsonl` of the file's leaf against `pitree info FILE --json` (the same load, nothing
exported) as the baseline, interleaved, in the same run; time and peak memory of the whole process (sampled, with
its parse child), the tree cache warm for both. With `--explorer`, also the explorer (headless pilot) exporting
the leaf's path in Markdown once its tree is read and prepared: its memory before the export (the baseline, the
same process) against its peak while exporting.

    python bench/bench_export.py [--sizes 100000,1000000] [--runs 3] [--big-runs 1] [--explorer]

Prints a Markdown table; `--json PATH` also writes the figures. By hand (not in `make bench`): a 1M-entry
Markdown export takes ~2 min.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_big import Sampler, memory_cap_mb
from common import BENCH, PITREE, BenchFailure, bench_env, fmt_n, fmt_s, median, run_measured, session

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


PILOT = (
    "import asyncio, json, sys; sys.path.insert(0, {bench!r}); import bench_export; "
    "print(json.dumps(asyncio.run(bench_export.pilot_child({path!r}, {out!r}, {after!r}))))"
)


async def pilot_child(path: str, out: str, after: float) -> dict[str, float]:
    """In the measured process: the explorer on `path`; once its tree is read, `after` seconds (its filters are
    prepared), then `e` as the explorer runs it (root -> the file's leaf, Markdown, to `out`) until its notice."""
    from pitree.widgets.app import PitreeApp
    from pitree.widgets.screens.export_dialog import ExportChoice
    from pitree.widgets.screens.export_progress import run_export

    app = PitreeApp(Path(path))
    async with app.run_test(size=(160, 50)):
        explorer = app.explorer
        while explorer.stree is None:
            await asyncio.sleep(0.02)
        ready = time.time()
        await asyncio.sleep(after)
        start = time.time()
        tree, reader = explorer.stree, explorer.reader
        assert reader is not None and tree.leaf is not None
        run_export(explorer, tree, reader, tree.leaf, ExportChoice("md", Path(out), False, True))
        while not any(n.title in ("export", "not exported") for n in app._notifications):
            await asyncio.sleep(0.05)
        end = time.time()
        failed = [n.message for n in app._notifications if n.title == "not exported"]
        if failed:
            raise SystemExit(f"export failed: {failed[0]}")
    return {"ready_epoch": ready, "start_epoch": start, "end_epoch": end}


def explorer_export(n: int, runs: int, after: float, timeout: float) -> dict[str, Any]:
    path = session(n)
    got: list[dict[str, float]] = []
    with bench_env() as env, tempfile.TemporaryDirectory(prefix="pitree-export-") as out_dir:
        run_measured([str(PITREE), "info", str(path), "--json"], env=env, timeout=timeout)  # the tree cache, warm
        for _ in range(runs):
            out = Path(out_dir) / "out.md"
            code = PILOT.format(bench=str(BENCH), path=str(path), out=str(out), after=after)
            t0, epoch = time.perf_counter(), time.time()
            proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env)
            sampler = Sampler(proc.pid, t0, memory_cap_mb(path))
            try:
                stdout, _ = proc.communicate(timeout=timeout)
            finally:
                sampler.stop()
            if proc.returncode != 0:
                raise BenchFailure(f"explorer export: exit {proc.returncode}")
            marks = json.loads(stdout.decode().strip().splitlines()[-1])
            ready, start, end = (marks[k] - epoch for k in ("ready_epoch", "start_epoch", "end_epoch"))
            got.append(
                {
                    "before_mb": max((mb for s, mb in sampler.samples if s <= start), default=0.0),
                    "during_mb": sampler.after(start, end),
                    "export_s": end - start,
                    "ready_s": ready,
                    "out_mb": out.stat().st_size / 1e6,
                }
            )
            out.unlink()
    return {k: median([g[k] for g in got]) for k in got[0]}


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| entries | file | load only (`info --json`) | format | output | export | export ÷ load time "
        "| peak: load → export | export peak × file |\n|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for r in results:
        if "load_s" not in r and "error" not in r:
            continue  # the explorer alone (--no-cli)
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
    text = head + "\n".join(rows) + how
    shown = [r for r in results if "explorer" in r]
    if shown:
        text += (
            "\n\n**In the explorer** (headless pilot, Markdown of the leaf's path)\n\n"
            "| entries | file | export | peak before the export | peak while exporting | while ÷ before "
            "| while exporting × file |\n|---|---|---|---|---|---|---|\n"
        )
        for r in shown:
            e = r["explorer"]
            text += (
                f"| {fmt_n(r['entries'])} | {r['file_mb']:.0f} MB | {fmt_s(e['export_s'])} | {e['before_mb']:.0f} MB "
                f"| {e['during_mb']:.0f} MB | {e['during_mb'] / e['before_mb']:.2f}× "
                f"| {e['during_mb'] / r['file_mb']:.2f}× |\n"
            )
        text += (
            "\nHow measured: `pitree FILE`'s app in a headless pilot (160×50), the tree cache warm; 20 s after the "
            "tree is read (its other filters prepared), the export runs as `e` runs it; memory of the process "
            "sampled every 50 ms; before = the highest sample up to the export, while = the highest during it."
        )
    return text


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--big-runs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--explorer", action="store_true", help="also the explorer's own export, in a pilot")
    parser.add_argument("--no-cli", action="store_true", help="with --explorer: the explorer alone")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = []
    for n in [int(x) for x in args.sizes.split(",") if x]:
        runs = args.big_runs if n >= BIG else args.runs
        path = session(n)
        cli = not (args.no_cli and args.explorer)
        results.append(measure(n, runs, args.timeout) if cli else {"entries": n, "file_mb": path.stat().st_size / 1e6})
        if args.explorer:
            results[-1]["explorer"] = explorer_export(n, runs, 20.0, args.timeout)
        print(f"bench_export: {n} done", file=sys.stderr, flush=True)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
