"""Load to JSON: `pitree tree FILE --json > /dev/null` (cold: an empty tree cache; warm: the cache filled by the
cold run) against Pi's own `SessionManager.open` + `getTree` (bench/pi_load.mjs under Node) and against the
physical floor (read the file, orjson every line), all in one run, median of several runs each, with peak
memory (RSS of each child alone, wait4). A run that fails or times out is a table cell ("fails (reason)").

usage: python bench/bench_load.py [--sizes 1000,10000,100000,1000000] [--tiny 1000000] [--runs 5]
       [--big-runs 1] [--timeout 900] [--json OUT]
(`--tiny`: extra rows of the minimal-entry shape, ~190 bytes per entry, where a million entries still fit in
what Pi can read; `--big-runs`: runs at a million entries or 500 MB and more.)
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    BENCH,
    PITREE,
    BenchFailure,
    bench_env,
    cell,
    fmt_n,
    fmt_s,
    fmt_x,
    median,
    per_decade,
    run_measured,
    session,
)

FLOOR = (
    "import sys, orjson\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    for line in f:\n"
    "        if line.strip(): orjson.loads(line)\n"
)
BIG_BYTES = 500_000_000
BIG_ENTRIES = 1_000_000  # a million tiny entries load in about a minute each way: as costly as 1 GB


def _pi_available() -> bool:
    return bool(shutil.which("node")) and (BENCH / "node_modules" / "@mariozechner" / "pi-coding-agent").is_dir()


def measure(entries: int, runs: int, shape: str = "normal", timeout: float = 900) -> dict[str, Any]:
    path = session(entries, shape)
    size_mb = path.stat().st_size / 1e6
    result: dict[str, Any] = {"entries": entries, "shape": shape, "file_mb": round(size_mb, 1), "runs": runs}
    cmd = [str(PITREE), "tree", str(path), "--json"]
    walls, rss = [], []
    with bench_env() as warm_env:
        try:
            for i in range(runs):
                # Cold: an empty tree cache every run, so every line is parsed. The last cold run fills the
                # cache the warm runs use.
                if i == runs - 1:
                    w, m, _ = run_measured(cmd, env=warm_env, timeout=timeout)
                else:
                    with bench_env() as env:
                        w, m, _ = run_measured(cmd, env=env, timeout=timeout)
                walls.append(w)
                rss.append(m)
            result["pitree_s"] = median(walls)
            result["pitree_rss_mb"] = median(rss)
            warm = [run_measured(cmd, env=warm_env, timeout=timeout) for _ in range(runs)]
            result["warm_s"] = median([w for w, _, _ in warm])
            result["warm_rss_mb"] = median([m for _, m, _ in warm])
        except BenchFailure as exc:
            result["pitree_error"] = exc.reason
    floor = [run_measured([sys.executable, "-c", FLOOR, str(path)], timeout=timeout) for _ in range(runs)]
    result["floor_s"] = median([w for w, _, _ in floor])
    result["floor_rss_mb"] = median([m for _, m, _ in floor])
    if _pi_available():
        pi_wall, pi_inner, pi_rss = [], [], []
        try:
            for _ in range(runs):
                w, m, out = run_measured(["node", str(BENCH / "pi_load.mjs"), str(path)], stdout=-1, timeout=timeout)
                info = json.loads(out.decode().strip().splitlines()[-1])
                pi_wall.append(w)
                pi_inner.append(info["ms_total"] / 1000)
                pi_rss.append(m)
            result["pi_s"] = median(pi_wall)
            result["pi_open_tree_s"] = median(pi_inner)
            result["pi_rss_mb"] = median(pi_rss)
        except BenchFailure as exc:
            result["pi_error"] = exc.reason
    else:
        result["pi_error"] = "Node.js or Pi's package missing (bench/setup_node.sh)"
    return result


def _label(r: dict[str, Any]) -> str:
    return fmt_n(r["entries"]) + ("" if r.get("shape", "normal") == "normal" else f" ({r['shape']})")


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| entries | file | pitree cold | pitree warm (tree cache) | Pi process (open+getTree only) "
        "| Pi ÷ pitree cold | Pi ÷ pitree warm | pitree cold ÷ floor | pitree peak RSS cold / warm (× file) "
        "| Pi peak RSS (× file) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ok_pi = "pi_s" in r
        ok_pt = "pitree_s" in r
        pi = f"{fmt_s(r['pi_s'])} ({fmt_s(r['pi_open_tree_s'])})" if ok_pi else f"fails ({cell(r['pi_error'])})"

        def ratio(key: str, r: dict[str, Any] = r) -> str:
            if "pi_s" not in r or "pitree_s" not in r:
                return "—"
            return f"{fmt_x(r['pi_s'] / r[key])} ({fmt_x(r['pi_open_tree_s'] / r[key])})"

        mb = max(r["file_mb"], 0.001)
        if ok_pt:
            cold, warm = fmt_s(r["pitree_s"]), fmt_s(r["warm_s"])
            floor = f"{r['pitree_s'] / r['floor_s']:.1f}× ({fmt_s(r['floor_s'])})"
            mem = (
                f"{r['pitree_rss_mb']:.0f} / {r['warm_rss_mb']:.0f} MB "
                f"({r['pitree_rss_mb'] / mb:.2f}× / {r['warm_rss_mb'] / mb:.2f}×)"
            )
        else:
            cold, warm, floor, mem = f"fails ({cell(r['pitree_error'])})", "—", f"— ({fmt_s(r['floor_s'])})", "—"
        pi_mem = f"{r['pi_rss_mb']:.0f} MB ({r['pi_rss_mb'] / mb:.2f}×)" if ok_pi else "—"
        lines.append(
            f"| {_label(r)} | {r['file_mb']:g} MB | {cold} | {warm} | {pi} | {ratio('pitree_s')} | {ratio('warm_s')} "
            f"| {floor} | {mem} | {pi_mem} |"
        )
    runs = sorted({r["runs"] for r in results})
    lines.append("")
    lines.append(
        f"How measured: wall time of each whole process (Python or Node start-up included; Pi's in-process "
        f"`open`+`getTree` in parentheses), median of {' / '.join(map(str, runs))} runs (fewer at 1M entries); "
        "peak RSS = the larger of the process's own peak (wait4) and the peak PSS sum of it and its forked "
        "parse child (sampled every 50 ms), in MB of 10^6 bytes as the file sizes are; floor = one Python "
        "process reading the file and `orjson.loads` on every line; a run that errs or passes the time limit "
        "shows as fails (reason)."
    )
    return "\n".join(lines)


GROWTH_KEYS = (
    ("pitree cold", "pitree_s"),
    ("pitree warm", "warm_s"),
    ("Pi process", "pi_s"),
    ("Pi open+getTree", "pi_open_tree_s"),
    ("floor", "floor_s"),
    ("pitree peak RSS cold", "pitree_rss_mb"),
    ("Pi peak RSS", "pi_rss_mb"),
)


def growth_table(results: list[dict[str, Any]]) -> str:
    """Per 10× entries, between successive sizes of the same shape: 10× = grows in proportion."""
    by_shape: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_shape.setdefault(r.get("shape", "normal"), []).append(r)
    pairs = []
    for rows in by_shape.values():
        rows = sorted(rows, key=lambda r: r["entries"])
        pairs += list(zip(rows, rows[1:], strict=False))
    if not pairs:
        return ""
    head = "| entries | " + " | ".join(name for name, _ in GROWTH_KEYS) + " |"
    lines = [head, "|---|" + "---|" * len(GROWTH_KEYS)]
    for a, b in pairs:
        cells = []
        for _, key in GROWTH_KEYS:
            if key in a and key in b:
                cells.append(fmt_x(per_decade(a["entries"], a[key], b["entries"], b[key])))
            else:
                cells.append("fails" if ("pi" in key and "pi_error" in b) or "pitree_error" in b else "n/a")
        lines.append(f"| {_label(a)} → {_label(b)} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "How measured: from the table above, (value at the larger size ÷ value at the smaller) per 10× entries; "
        "10× = grows in proportion to the entries, below 10× = fixed costs (process start, imports) still weigh."
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--tiny", default="1000000", help="sizes of the tiny shape too ('' for none)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--big-runs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    cases = [("normal", int(n)) for n in args.sizes.split(",") if n]
    cases += [("tiny", int(n)) for n in args.tiny.split(",") if n]
    results = []
    for shape, n in cases:
        big = n >= BIG_ENTRIES or session(n, shape).stat().st_size >= BIG_BYTES
        results.append(measure(n, args.big_runs if big else args.runs, shape, args.timeout))
        print(f"bench_load: {shape} {n} done", file=sys.stderr, flush=True)
    print(table(results))
    growth = growth_table(results)
    if growth:
        print()
        print("**Growth per 10× entries** (load to JSON)")
        print()
        print(growth)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
