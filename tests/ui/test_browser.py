"""The sessions browser (`pitree` with no file), through Textual's pilot, on a store made in tmp_path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pitree.widgets.app import PitreeApp
from pitree.widgets.screens.browser import BrowserScreen, BrowserState
from pitree.widgets.screens.rows_table import RowsTable
from textual.widgets import Footer, Input

from tests.sessions import assistant, header, user, write_session_file
from tests.ui.test_app import cursor, until

HERE = "/home/me/proj"
ELSEWHERE = "/home/me/other"


def _header(sid: str, cwd: str, **extra: Any) -> dict[str, Any]:
    return {**header(), "id": sid, "cwd": cwd, **extra}


def _write(root: Path, cwd: str, name: str, sid: str, entries: list[dict[str, Any]], **extra: Any) -> Path:
    folder = root / ("--" + cwd.strip("/").replace("/", "-") + "--")
    folder.mkdir(parents=True, exist_ok=True)
    return write_session_file(folder / f"{name}_{sid}.jsonl", entries, head=_header(sid, cwd, **extra))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    first = _write(root, HERE, "2026-01-01T00-00-00-000Z", "aaaa1111", [user("u1", None, "plan the parser", t=5)])
    _write(
        root,
        HERE,
        "2026-01-02T00-00-00-000Z",
        "bbbb2222",
        [user("u1", None, "fork of the parser", t=9), assistant("a1", "u1", "the zebra-striped answer", t=10)],
        parentSession=str(first),
    )
    _write(root, ELSEWHERE, "2026-01-03T00-00-00-000Z", "cccc3333", [user("x1", None, "somewhere else", t=7)])
    return root


def make(store: Path) -> PitreeApp:
    state = BrowserState(session_dir=str(store), cwd=HERE)
    return PitreeApp(None, watch=False, browser=state, config_overrides={"summarizer": "extractive"})


def browser(app: PitreeApp) -> BrowserScreen:
    screen = app.screen
    assert isinstance(screen, BrowserScreen)
    return screen


def titles(app: PitreeApp) -> list[str]:
    return [s.title for s, _ in browser(app).rows]


async def test_lists_this_folder_first_then_all_with_forks_under_parents(store: Path) -> None:
    app = make(store)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).stats is not None)
        assert titles(app) == ["plan the parser", "fork of the parser"]
        assert [d for _, d in browser(app).rows] == [0, 1]  # the fork sits under its parent
        await pilot.press("tab")
        assert sorted(titles(app)) == ["fork of the parser", "plan the parser", "somewhere else"]
        first = browser(app).rows[0][0]
        assert first.entries >= 1 and first.branches == 1 and first.size > 0


async def test_open_a_session_and_come_back_with_escape(store: Path) -> None:
    app = make(store)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).rows)
        assert not app.explorer.is_mounted  # composed when a session is chosen: the first rows come sooner
        await pilot.press("down", "enter")
        await until(pilot, lambda: app.explorer.stree is not None)
        assert app.explorer.path.name.endswith("bbbb2222.jsonl") and cursor(app) == "a1"
        assert list(app.screen.children) == [app.explorer, app.screen.query_one(Footer)]
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).rows)
        table = browser(app).query_one(RowsTable)
        assert table.cursor_row == 1  # the session just left stays selected
        await pilot.press("up", "enter")
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.path.name.endswith("aaaa1111.jsonl"))
        assert cursor(app) == "u1"


async def test_search_opens_the_session_at_the_matching_entry(store: Path) -> None:
    app = make(store)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).stats is not None)
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*'"zebra-striped"')
        await until(pilot, lambda: browser(app).mode == "hits" and browser(app).hits)
        assert [(h.entry_id, h.kind) for h in browser(app).hits] == [("a1", "assistant")]
        await pilot.press("enter", "enter")
        await until(pilot, lambda: app.explorer.stree is not None)
        assert app.explorer.path.name.endswith("bbbb2222.jsonl") and cursor(app) == "a1"


async def test_bad_regex_is_reported_and_escape_clears_the_search(store: Path) -> None:
    app = make(store)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).stats is not None)
        await pilot.press("slash", *"re:(")
        await until(pilot, lambda: browser(app).mode == "hits")
        head = str(browser(app).query_one("#browser-head").render())
        assert "regex" in head.lower() or "regular expression" in head.lower()
        await pilot.press("escape")
        assert browser(app).mode == "sessions" and not browser(app).query_one(Input).display


async def test_a_new_session_appears_live(store: Path) -> None:
    app = make(store)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).stats is not None)
        _write(store, HERE, "2026-01-04T00-00-00-000Z", "dddd4444", [user("n1", None, "brand new", t=20)])
        await until(pilot, lambda: "brand new" in titles(app), timeout=15)


async def test_q_quits_from_the_browser(store: Path) -> None:
    app = make(store)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen))
        await pilot.press("q")
        await until(pilot, lambda: app.return_code is not None)


async def test_the_session_left_is_freed(store: Path) -> None:
    import gc
    import weakref

    app = make(store)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).rows)
        await pilot.press("enter")
        await until(pilot, lambda: app.explorer.stree is not None)
        first = weakref.ref(app.explorer.stree)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).rows)
        await pilot.press("down", "enter")
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.stree is not first())
        # Nothing (view, entry pane, frozen generation) keeps the old tree alive. A worker thread may still
        # be finishing with it for a moment, so it need not be gone at once, only soon.
        await until(pilot, lambda: gc.collect() >= 0 and first() is None, timeout=10)


@pytest.mark.parametrize("width", [80, 160])
async def test_the_numbers_stay_on_screen_at_80_columns(store: Path, width: int) -> None:
    from tests.ui.screenshot import screen_text

    app = make(store)
    async with app.run_test(size=(width, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).stats is not None)
        await until(pilot, lambda: "entries" in screen_text(app) and "size" in screen_text(app))
        head = next(line for line in screen_text(app).split("\n") if "last activity" in line)
        assert "branches" in head and head.index("size") < width
        if width >= 160:
            assert "cwd" in head and "compactions" in head
        await pilot.press("tab")  # every folder: the cwd column tells the sessions apart
        await until(pilot, lambda: "cwd" in screen_text(app))


async def test_rows_arrive_while_indexing_and_x_stops_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    import pitree.store.index_load as index_load

    root = tmp_path / "sessions"
    for i in range(40):
        _write(root, HERE, f"2026-01-01T00-00-{i:02d}-000Z", f"dddd{i:04d}", [user("u1", None, f"task {i}", t=i)])
    release = threading.Event()
    real = index_load.load_one
    calls: list[str] = []

    def slow(*args: Any) -> Any:  # the build stalls after 20 files until the test lets it go
        calls.append(args[0])
        if len(calls) > 20:
            release.wait(10)
        return real(*args)

    monkeypatch.setattr(index_load, "load_one", slow)
    monkeypatch.setattr(BrowserScreen, "refresh_in_own_process", False)  # so that `slow` is what reads
    app = make(root)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).rows)
        screen = browser(app)
        assert screen.refreshing and 0 < len(screen.rows) < 40  # first rows before the whole build
        await until(pilot, lambda: screen._indexing is not None)
        head = str(screen.query_one("#browser-head").render())
        assert "indexing" in head and "x stops" in head
        await pilot.press("slash", "x")  # typed into the search box: not a key for the list
        assert screen.refreshing and screen.query_one(Input).value == "x"
        await pilot.press("escape", "x")
        assert not screen.refreshing
        release.set()
        await until(pilot, lambda: screen._refresh is not None and not screen._refresh.running)
        assert len(calls) < 40 and screen.stats is None  # stopped: the rest was never read
        assert "indexing stopped" in str(screen.query_one("#browser-head").render())


async def test_the_refresh_process_lists_rows_as_it_goes_and_x_ends_it(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    entries = [user("u0", None, "task", t=0)] + [user(f"u{j}", f"u{j - 1}", "go on " * 40, t=j) for j in range(1, 300)]
    for i in range(400):  # 47 MB: a second or more of reading
        _write(root, HERE, f"2026-01-01T{i // 3600:02d}-{i // 60 % 60:02d}-{i % 60:02d}-000Z", f"e{i:07d}", entries)
    app = make(root)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).rows)
        screen = browser(app)
        refresh = screen._refresh
        assert refresh is not None and refresh._child is not None  # the child process reads
        await until(pilot, lambda: screen._indexing is not None)
        await pilot.press("x")
        assert not screen.refreshing
        child = refresh._child
        await until(pilot, lambda: child.poll() is not None)  # it ended, told by its stdin closing
        # What it was writing when stopped is listed once it has ended.
        await until(pilot, lambda: len(screen.rows) == len(screen.index.sessions(root=root)))
        assert screen.stats is None and "indexing stopped" in str(screen.query_one("#browser-head").render())
        assert 0 < len(screen.rows) < 400


async def test_a_refresh_that_fails_says_so_and_ends(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitree.store.session_index import SessionIndex

    def broken(*_args: Any, **_kw: Any) -> None:
        raise OSError("disk I/O error \x1b[31mred")

    monkeypatch.setattr(SessionIndex, "refresh", broken)
    monkeypatch.setattr(BrowserScreen, "refresh_in_own_process", False)  # so that `broken` is what refreshes
    app = make(store)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and not browser(app).refreshing)
        head = str(browser(app).query_one("#browser-head").render())
        assert "indexing failed: OSError: disk I/O error" in head and "\x1b" not in head
        assert "indexing " not in head.replace("indexing failed", "")  # not left saying it is still indexing


async def test_the_console_holds_the_app_size(store: Path) -> None:
    """Rich would ask the terminal for its size on each cell DataTable measures; the app keeps it up to date."""
    app = make(store)
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).stats is not None)
        assert tuple(app.console.size) == (150, 40)
        await pilot.resize_terminal(90, 25)
        await until(pilot, lambda: tuple(app.console.size) == (90, 25))


async def test_a_relist_keeps_the_cursor_on_its_session_and_a_newer_one_shows_at_the_top(store: Path) -> None:
    from pitree.store.catalog import find_session_paths

    app = make(store)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and browser(app).stats is not None)
        screen = browser(app)
        table = screen.query_one(RowsTable)
        await pilot.press("down")
        chosen = screen.rows[1][0].path

        def drawn(y: int) -> str:
            return "".join(segment.text for segment in table.render_line(y))

        for i in range(3):  # older than every listed session: they go below
            _write(store, HERE, f"2025-06-0{i + 1}T00-00-00-000Z", f"0ld{i:05d}", [user("o", None, f"old {i}", t=1)])
        screen.index.refresh(find_session_paths(store), root=store)
        screen.show_sessions()
        await pilot.pause()
        assert table.rows is screen.rows and len(screen.rows) == 5
        assert table.cursor_row == 1 and screen.state.selected == str(chosen)
        assert "old 2" in drawn(5) or "old 0" in drawn(5)

        _write(store, HERE, "2026-02-01T00-00-00-000Z", "new00000", [user("n", None, "newest", t=99)])
        screen.index.refresh(find_session_paths(store), root=store)
        screen.show_sessions()
        await pilot.pause()
        assert "new00000" in str(screen.rows[0][0].path) and "newest" in drawn(1)  # the list at its top stays there
        assert screen.rows[table.cursor_row][0].path == chosen and table.cursor_row == 2
