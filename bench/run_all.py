"""`make bench`: every benchmark in one run; writes bench/out/results.md, the raw figures as bench/out/*.json, and
the figures block of README.md (between `<!-- bench:begin -->` and `<!-- bench:end -->`).

usage: python bench/run_all.py [--quick] [--no-store] [--no-readme]
  --quick      1k entries (load also 10k), 1-2 runs: a smoke run of every script in a few minutes, written to
               bench/out/results.quick.md; README.md is left alone
  --no-store   without the sessions-list benchmark (bench/bench_store.py: 3,000 sessions against Pi 1.6's listAll)
  --no-readme  write bench/out/results.md only

Full run, sizes and repeats, chosen to stay near 35 minutes on a 2-core machine (the 1M-entry files, 1 GB and
190 MB, are generated once into bench/out/, ~1.5 min more the first time):
- load to JSON: 1k/10k/100k/1M entries of the normal shape and 1M of the tiny shape, median of 3 runs, 1 run for
  files of 500 MB and more (a cold pitree load of 1 GB takes minutes);
- explorer: pilot and tmux at 1k/10k/100k/1M, 3 runs, 1 at 1M, where the cold first screen is the pilot's only;
- one big session: 100k (3 runs) and 1M entries (2 runs), each explorer left 30 s past its first screen
  (~15 min more; `bench/bench_big.py --10m` adds a 10M-entry session, by hand only);
- live tail: 1, 50 and 200 appends/s on 1k- and 100k-entry sessions;
- stock Tree: 1k/10k (3 runs), 100k (1 run, capped at 120 s a run) and a 1,016-deep chain.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out"
README = BENCH.parent / "README.md"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def run(script: str, *args: str) -> tuple[str, float]:
    """The script's stdout (its tables) and how long it took; its stderr (progress) is passed on as it comes,
    and a failure becomes one line in the results with the end of that stderr."""
    t0 = time.perf_counter()
    cmd = [sys.executable, str(BENCH / script), *args]
    print(f"run_all: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tail: list[str] = []

    def relay() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            sys.stderr.write(line)
            tail[:] = [*tail[-19:], line]

    relayer = threading.Thread(target=relay, daemon=True)
    relayer.start()
    # Not communicate(): it would read stderr too, racing the relay for its lines.
    killer = threading.Timer(3600, proc.kill)
    killer.start()
    assert proc.stdout is not None
    out = proc.stdout.read()
    proc.wait()
    killer.cancel()
    relayer.join()
    if proc.returncode == -9:
        return f"({script} did not finish within an hour)", time.perf_counter() - t0
    took = time.perf_counter() - t0
    print(f"run_all: {script} took {took:.0f} s", file=sys.stderr, flush=True)
    if proc.returncode != 0:
        return f"({script} failed: {''.join(tail).strip()[-300:]})", took
    return out.strip(), took


def _node_version() -> str:
    if not shutil.which("node"):
        return "no Node.js"
    done = subprocess.run(["node", "--version"], capture_output=True, text=True)
    return f"Node {done.stdout.strip()}"


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f} (5 min: {five:.1f})"


def replace_block(readme: str, text: str) -> str | None:
    """README text with the figures block replaced, or None when the markers are missing."""
    if BEGIN not in readme or END not in readme:
        return None
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{text}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-store", action="store_true")
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    q = args.quick
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_at_start = _load()
    t0 = time.perf_counter()
    jobs: list[tuple[str, str, list[str]]] = [
        (
            "**Load to JSON** (`bench/bench_load.py`): `pitree tree FILE --json` against Pi's "
            "`SessionManager.open` + `getTree` and the orjson floor.",
            "bench_load.py",
            ["--sizes", "1000,10000", "--tiny", "", "--runs", "2"]
            if q
            else ["--sizes", "1000,10000,100000,1000000", "--tiny", "1000000", "--runs", "3", "--big-runs", "1"],
        ),
        (
            "**Explorer** (`bench/bench_tui.py`): first screen, keypress → tree redrawn, search, peak memory "
            "(headless pilot; first screen also in tmux).",
            "bench_tui.py",
            ["--sizes", "1000", "--runs", "1", "--keys", "4"]
            if q
            else ["--sizes", "1000,10000,100000,1000000", "--runs", "3", "--big-runs", "1"],
        ),
        (
            "**One big session** (`bench/bench_big.py`, issue #19): Pi 1.6 against `tree --json` and the explorer's "
            "first screen, memory sampled over the whole run and the quiet spell after the first screen.",
            "bench_big.py",
            ["--sizes", "10000", "--runs", "1", "--after", "3", "--no-tmux"]
            if q
            else ["--sizes", "100000,1000000", "--runs", "3", "--big-runs", "2", "--after", "30"],
        ),
        (
            "**Live tail** (`bench/bench_tail.py`): append → the entry's row on screen while the explorer watches.",
            "bench_tail.py",
            ["--seconds", "2", "--bases", "1000"] if q else ["--seconds", "4", "--bases", "1000,100000"],
        ),
        (
            "**Textual's stock `Tree` vs pitree's line-API `TreeView`** (`bench/bench_stock_tree.py`): the "
            "same rows in both widgets.",
            "bench_stock_tree.py",
            ["--sizes", "1000", "--chain", "1250", "--runs", "1", "--timeout", "60"]
            if q
            else [
                "--sizes",
                "1000,10000,100000",
                "--chain",
                "1250",
                "--runs",
                "3",
                "--big-runs",
                "1",
                "--timeout",
                "120",
            ],
        ),
    ]
    if not args.no_store:
        jobs.append(
            (
                "**Sessions list** (`bench/bench_store.py`): first rows, cold build, second start and an append, "
                "against Pi 1.6's `SessionManager.listAll`.",
                "bench_store.py",
                ["--sessions", "200", "--size", "30M", "--runs", "2"] if q else ["--sessions", "3000", "--runs", "3"],
            )
        )
    sections: list[str] = []
    took: list[str] = []
    for title, script, script_args in jobs:
        json_out = OUT / (Path(script).stem + (".quick" if q else "") + ".json")
        extra = ["--json", str(json_out)] if script != "bench_store.py" else []
        text, seconds = run(script, *script_args, *extra)
        sections += [title, text]
        took.append(f"{Path(script).stem} {seconds / 60:.1f} min")
    total = time.perf_counter() - t0
    command = f"python bench/run_all.py{' --quick' if q else ''}{' --no-store' if args.no_store else ''}"
    header = (
        f"Measured {started} on {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{_node_version()}, `{command}` ({total / 60:.0f} min: {', '.join(took)}). Load average at the start "
        f"{load_at_start}, at the end {_load()}: other work on the machine slows every figure, pitree's and "
        "Pi's alike; the ratios are measured side by side in the same run."
    )
    text = "\n\n".join([header, *sections])
    (OUT / ("results.quick.md" if q else "results.md")).write_text(text + "\n")
    if not q and not args.no_readme:
        updated = replace_block(README.read_text(), text)
        if updated is None:
            print(f"run_all: README.md has no {BEGIN} … {END} block; not updated", file=sys.stderr)
        else:
            README.write_text(updated)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
