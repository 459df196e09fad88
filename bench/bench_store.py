"""Sessions browser on a big store: cold index build, warm `ls`, search, against Pi's own `listAll` and a plain
walk+stat floor, all in one run. Prints a markdown table.

usage: python bench/bench_store.py [--sessions 2000] [--size 2G] [--runs 5] [--store DIR]

The store (bench/gen_store.py) is made once under bench/out/ and reused. Measured:
- cold: a fresh cache folder, one child process refreshing the index of every session (progress shown on this
  terminal's stderr as `pitree ls` shows it); its wall time and when the first progress line could appear;
- warm ls: `list_sessions(all)` (refresh = stat every file + read the index, then Pi's threaded order) in this
  process, and a whole `python -c` child doing the same and printing the JSON `pitree ls --all --json` prints
  (and `pitree ls --all --json` itself once cli.py has the command); median of --runs;
- warm search: a word query (FTS5) and a `re:` query (reads every document), in process;
- Pi: `SessionManager.listAll()` under Node (what Pi's /resume reads every time: every file, every line);
- floor: walking the store and stat-ing every file, which any warm list has to do too.
Target (issue 5): warm list under 1 s for 2,000 sessions / 2 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BENCH, OUT, PITREE, fmt_s, median, run_measured  # noqa: E402
from gen_store import generate_store, parse_size  # noqa: E402

PI_MANAGER = BENCH / "node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js"

COLD = """
import json, sys, time
from pitree.store.catalog import find_session_files
from pitree.store.session_index import SessionIndex
root = sys.argv[1]
started = time.perf_counter()
first = []
def progress(done, total, done_bytes, total_bytes):
    if not first:
        first.append(time.perf_counter() - started)
    if sys.stderr.isatty():
        mb, total_mb = done_bytes / 1e6, total_bytes / 1e6
        sys.stderr.write(f"\\rcold index: {done}/{total} files, {mb:.0f}/{total_mb:.0f} MB\\x1b[K")
with SessionIndex() as idx:
    stats = idx.refresh(find_session_files(__import__("pathlib").Path(root)), progress=progress)
if sys.stderr.isatty():
    sys.stderr.write("\\r\\x1b[K")
print(json.dumps({"seconds": time.perf_counter() - started, "first_progress": first[0] if first else None,
                  "added": stats.added, "errors": stats.errors}))
"""

WARM_LS = """
import sys
from pitree.cli.browse import list_sessions, _info_json
import orjson
root, rows, errors = list_sessions(sys.argv[1], True)
sys.stdout.buffer.write(orjson.dumps({"root": str(root), "sessions": [_info_json(s, d) for s, d in rows]}))
"""

PI_LIST = """
import { performance } from "node:perf_hooks";
const t0 = performance.now();
const { SessionManager } = await import(process.argv[1]);
const t1 = performance.now();
const all = await SessionManager.listAll();
const t2 = performance.now();
console.log(JSON.stringify({ sessions: all.length, ms_import: t1 - t0, ms_list: t2 - t1 }));
"""


def store_path(sessions: int, size: int) -> Path:
    return OUT / f"store-{sessions}-{size >> 20}M" / "sessions"  # Pi wants <agent dir>/sessions


def ensure_store(root: Path, sessions: int, size: int) -> dict:
    marker = root.parent / "stats.json"
    if marker.exists() and root.is_dir():
        return json.loads(marker.read_text())
    if root.parent.exists():
        shutil.rmtree(root.parent)
    root.parent.mkdir(parents=True)
    started = time.perf_counter()
    stats = generate_store(root, sessions, size, seed=1)
    stats["seconds"] = round(time.perf_counter() - started, 1)
    marker.write_text(json.dumps(stats))
    return stats


def walk_stat(root: Path) -> tuple[int, int]:
    files = total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            if name.endswith(".jsonl"):
                total += os.stat(os.path.join(folder, name)).st_size
                files += 1
    return files, total


def timed(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    values = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        values.append(time.perf_counter() - t0)
    return median(values)


def pitree_has_ls() -> bool:
    out = subprocess.run([str(PITREE), "ls", "--help"], capture_output=True, text=True)
    return out.returncode == 0 and "pitree ls" in out.stdout.split("\n", 1)[0]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--size", type=parse_size, default=2 << 30, help="total store size (default 2G)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--store", type=Path, help="an existing sessions folder to use instead of a generated one")
    parser.add_argument("--no-pi", action="store_true", help="skip Pi's listAll")
    args = parser.parse_args()
    root = args.store or store_path(args.sessions, args.size)
    if args.store is None:
        ensure_store(root, args.sessions, args.size)
    files, total = walk_stat(root)

    cache = tempfile.mkdtemp(prefix="pitree-bench-store-")
    env = {**os.environ, "PITREE_CACHE_DIR": cache}
    os.environ["PITREE_CACHE_DIR"] = cache  # the in-process measurements share the child's index
    try:
        proc = subprocess.run([sys.executable, "-c", COLD, str(root)], stdout=subprocess.PIPE, env=env, check=True)
        cold = json.loads(proc.stdout)
        db = Path(cache) / "sessions.sqlite3"
        db_mb = sum(p.stat().st_size for p in Path(cache).glob("sessions.sqlite3*")) / 1e6

        from pitree.cli.browse import list_sessions
        from pitree.store.session_index import SessionIndex

        listed = len(list_sessions(str(root), True)[1])
        warm_in = timed(lambda: list_sessions(str(root), True), args.runs)
        warm_py = median(
            [run_measured([sys.executable, "-c", WARM_LS, str(root)], env=env)[0] for _ in range(args.runs)]
        )
        warm_cli = None
        if pitree_has_ls():
            cmd = [str(PITREE), "ls", "--all", "--json", "--session-dir", str(root)]
            warm_cli = median([run_measured(cmd, env=env)[0] for _ in range(args.runs)])
        with SessionIndex(db) as idx:
            word_hits = len(idx.search("session manager"))
            search_word = timed(lambda: idx.search("session manager"), args.runs)
            search_re = timed(lambda: idx.search(r"re:fix(ed|es)? the \w+ bug"), max(1, args.runs // 2))
        floor = timed(lambda: walk_stat(root), args.runs)
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    pi = None
    if not args.no_pi and shutil.which("node") and PI_MANAGER.exists():
        pi_env = {**os.environ, "PI_CODING_AGENT_DIR": str(root.parent), "NODE_OPTIONS": "--max-old-space-size=8192"}
        try:
            wall, rss, out = run_measured(
                ["node", "--input-type=module", "-e", PI_LIST, PI_MANAGER.as_uri()], stdout=subprocess.PIPE, env=pi_env
            )
            pi = {**json.loads(out.decode().strip().splitlines()[-1]), "wall": wall, "rss": rss}
        except (RuntimeError, ValueError) as exc:
            pi = {"error": str(exc)[-200:]}

    gb = total / 1e9
    lines = [
        f"Store: {files} sessions, {gb:.2f} GB (`bench/gen_store.py`); index {db_mb:.0f} MB; "
        f"{listed} sessions listed; median of {args.runs}.",
        "",
        "| measurement | time | note |",
        "|---|---|---|",
        f"| cold index build | {fmt_s(cold['seconds'])} | {cold['added']} sessions, {cold['errors']} errors, "
        f"{gb / cold['seconds'] * 1000:.0f} MB/s; first progress after "
        f"{fmt_s(cold['first_progress'] or 0)} |",
        f"| warm ls, in process | {fmt_s(warm_in)} | refresh (stat {files} files) + list + threading |",
        f"| warm ls, `python -c` child | {fmt_s(warm_py)} | whole process, JSON on stdout |",
    ]
    if warm_cli is not None:
        lines.append(f"| warm `pitree ls --all --json` | {fmt_s(warm_cli)} | whole process |")
    lines += [
        f"| warm search `session manager` | {fmt_s(search_word)} | FTS5, {word_hits} hits (limit 200) |",
        f"| warm search `re:…` | {fmt_s(search_re)} | reads every document |",
        f"| floor: walk + stat | {fmt_s(floor)} | what any warm list must do |",
    ]
    if pi is None:
        lines.append("| Pi `listAll` | n/a | Node or Pi's package missing (bench/setup_node.sh) |")
    elif "error" in pi:
        lines.append(f"| Pi `listAll` | failed | {pi['error'].replace('|', '/')} |")
    else:
        lines.append(
            f"| Pi `listAll` (every time) | {fmt_s(pi['ms_list'] / 1000)} | {pi['sessions']} sessions; whole process "
            f"{fmt_s(pi['wall'])}, peak {pi['rss']:.0f} MB |"
        )
    best = warm_cli if warm_cli is not None else warm_py
    lines.append("")
    lines.append(f"Target warm list < 1 s: {'met' if best < 1 else 'not met'} ({fmt_s(best)} whole process).")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
