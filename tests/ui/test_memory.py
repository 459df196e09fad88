"""What runs after the explorer's first screen (the other filters' layouts, the search index, the entry pane,
keys) must not hold the session a second time, and an idle explorer must not grow (issue #19)."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from pitree.widgets import explorer_state, loading_pane
from pitree.widgets.app import PitreeApp

from tests.sessions import assistant, tool_result, user, write_session
from tests.ui.test_app import until


def _session(tmp_path: Path, turns: int) -> Path:
    """`turns` of user -> assistant with a tool call -> tool result, about 1.3 KB an entry, one branch."""
    entries, parent = [], None
    prose = "the quick brown fox reads src/app.py and edits it " * 20
    for i in range(turns):
        u, a, r = f"u{i:05d}", f"a{i:05d}", f"r{i:05d}"
        entries.append(user(u, parent, f"question {i}: {prose}", t=i))
        entries.append(assistant(a, u, f"answer {i}: {prose}", t=i, calls=[(f"c{i}", "read", {"path": f"f{i}.py"})]))
        entries.append(tool_result(r, a, f"c{i}", text=f"contents {i}: {prose}", t=i))
        parent = r if i != turns // 2 else u  # a branch half-way
    return write_session(tmp_path, entries, name=f"s{turns}.jsonl")


def _traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def _after_first_screen(path: Path) -> tuple[int, int]:
    """(bytes the explorer added from its first screen to idle after the background work and some keys,
    bytes it added while idle after that)."""
    app = PitreeApp(path, watch=False)
    marks: list[int] = []
    prewarm = app.explorer.prewarm_layouts

    def measured_prewarm(measure: bool = False) -> None:  # the first thing the first screen leaves for later
        marks.append(_traced())
        prewarm(measure)

    app.explorer.prewarm_layouts = measured_prewarm  # type: ignore[method-assign]
    tracemalloc.start()
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: bool(marks))
            at_first_screen = marks[0]
            await app.workers.wait_for_complete()  # the other filters' layouts and the search index
            for key in ("up", "pageup", "ctrl+o", "end", "ctrl+o", "home", "down"):
                await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause(0.2)
            settled = _traced()
            for _ in range(5):
                await pilot.pause(0.1)
            idle = _traced()
    finally:
        tracemalloc.stop()
    return settled - at_first_screen, idle - settled


async def test_after_the_first_screen_memory_grows_by_under_half_the_file_and_stays_flat_when_idle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As in a big session: no tiktoken tables unless asked for (they are a fixed ~30 MB, not the session's).
    monkeypatch.setattr(explorer_state, "EXACT_TOKENS_FROM", 0)
    small, large = _session(tmp_path, 200), _session(tmp_path, 1000)
    await _after_first_screen(small)  # the first run in a process also imports what the later ones reuse
    small_growth, _ = await _after_first_screen(small)
    large_growth, idle = await _after_first_screen(large)
    # Textual's own costs are the same at both sizes: what differs is what the session costs. The other
    # filters' layouts and the search index come to about a third of the file; a second copy of the session
    # (its lines, its parsed entries) would add the whole file again.
    more_file = large.stat().st_size - small.stat().st_size
    assert large_growth - small_growth < more_file * 0.8, (large_growth - small_growth, more_file)
    assert idle < 256 * 1024, idle


async def test_collection_stays_off_from_the_load_until_the_first_screen_then_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    off_after_load: list[bool] = []
    load = loading_pane.load_session_fast

    def observed_load(*args: Any, **kwargs: Any) -> Any:
        loaded = load(*args, **kwargs)
        off_after_load.append(not gc.isenabled())  # in the worker, between the load and the first screen
        return loaded

    monkeypatch.setattr(loading_pane, "load_session_fast", observed_load)
    app = PitreeApp(_session(tmp_path, 50), watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await app.workers.wait_for_complete()
        await until(pilot, gc.isenabled)
    assert off_after_load == [True]


async def test_a_load_that_fails_unexpectedly_gives_collection_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_load(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the loader")

    monkeypatch.setattr(loading_pane, "load_session_fast", broken_load)
    app = PitreeApp(_session(tmp_path, 5), watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await until(pilot, gc.isenabled)
