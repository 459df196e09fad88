"""Background work (the other filters' layouts, the search index) waits between chunks while the user presses
keys (`PitreeApp.pause_for_input`), so it does not take the interpreter lock from the UI; it goes on once input
has been quiet for `INPUT_QUIET` seconds."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pitree.widgets.app as app_module
from pitree.widgets.tree_view import TreeView

from tests.ui import test_app
from tests.ui.test_app import make_app, until

demo = test_app.demo  # the fixture: a copy of the demo session


async def test_a_key_holds_background_work_until_input_is_quiet(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        started = time.monotonic()
        app.pause_for_input()
        assert time.monotonic() - started < 0.1  # no key yet: nothing to wait for
        before = time.monotonic()
        await pilot.press("up")
        assert before <= app.input_at <= time.monotonic()  # a key press is noted
        waited: list[float] = []

        def work() -> None:
            t = time.monotonic()
            app.pause_for_input()
            waited.append(time.monotonic() - t)

        app.input_at = time.monotonic()
        worker = threading.Thread(target=work)
        worker.start()
        for _ in range(5):  # input keeps coming: the work keeps waiting
            time.sleep(0.1)
            assert not waited
            app.input_at = time.monotonic()
        worker.join(5)
        assert waited and waited[0] >= 0.5 + app_module.INPUT_QUIET - 0.05  # all the input, then the quiet


async def test_the_filters_are_prepared_with_the_pace(demo: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    app = make_app(demo)
    paced: list[int] = []
    real = app_module.PitreeApp.pause_for_input

    def counting(self) -> None:  # type: ignore[no-untyped-def]
        paced.append(1)
        real(self)

    monkeypatch.setattr(app_module.PitreeApp, "pause_for_input", counting)
    monkeypatch.setattr("pitree.session.layout.PACE_MASK", 0xF)  # the demo is small: pace every 16 entries
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        # The explorer prepares them after its first screen (waiting on that worker races with its own start).
        modes = ("default", "no-tools", "user-only", "labeled-only", "all")
        await until(pilot, lambda: all(view.has_layout(mode) for mode in modes))
        assert paced
