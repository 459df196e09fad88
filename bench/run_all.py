"""`make bench`: every benchmark in one run; writes bench/out/results.md and the figures block of README.md.

usage: python bench/run_all.py [--quick]   (--quick: 1k and 10k only, fewer runs)
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
README = BENCH.parent / "README.md"


def run(script: str, *args: str) -> str:
    out = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        return f"({script} failed: {out.stderr.strip()[-300:]})"
    return out.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = "1000,10000" if args.quick else "1000,10000,100000"
    runs = "2" if args.quick else "5"
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    sections = [
        f"Measured {started} on {platform.machine()}, {platform.python_version()}, "
        f"`python bench/run_all.py{' --quick' if args.quick else ''}`.",
        "**Load to JSON** (`bench/bench_load.py`): wall time of the whole process; for Pi also its in-process "
        "`SessionManager.open` + `getTree` time in parentheses; floor = read the file and `orjson.loads` each line.",
        run("bench_load.py", "--sizes", sizes, "--runs", runs),
        "**Explorer** (`bench/bench_tui.py`): first screen with the tree (headless pilot / real terminal in tmux), "
        "keypress → tree redrawn, search of the whole tree, peak memory of the process.",
        run("bench_tui.py", "--sizes", sizes, "--runs", "1" if args.quick else "3"),
        "**Live tail** (`bench/bench_tail.py`): a writer appends one entry per write while the explorer watches.",
        run("bench_tail.py"),
    ]
    text = "\n\n".join(sections)
    (BENCH / "out").mkdir(exist_ok=True)
    (BENCH / "out" / "results.md").write_text(text + "\n")
    readme = README.read_text()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    if begin in readme and end in readme:
        head, rest = readme.split(begin, 1)
        _, tail = rest.split(end, 1)
        README.write_text(f"{head}{begin}\n{text}\n{end}{tail}")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
