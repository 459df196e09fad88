"""Tests for the pure helpers of the benchmark scripts (bench/common.py, bench_load, bench_tail,
bench_stock_tree, run_all, bench_big): percentiles, growth per 10×, failure reasons, latency accounting, Tree nesting,
the README block."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str) -> ModuleType:
    # bench/ is not a package: load each script by path (they import `common` from their own folder).
    if str(_BENCH) not in sys.path:
        sys.path.insert(0, str(_BENCH))
    spec = importlib.util.spec_from_file_location(name, _BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


common = _load("common")
bench_load = _load("bench_load")
bench_tail = _load("bench_tail")
bench_tui = _load("bench_tui")
bench_stock_tree = _load("bench_stock_tree")
run_all = _load("run_all")
bench_big = _load("bench_big")


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([5.0], 95, 5.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.0),
        (list(map(float, range(1, 101))), 95, 95.0),
        (list(map(float, range(1, 21))), 95, 19.0),
        ([3.0, 1.0, 2.0], 100, 3.0),
        ([3.0, 1.0, 2.0], 0, 1.0),
    ],
)
def test_percentile_nearest_rank(values: list[float], q: float, expected: float) -> None:
    assert common.percentile(values, q) == expected


def test_percentile_of_nothing_is_nan() -> None:
    assert math.isnan(common.percentile([], 95))


@pytest.mark.parametrize(
    ("n1", "v1", "n2", "v2", "expected"),
    [
        (1000, 1.0, 10_000, 10.0, 10.0),  # linear
        (1000, 1.0, 100_000, 100.0, 10.0),  # linear over two decades
        (1000, 2.0, 10_000, 2.0, 1.0),  # flat
        (1000, 1.0, 10_000, 100.0, 100.0),  # quadratic
        (1000, 1.0, 100_000, 10.0, math.sqrt(10)),
    ],
)
def test_per_decade(n1: int, v1: float, n2: int, v2: float, expected: float) -> None:
    assert common.per_decade(n1, v1, n2, v2) == pytest.approx(expected)


@pytest.mark.parametrize(("n1", "v1", "n2", "v2"), [(1000, 0.0, 10_000, 1.0), (1000, 1.0, 1000, 2.0)])
def test_per_decade_undefined_is_nan(n1: int, v1: float, n2: int, v2: float) -> None:
    assert math.isnan(common.per_decade(n1, v1, n2, v2))


NODE_STRING = """node:fs:448
    return binding.readFileUtf8(path, stringToFlags(options.flag));
                   ^

Error: Cannot create a string longer than 0x1fffffe8 characters
    at readFileSync (node:fs:448:20)
    at SessionManager.open (file:///x/session-manager.js:982:25) {
  code: 'ERR_STRING_TOO_LONG'
}

Node.js v20.20.2
"""

PY_RECURSION = """Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "/x/_tree.py", line 1270, in add_node
RecursionError: maximum recursion depth exceeded
"""


@pytest.mark.parametrize(
    ("stderr", "code", "expected"),
    [
        (NODE_STRING, 1, "Error: Cannot create a string longer than 0x1fffffe8 characters"),
        (PY_RECURSION, 1, "RecursionError: maximum recursion depth exceeded"),
        ("RangeError: Invalid string length\n", 1, "RangeError: Invalid string length"),
        ("", -9, "killed by signal 9"),
        ("some noise\nlast words\n", 3, "exit 3: last words"),
        ("", 2, "exit 2"),
    ],
)
def test_failure_reason(stderr: str, code: int, expected: str) -> None:
    assert common.failure_reason(stderr, code) == expected


def test_run_measured_reports_failure_and_timeout() -> None:
    with pytest.raises(common.BenchFailure, match="ValueError: boom"):
        common.run_measured([sys.executable, "-c", "raise ValueError('boom')"])
    with pytest.raises(common.BenchFailure, match=r"^> 1 s$"):
        common.run_measured([sys.executable, "-c", "import time; time.sleep(30)"], timeout=1)
    wall, rss, out = common.run_measured([sys.executable, "-c", "print('hi')"], stdout=-1)
    assert out == b"hi\n" and wall > 0 and rss > 1


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(0.0123, "12.3 ms"), (0.25, "250 ms"), (1.5, "1500 ms"), (12.34, "12.3 s"), (float("nan"), "n/a")],
)
def test_fmt_ms(seconds: float, expected: str) -> None:
    assert common.fmt_ms(seconds) == expected


def test_latencies_credit_rows_scrolled_past_with_the_next_frame() -> None:
    written = {"a": 0.0, "b": 0.1, "c": 0.2, "d": 0.3}
    # b was never drawn itself (it scrolled past in the frame that drew c); d was never drawn at all.
    seen = {"a": 0.05, "c": 0.25}
    assert bench_tail.latencies(written, seen) == pytest.approx([0.05, 0.05, 0.15])


def test_latencies_take_the_earliest_later_frame() -> None:
    written = {"a": 0.0, "b": 0.1}
    seen = {"a": 0.5, "b": 0.2}  # b drawn before a's own row was (a was above the screen): a was passed at 0.2
    assert bench_tail.latencies(written, seen) == pytest.approx([0.1, 0.2])


def _rows(indents: list[int], parents: list[int]) -> list[SimpleNamespace]:
    return [SimpleNamespace(indent=i, parent_row=p) for i, p in zip(indents, parents, strict=True)]


def test_tree_parents_as_drawn_and_by_parent() -> None:
    # root chain (indent 0) forking at row 2 into two branches (indent 1), the second with a chain below.
    rows = _rows([0, 0, 0, 1, 1, 1, 1], [-1, 0, 1, 2, 2, 4, 5])
    assert bench_stock_tree.tree_parents(rows, "drawn") == [-1, -1, -1, 2, 2, 2, 2]
    assert bench_stock_tree.tree_parents(rows, "parent") == [-1, 0, 1, 2, 2, 4, 5]
    assert bench_stock_tree.depth_of(bench_stock_tree.tree_parents(rows, "drawn")) == 2
    assert bench_stock_tree.depth_of(bench_stock_tree.tree_parents(rows, "parent")) == 6
    assert bench_stock_tree.depth_of([]) == 0


def test_growth_table_pairs_sizes_of_one_shape_and_marks_failures() -> None:
    results = [
        {
            "entries": 1000,
            "shape": "normal",
            "pitree_s": 1.0,
            "warm_s": 1.0,
            "pi_s": 2.0,
            "pi_open_tree_s": 0.1,
            "floor_s": 0.5,
            "pitree_rss_mb": 20.0,
            "pi_rss_mb": 100.0,
        },
        {
            "entries": 10_000,
            "shape": "normal",
            "pitree_s": 10.0,
            "warm_s": 2.0,
            "pi_s": 4.0,
            "pi_open_tree_s": 1.0,
            "floor_s": 5.0,
            "pitree_rss_mb": 40.0,
            "pi_rss_mb": 200.0,
        },
        {
            "entries": 100_000,
            "shape": "normal",
            "pitree_s": 100.0,
            "warm_s": 4.0,
            "pi_error": "boom",
            "floor_s": 50.0,
            "pitree_rss_mb": 80.0,
        },
        {
            "entries": 1_000_000,
            "shape": "tiny",
            "pitree_s": 9.0,
            "warm_s": 4.0,
            "floor_s": 1.0,
            "pitree_rss_mb": 80.0,
            "pi_error": "x",
        },
    ]
    lines = bench_load.growth_table(results).splitlines()
    body = [line for line in lines if line.startswith("| 1")]
    assert len(body) == 2  # the lone tiny row has nothing to grow from
    assert body[0].startswith("| 1,000 → 10,000 | 10.0× | 2.00× | 2.00× | 10.0× | 10.0× | 2.00× | 2.00× |")
    assert body[1].startswith("| 10,000 → 100,000 | 10.0× | 2.00× | fails | fails |")


def test_load_table_shows_a_pi_failure_as_a_cell() -> None:
    r = {
        "entries": 1_000_000,
        "shape": "normal",
        "file_mb": 1000.0,
        "runs": 1,
        "pitree_s": 50.0,
        "warm_s": 20.0,
        "floor_s": 10.0,
        "pitree_rss_mb": 2000.0,
        "warm_rss_mb": 1500.0,
        "pi_error": "Error: a | b",
    }
    row = bench_load.table([r]).splitlines()[2]
    assert "fails (Error: a / b)" in row and row.count("|") == 11


def test_replace_block() -> None:
    readme = f"intro\n{run_all.BEGIN}\nold\n{run_all.END}\noutro\n"
    assert run_all.replace_block(readme, "new") == f"intro\n{run_all.BEGIN}\nnew\n{run_all.END}\noutro\n"
    assert run_all.replace_block("no markers", "new") is None


def test_kib_become_mb_of_a_million_bytes_as_file_sizes_are() -> None:
    assert common.kib_to_mb(1_000_000) == 1024.0  # 1,000,000 KiB = 1,024,000,000 bytes
    assert common.kib_to_mb(0) == 0.0


def test_the_explorer_bench_knows_where_exact_counts_wait_for_t() -> None:
    from pitree.widgets.explorer_state import EXACT_TOKENS_FROM

    assert bench_tui.EXACT_FROM == EXACT_TOKENS_FROM


def test_explorer_table_shows_the_peak_with_exact_counts_where_measured() -> None:
    pilot = {"first_screen": 0.9, "move": 0.002, "page": 0.01, "fold": 0.01, "filter": 0.01, "search": 0.06}
    pilot |= {"matches": 10, "peak_rss_mb": 171.0}
    small = {"entries": 1000, "file_mb": 1.0, "runs": 3, "pilot": {**pilot, "peak_rss_mb": 89.0}}
    big = {"entries": 100000, "file_mb": 100.0, "runs": 3, "pilot": pilot, "exact_peak_mb": 196.4}
    table = bench_tui.pilot_table([small, big]).splitlines()
    assert table[2].endswith("| 89 MB (89.00×) |")
    assert table[3].endswith("| 171 MB (1.71×); with t: 196 MB (1.96×) |")


def test_big_memory_figures_take_the_sample_at_the_first_screen_and_the_highest_after_it() -> None:
    sampler = bench_big.Sampler.__new__(bench_big.Sampler)
    sampler.samples = [(0.1, 50.0), (1.0, 800.0), (2.0, 900.0), (2.5, 1200.0), (3.0, 1000.0)]
    figures = bench_big.memory_figures(sampler, 2.2)
    assert figures == {"peak_mb": 1200.0, "first_mb": 900.0, "growth_mb": 300.0}
    assert bench_big.memory_figures(sampler, 9.0)["growth_mb"] == 0.0  # nothing sampled after it
    # the growth over an idle spell only (the keys measured after it do not count), the peak over the whole run
    assert bench_big.memory_figures(sampler, 0.5, 2.2) == {"peak_mb": 1200.0, "first_mb": 50.0, "growth_mb": 850.0}


def test_big_table_shows_failures_as_cells_and_ratios_against_pi() -> None:
    ok = {"first_s": 2.0, "ready_s": 3.0, "peak_mb": 150.0, "first_mb": 120.0, "growth_mb": 20.0}
    rows = [
        {
            "entries": 100_000,
            "file_mb": 100.0,
            "runs": 3,
            "pi_s": 4.0,
            "pi_inner_s": 2.0,
            "pi_peak_mb": 400.0,
            "json_cold_s": 2.0,
            "json_cold_mb": 120.0,
            "json_warm_s": 1.0,
            "json_warm_mb": 110.0,
            "pilot_cold": ok,
            "pilot_warm": ok,
            "tmux_error": "over 9 GB, stopped",
        },
        {"entries": 10_000_000, "file_mb": 10_000.0, "runs": 1, "pi_error": "not run", "json_error": "> 6000 s"},
    ]
    text = bench_big.table(rows, 30)
    assert "| 0.50× / 0.25× (1.00× / 0.50×) |" in text
    assert "| 100,000 | tmux | fails (over 9 GB, stopped) |" in text
    assert "fails (not run)" in text and "fails (> 6000 s)" in text
    assert "+20 / +20 MB" in text
    assert "| 100,000 | pilot | 2000 ms / 2000 ms | 0.50× / 0.50× | 3000 ms / 3000 ms |" in text
    assert "↑ move" not in text  # no keys measured: no keys table
    keys = {"key_move": 0.0042, "key_page": 0.021, "key_fold": 0.013, "key_filter": 0.017, "key_search": 0.59}
    rows[0]["pilot_warm"] = {**ok, **keys, "key_matches": 160518.0}
    text = bench_big.table(rows, 30)
    assert "| 100,000 | 4.2 ms | 21.0 ms | 13.0 ms | 17.0 ms | 590 ms (160,518) |" in text
