"""Tail latency: a writer appends entries (one write per entry, as Pi does) at 1, 50 and 200 per second while
the explorer watches the file for real (watchfiles); latency = write → that entry's row on screen. Measured two
ways: in a headless pilot (the row's line rendered by the tree view: `render_line` returned for the row holding
that entry) and in a real terminal (`pitree FILE` in a tmux pane: the entry's text shows in `capture-pane`).
Median and 95th percentile per rate, on a copy of a generated session of each base size.

usage: python bench/bench_tail.py [--rates 1,50,200] [--seconds 4] [--bases 1000] [--no-tmux] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    PITREE,
    BenchFailure,
    Tmux,
    bench_env,
    cell,
    fmt_ms,
    fmt_n,
    median,
    percentile,
    session,
    wait_screen,
)

MARK = re.compile(r"tail-(\d{3})-(\d{4})")


def _line(rate: int, i: int, parent: str | None) -> tuple[str, bytes]:
    eid = f"t{rate:03d}{i:04d}"
    entry = {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": "2026-12-01T00:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": f"tail-{rate:03d}-{i:04d}"}]},
    }
    return eid, orjson.dumps(entry) + b"\n"


def write_paced(
    path: Path,
    rate: int,
    count: int,
    parent: str | None,
    written: dict[str, float],
    pause: Callable[[float], Any] = time.sleep,
) -> None:
    """Append `count` entries at `rate` per second, one unbuffered write each; `written[id]` = write time."""
    interval = 1.0 / rate
    start = time.perf_counter()
    with open(path, "ab", buffering=0) as fh:
        for i in range(count):
            while (delay := start + i * interval - time.perf_counter()) > 0:
                pause(min(delay, 0.005))
            eid, line = _line(rate, i, parent)
            written[eid] = time.perf_counter()
            fh.write(line)
            parent = eid


def latencies(written: dict[str, float], seen: dict[str, float]) -> list[float]:
    """Sorted write → on-screen times. The entries form one chain in write order (`written`'s order): an entry
    counts as on screen from the first frame that drew it or any later entry (in a burst, rows can scroll past
    within one frame; a later row drawn means the view showed the tree past this one). Entries after the last
    one seen have no time."""
    out: list[float] = []
    first: float | None = None
    for eid in reversed(list(written)):
        t = seen.get(eid)
        if t is not None:
            first = t if first is None else min(first, t)
        if first is not None:
            out.append(first - written[eid])
    return sorted(out)


async def measure_pilot(rate: int, count: int, base: Path) -> dict[str, Any]:
    from pitree.widgets.app import PitreeApp
    from pitree.widgets.tree_view import TreeView

    folder = Path(tempfile.mkdtemp(prefix="pitree-tail-"))
    path = folder / "s.jsonl"
    shutil.copyfile(base, path)
    app = PitreeApp(path, watch=True)
    written: dict[str, float] = {}
    seen: dict[str, float] = {}
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            while app.explorer.stree is None or app.explorer.live is None or app.explorer.live.worker is None:
                await asyncio.sleep(0.01)
            await pilot.pause(0.3)
            # As in tmux (which waits for the process to go idle): the filter layouts are prepared first.
            while any(w.group == "prewarm" and w.is_running for w in app.workers):
                await asyncio.sleep(0.05)
            view = app.query_one(TreeView)
            original = view.render_line

            def render_line(y: int):  # type: ignore[no-untyped-def]
                strip = original(y)
                index = int(view.scroll_offset.y) + y
                if view.layout_ is not None and index < len(view.shown):
                    eid = view.layout_.rows[view.shown[index]].node.id
                    if eid in written and eid not in seen:
                        seen[eid] = time.perf_counter()
                return strip

            view.render_line = render_line  # type: ignore[method-assign]
            assert app.explorer.stree.leaf is not None
            parent = app.explorer.stree.leaf.id
            interval = 1.0 / rate
            start = time.perf_counter()
            with open(path, "ab", buffering=0) as fh:
                for i in range(count):
                    while (delay := start + i * interval - time.perf_counter()) > 0:
                        await asyncio.sleep(min(delay, 0.005))
                    eid, line = _line(rate, i, parent)
                    written[eid] = time.perf_counter()
                    fh.write(line)
                    parent = eid
            deadline = time.perf_counter() + 10
            while parent not in seen and time.perf_counter() < deadline:
                await asyncio.sleep(0.01)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return _summary(written, seen)


def measure_tmux(rate: int, count: int, base: Path) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="pitree-tail-"))
    path = folder / "s.jsonl"
    shutil.copyfile(base, path)
    written: dict[str, float] = {}
    seen: dict[str, float] = {}
    try:
        with bench_env() as env, Tmux(160, 50) as tmux:
            t0 = tmux.start([str(PITREE), str(path)], env)
            loaded = wait_screen(tmux, re.compile(r"entries · [\d,]+ branches · leaf ([0-9a-f]+)"), t0, 900)
            if loaded is None:
                raise BenchFailure("not loaded in 900 s")
            m = re.search(r"leaf ([0-9a-f]+)", loaded[1])
            assert m is not None
            tmux.wait_idle(quiet=0.5, timeout=120)
            writer = threading.Thread(target=write_paced, args=(path, rate, count, m.group(1), written))
            writer.start()
            deadline = None
            last = _line(rate, count - 1, None)[0]
            while last not in seen:
                time.sleep(0.002)  # a breath between polls: a tight loop would take CPU from pitree
                screen = tmux.capture()
                now = time.perf_counter()
                for r, i in MARK.findall(screen):
                    eid = f"t{r}{i}"
                    if eid not in seen:
                        seen[eid] = now
                if not writer.is_alive():
                    deadline = deadline or now + 10
                    if now > deadline:
                        break
            writer.join()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return _summary(written, seen)


def _summary(written: dict[str, float], seen: dict[str, float]) -> dict[str, Any]:
    lat = latencies(written, seen)
    return {
        "median": median(lat) if lat else float("nan"),
        "p95": percentile(lat, 95),
        "timed": len(lat),
        "drawn": sum(e in seen for e in written),
        "written": len(written),
    }


def _note(r: dict[str, Any]) -> str:
    notes = []
    if r["drawn"] < r["timed"]:
        notes.append(f"{r['timed'] - r['drawn']} scrolled past in a burst")
    if r["timed"] < r["written"]:
        notes.append(f"{r['written'] - r['timed']} never shown")
    return f" ({', '.join(notes)})" if notes else ""


def table(results: list[dict[str, Any]], with_tmux: bool) -> str:
    head = "| base | appends/s | entries | median append → on screen | 95th percentile |"
    sep = "|---|---|---|---|---|"
    if with_tmux:
        head += " tmux: median append → on screen | tmux: 95th percentile |"
        sep += "---|---|"
    lines = [head, sep]
    for r in results:
        p = r["pilot"]
        missing = _note(p)
        row = (
            f"| {fmt_n(r['base'])} | {r['rate']} | {p['written']}{missing} | {fmt_ms(p['median'])} "
            f"| {fmt_ms(p['p95'])} |"
        )
        if with_tmux:
            t = r.get("tmux")
            if t is None:
                row += f" fails ({cell(r.get('tmux_error', '?'))}) | — |"
            else:
                row += f" {fmt_ms(t['median'])}{_note(t)} | {fmt_ms(t['p95'])} |"
        lines.append(row)
    lines.append("")
    lines.append(
        "How measured: a copy of a generated session of `base` entries; a writer appends user messages one "
        "unbuffered write each, on a fixed schedule, while pitree watches the file; latency = write → the "
        "entry's row rendered by the tree view (headless pilot, `render_line` returned for that row)"
        + (" / → the entry's text in the tmux pane (`capture-pane` polled ~1 ms apart)" if with_tmux else "")
        + "; 95th percentile by nearest rank."
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rates", default="1,50,200")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--bases", default="1000")
    parser.add_argument("--no-tmux", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with_tmux = not args.no_tmux and Tmux.available()
    results: list[dict[str, Any]] = []
    with bench_env() as env:  # the in-process pilot too: its own cache folder, no user config
        os.environ.update({k: env[k] for k in ("PITREE_CACHE_DIR", "PITREE_CONFIG")})
        run(args, with_tmux, results)
    print(table(results, with_tmux))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


def run(args: argparse.Namespace, with_tmux: bool, results: list[dict[str, Any]]) -> None:
    for base_n in (int(b) for b in args.bases.split(",") if b):
        base = session(base_n)
        for rate in (int(r) for r in args.rates.split(",") if r):
            count = max(8, int(rate * args.seconds))  # at least 8 samples, so the 95th is not one sample
            res: dict[str, Any] = {"base": base_n, "rate": rate}
            res["pilot"] = asyncio.run(measure_pilot(rate, count, base))
            if with_tmux:
                try:
                    res["tmux"] = measure_tmux(rate, count, base)
                except BenchFailure as exc:
                    res["tmux_error"] = exc.reason
            results.append(res)
            print(f"bench_tail: base {base_n} rate {rate} done", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
