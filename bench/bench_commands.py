"""The scripting commands on one big session (issue #19: a command over a million entries must not take minutes
or gigabytes): `pitree tree` (text), `context` (text and JSON), `compactions`, `usage`, `info`, `label` and
`branch` (on a copy; each appends a line), against `pitree tree FILE --json` (the load and one pass over the
rows) as the baseline, interleaved, in the same run; time and peak memory of the whole process, the tree cache
warm for all. A run past `--timeout` shows as failed (the old text tree took over 10 min at 1M).

    python bench/bench_commands.py [--sizes 100000,1000000] [--runs 3] [--big-runs 1] [--timeout 300]

Prints a Markdown table; `--json PATH` also writes the figures. To compare with older code, run it with
`PYTHONPATH` at that code's package (as the A/B runs in the README did). By hand (not in `make bench`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import PITREE, BenchFailure, bench_env, cell, fmt_n, fmt_s, median, run_measured, session

BIG = 1_000_000
COMMANDS = ("tree", "context", "context --json", "compactions", "usage", "info", "label", "branch")


def _argv(name: str, path: Path, target: str, n: int) -> list[str]:
    if name == "label":
        return ["label", str(path), target, f"bench {n}", "--yes"]
    if name == "branch":
        return ["branch", str(path), "--to", target, "--summary", "extractive", "--yes"]
    return [*name.split()[:1], str(path), *name.split()[1:]]


def _middle_id(path: Path) -> str:
    """The id of the entry mid-way through the file (a branch there leaves half the session behind), read without
    holding the file: this process's memory is every child's starting peak (Linux keeps it across exec)."""
    with open(path, "rb") as fh:
        lines = sum(1 for _ in fh)
        fh.seek(0)
        for i, line in enumerate(fh):
            if i == lines // 2:
                return str(json.loads(line)["id"])
    raise ValueError(f"{path}: empty")


def measure(n: int, runs: int, timeout: float) -> dict[str, Any]:
    source = session(n)
    figures: dict[str, list[tuple[float, float]]] = {"baseline": [], **{c: [] for c in COMMANDS}}
    errors: dict[str, str] = {}
    with bench_env() as env, tempfile.TemporaryDirectory(prefix="pitree-commands-") as folder:
        path = Path(folder) / source.name  # a copy: label and branch append to it
        shutil.copyfile(source, path)
        env["PI_CODING_AGENT_DIR"] = str(Path(folder) / "agent")  # no Pi settings: the offline summary
        baseline = [str(PITREE), "tree", str(path), "--json"]
        run_measured(baseline, env=env, timeout=timeout)  # fills the tree cache
        target = _middle_id(path)
        for _ in range(runs):
            wall, peak, _ = run_measured(baseline, env=env, timeout=timeout)
            figures["baseline"].append((wall, peak))
            for name in COMMANDS:
                if name in errors:
                    continue
                try:
                    wall, peak, _ = run_measured([str(PITREE), *_argv(name, path, target, n)], env=env, timeout=timeout)
                except BenchFailure as exc:
                    errors[name] = exc.reason
                    continue
                figures[name].append((wall, peak))
    result: dict[str, Any] = {"entries": n, "file_mb": source.stat().st_size / 1e6, "runs": runs, "errors": errors}
    for name, values in figures.items():
        if values:
            result[name] = {"s": median([w for w, _ in values]), "mb": median([m for _, m in values])}
    return result


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| entries | command | time | ÷ baseline | peak memory | × file |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        base = r["baseline"]
        lines.append(
            f"| {fmt_n(r['entries'])} | baseline: `tree --json` | {fmt_s(base['s'])} | 1.00× | {base['mb']:,.0f} MB"
            f" | {base['mb'] / r['file_mb']:.2f}× |"
        )
        for name in COMMANDS:
            if name in r["errors"]:
                lines.append(f"| {fmt_n(r['entries'])} | `{name}` | fails ({cell(r['errors'][name])}) | — | — | — |")
                continue
            f = r[name]
            lines.append(
                f"| {fmt_n(r['entries'])} | `{name}` | {fmt_s(f['s'])} | {f['s'] / base['s']:.2f}× | {f['mb']:,.0f} MB"
                f" | {f['mb'] / r['file_mb']:.2f}× |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--big-runs", type=int, default=1, help="runs at 1M entries and more")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a run counts as failed")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = []
    for n in [int(s) for s in args.sizes.split(",") if s]:
        results.append(measure(n, args.big_runs if n >= BIG else args.runs, args.timeout))
        print(f"{n:,} entries measured", file=sys.stderr)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
