"""Textual's stock `Tree` widget against pitree's line-API `TreeView` on the same rows: one `Tree` node per
visible row of Pi's layout (default filter; `all` for the deep chain), nested either as drawn (a row's parent is
the nearest row above it with a smaller indent: a chain stays at one level, as Pi draws it) or by the parent
relation (a row's parent is its nearest visible ancestor: one level per entry). Measures, headless at 160×50:
first screen (build the widget's content → its last line drawn), a cursor move (↓ → last line drawn), and
expand all (from all collapsed → the app idle again). Every run is its own process with a timeout.

usage: python bench/bench_stock_tree.py [--sizes 1000,10000,100000] [--chain 1250] [--runs 3] [--timeout 120]
       [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import cell, failure_reason, fmt_ms, fmt_n, fmt_s, median, session  # noqa: E402

NESTINGS = ("drawn", "parent")


def tree_parents(rows: list[Any], nesting: str) -> list[int]:
    """For each layout row, the row its stock-Tree node hangs under (-1 = the Tree's root)."""
    if nesting == "parent":
        return [row.parent_row for row in rows]
    out: list[int] = []
    stack: list[int] = []  # rows above with strictly increasing indents
    for i, row in enumerate(rows):
        while stack and rows[stack[-1]].indent >= row.indent:
            stack.pop()
        out.append(stack[-1] if stack else -1)
        stack.append(i)
    return out


def depth_of(parents: list[int]) -> int:
    depth = [0] * len(parents)
    for i, p in enumerate(parents):
        depth[i] = 0 if p < 0 else depth[p] + 1
    return max(depth, default=0) + 1 if parents else 0


def _layout(path: Path, mode: str):  # type: ignore[no-untyped-def]
    from pitree.session.layout import build_layout
    from pitree.store.session_file import load_session

    tree, _ = load_session(path)
    return tree, build_layout(tree, mode)


def _report(out: dict[str, float], key: str, value: float) -> None:
    """Keep a figure and print it at once: if a later step times out, the parent still has this one."""
    out[key] = value
    print(json.dumps({key: value}), flush=True)


async def run_stock(path: Path, mode: str, nesting: str) -> dict[str, float]:
    from pitree.session.text import make_safe
    from rich.text import Text
    from textual.app import App, ComposeResult
    from textual.widgets import Tree

    stree, layout = _layout(path, mode)
    rows = layout.rows
    parents = tree_parents(rows, nesting)
    drawn = [0.0]
    t0 = [0.0]

    class StockApp(App[None]):
        def _fatal_error(self) -> None:
            # Textual's own handler renders the traceback with every frame's locals: for a RecursionError in a
            # deep Tree that takes minutes. Close at once; run_test re-raises the error.
            self._close_messages_no_wait()

        def compose(self) -> ComposeResult:
            widget: Tree[None] = Tree("session")
            widget.show_root = False
            yield widget

        def on_mount(self) -> None:
            widget = self.query_one(Tree)
            original = widget.render_line

            def render_line(y: int):  # type: ignore[no-untyped-def]
                strip = original(y)
                drawn[0] = time.perf_counter()
                return strip

            widget.render_line = render_line  # type: ignore[method-assign]
            t0[0] = time.perf_counter()
            nodes: list[Any] = []
            for row, parent in zip(rows, parents, strict=True):
                label = Text(make_safe(stree.row_text(row.node), keep_newlines=False), no_wrap=True)
                under = widget.root if parent < 0 else nodes[parent]
                nodes.append(under.add(label, expand=True, allow_expand=row.nchildren > 0))
            widget.root.expand()
            widget.focus()

    app = StockApp()
    out: dict[str, float] = {}
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        if drawn[0] <= t0[0]:
            return out  # nothing drawn: the app failed, and leaving run_test raises its error
        _report(out, "first_screen", drawn[0] - t0[0])
        widget = app.query_one(Tree)

        async def timed(key: str) -> float:
            t = drawn[0] = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            return drawn[0] - t

        _report(out, "move", median([await timed("down") for _ in range(10)]))
        widget.root.collapse_all()
        await pilot.pause()
        t = time.perf_counter()
        widget.root.expand_all()
        await pilot.pause()
        _report(out, "expand_all", time.perf_counter() - t)
    if app.return_code not in (0, None):
        raise RuntimeError(f"the app ended with code {app.return_code}")
    return out


async def run_pitree(path: Path, mode: str) -> dict[str, float]:
    from pitree.widgets.tree_view import TreeView
    from textual.app import App, ComposeResult

    stree, layout = _layout(path, mode)
    drawn = [0.0]
    t0 = [0.0]

    class LineApp(App[None]):
        def compose(self) -> ComposeResult:
            yield TreeView()

        def on_mount(self) -> None:
            view = self.query_one(TreeView)
            original = view.render_line

            def render_line(y: int):  # type: ignore[no-untyped-def]
                strip = original(y)
                drawn[0] = time.perf_counter()
                return strip

            view.render_line = render_line  # type: ignore[method-assign]
            t0[0] = time.perf_counter()
            view.filter_mode = mode
            view.show_tree(stree)
            view.focus()

    app = LineApp()
    out: dict[str, float] = {}
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        if drawn[0] <= t0[0]:
            return out  # nothing drawn: the app failed, and leaving run_test raises its error
        _report(out, "first_screen", drawn[0] - t0[0])
        view = app.query_one(TreeView)
        view.action_first()
        await pilot.pause()

        async def timed(key: str) -> float:
            t = drawn[0] = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            return drawn[0] - t

        _report(out, "move", median([await timed("down") for _ in range(10)]))
        assert view.layout_ is not None
        # Fold every foldable row, then unfold them all: the same refold the unfold key runs.
        view.folded = {r.node.id for i, r in enumerate(view.layout_.rows) if view.layout_.foldable(i)}
        view._refold()
        await pilot.pause()
        t = time.perf_counter()
        view.folded.clear()
        view._refold()
        await pilot.pause()
        _report(out, "expand_all", time.perf_counter() - t)
    return out


METRICS = ("first_screen", "move", "expand_all")


def run_case(shape: str, n: int, widget: str, nesting: str, timeout: float) -> dict[str, Any]:
    """One run in a fresh process: the figures it reached, and `error` (the error, or `> timeout`) if it did
    not reach them all."""
    code = (
        "import sys; sys.setrecursionlimit(1000); "  # Python's default, said out loud: the Tree recurses per level
        f"sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_stock_tree as b; "
        f"b.child({shape!r}, {n}, {widget!r}, {nesting!r})"
    )
    error = None
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=timeout)
        stdout, stderr = done.stdout, done.stderr
        if done.returncode != 0:
            error = failure_reason(stderr.decode(errors="replace"), done.returncode)
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout if isinstance(exc.stdout, bytes) else b""
        error = f"> {timeout:.0f} s"
    result: dict[str, Any] = {}
    for line in stdout.decode(errors="replace").splitlines():
        if line.startswith("{"):
            result.update(json.loads(line))
    if any(k not in result for k in METRICS):  # all figures in but slow to exit counts as done
        result["error"] = error or "no result"
    return result


def child(shape: str, n: int, widget: str, nesting: str) -> None:
    path = session(n, shape)
    mode = "all" if shape == "chain" else "default"
    if widget == "pitree":
        asyncio.run(run_pitree(path, mode))
    else:
        asyncio.run(run_stock(path, mode, nesting))


def measure(shape: str, n: int, runs: int, timeout: float, nestings: tuple[str, ...]) -> dict[str, Any]:
    from pitree.session.layout import build_layout
    from pitree.store.session_file import load_session

    path = session(n, shape)
    mode = "all" if shape == "chain" else "default"
    tree, _ = load_session(path)
    rows = build_layout(tree, mode).rows
    res: dict[str, Any] = {"shape": shape, "entries": n, "rows": len(rows), "runs": runs, "stock": {}}

    def medians(widget: str, nesting: str) -> dict[str, Any]:
        done = []
        for _ in range(runs):
            one = run_case(shape, n, widget, nesting, timeout)
            if "error" in one:
                return one  # a failure is reported as it is, with the figures reached before it
            done.append(one)
        return {k: median([d[k] for d in done]) for k in METRICS}

    for nesting in nestings:
        res["stock"][nesting] = {"depth": depth_of(tree_parents(rows, nesting)), **medians("stock", nesting)}
    res["pitree"] = medians("pitree", "")
    return res


def _cells(r: dict[str, Any]) -> list[str]:
    """The three figures; the first one not reached says why ("fails (…)" or "> N s"), the rest are dashes."""
    out: list[str] = []
    for key in METRICS:
        if key in r:
            out.append(fmt_s(r[key]) if key == "first_screen" else fmt_ms(r[key]))
        elif len(out) == len([k for k in METRICS if k in r]) and "error" in r:
            err = r["error"]
            out.append(err if err.startswith(">") else f"fails ({cell(err)})")
        else:
            out.append("—")
    return out


def table(results: list[dict[str, Any]], timeout: float) -> str:
    lines = [
        "| session | rows | stock `Tree` nesting (depth) | stock: first screen | stock: ↓ move | stock: expand all "
        "| pitree `TreeView`: first screen | ↓ move | unfold all | stock ÷ pitree, first screen |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        p = r["pitree"]
        for nesting, s in r["stock"].items():
            what = "as drawn" if nesting == "drawn" else "by parent"
            head = f"| {fmt_n(r['entries'])} {r['shape']} | {fmt_n(r['rows'])} | {what} ({fmt_n(s['depth'])}) "
            ratio = "—"
            if "first_screen" in s and "first_screen" in p:
                ratio = f"{s['first_screen'] / p['first_screen']:.1f}×"
            lines.append(head + "| " + " | ".join(_cells(s)) + " | " + " | ".join(_cells(p)) + f" | {ratio} |")
    runs = " / ".join(map(str, sorted({r["runs"] for r in results})))
    lines.append("")
    lines.append(
        "How measured: the session loaded and laid out first (not timed), then in a fresh process per run, "
        "headless at 160×50: one stock `Tree` node per visible row (labels as `Text`, all expanded) vs "
        "`TreeView.show_tree`; first screen = content set → the widget's last line drawn; ↓ ×10 → last line "
        "drawn; expand all = from all collapsed (stock `collapse_all`/`expand_all`; pitree: fold every foldable "
        f"row, then unfold all) → the app idle again; median of {runs} runs, each capped at {timeout:.0f} s; "
        "depth = levels of `Tree` nodes."
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument(
        "--chain", default="1250", help="entries of the deep-chain case (1,250 entries = 1,016 rows; '' for none)"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--big-runs", type=int, default=1, help="runs at 100,000 entries and more")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = []
    for n in (int(x) for x in args.sizes.split(",") if x):
        runs = args.big_runs if n >= 100_000 else args.runs
        results.append(measure("normal", n, runs, args.timeout, NESTINGS))
        print(f"bench_stock_tree: {n} done", file=sys.stderr, flush=True)
    for n in (int(x) for x in args.chain.split(",") if x):
        results.append(measure("chain", n, args.runs, args.timeout, ("parent",)))
    print(table(results, args.timeout))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
