"""A big tree's search runs in a thread (`TreeNav.search_in_thread_from`; 0 here, so the demo session counts as big):
typing never waits for it, a newer query cancels the older, Enter pressed meanwhile goes to the first match once
found, a filter change finds the kept matches' rows again, and new entries bring another search. Its matches are
always what the search of the whole tree finds at once (the small-tree path, Pi's rule)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from pitree.session.layout import tokens_of
from pitree.session.search_index import SearchIndex
from pitree.widgets.tree_nav import TreeNav
from pitree.widgets.tree_view import TreeView

from tests.sessions import user
from tests.ui import test_app
from tests.ui.test_app import append, cursor, make_app, until

demo = test_app.demo  # the fixture: a copy of the demo session


@pytest.fixture(autouse=True)
def in_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TreeNav, "search_in_thread_from", 0)


def expected(view: TreeView, query: str) -> list[int]:
    """The rows whose entry's search text (or label) holds every word: the definition, entry by entry."""
    tree, layout = view.stree, view.layout_
    assert tree is not None and layout is not None
    tokens = tokens_of(query)
    return [i for i, node in enumerate(layout.rows.iter_nodes()) if all(t in tree.search_text(node) for t in tokens)]


class Gate:
    """`SearchIndex.matching` waits for `open` in the worker thread (so a search is seen running)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.open = threading.Event()
        self.calls: list[tuple[str, ...]] = []
        real = SearchIndex.matching

        def matching(index: SearchIndex, tokens: list[str], cancelled: Any = None) -> Any:
            self.calls.append(tuple(tokens))
            self.open.wait(10)
            return real(index, tokens) if cancelled is None else real(index, tokens, cancelled)

        monkeypatch.setattr(SearchIndex, "matching", matching)


async def test_the_matches_come_from_the_thread_and_equal_the_whole_search(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        await pilot.press("slash", *"cache.py")
        await until(pilot, lambda: not view.searching)
        assert list(view.matches) == expected(view, "cache.py") and len(view.matches) >= 2
        assert app.explorer.status_bar.status.matches == f"{len(view.matches)} matches"
        await pilot.press("ctrl+o")  # another filter: the kept matches' rows, no new search
        assert not view.searching and list(view.matches) == expected(view, "cache.py")


async def test_typing_is_not_held_up_a_newer_query_wins_and_enter_goes_to_the_first_match(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch)
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        view.select_id("40665560")
        await pilot.press("slash", *"zzz")
        assert view.searching and app.explorer.status_bar.status.matches == "searching…"
        await pilot.press("backspace", "backspace", "backspace", *"cache.py")  # typed while the searches wait
        assert view.searching and list(view.matches) == []
        await pilot.press("enter")
        assert app.explorer.status_bar.status.matches == "searching…"
        gate.open.set()
        await until(pilot, lambda: not view.searching)
        assert list(view.matches) == expected(view, "cache.py")
        assert view.shown[view.cursor] in view.matches  # Enter's jump, made when the matches came
        assert app.explorer.status_bar.status.matches.startswith("match ")
        assert gate.calls[-1] == ("cache.py",)


@pytest.mark.writes_session  # the test appends, standing in for Pi
async def test_new_entries_bring_another_search(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        await pilot.press("slash", *"quokka", "enter")
        await until(pilot, lambda: not view.searching)
        assert list(view.matches) == []
        append(demo, user("f0000001", "40665560", "a quokka question"))
        await app.explorer.live.check()
        await until(pilot, lambda: cursor(app) == "f0000001" and not view.searching and len(view.matches) == 1)
        assert list(view.matches) == expected(view, "quokka")


def test_a_cancelled_scan_returns_none() -> None:
    from pitree.session.load import load_bytes

    from tests.sessions import to_bytes

    tree = load_bytes(to_bytes([user(f"u{i}", f"u{i - 1}" if i else None, f"word {i}", t=i) for i in range(5000)]))
    assert len(tree.search_index.matching(["word"])) == 5000
    assert tree.search_index.matching(["word"], cancelled=lambda: True) is None
    asked: list[int] = []
    assert tree.search_index.matching(["word"], cancelled=lambda: asked.append(1) or False) is not None
    assert len(asked) >= 2  # checked between blocks


async def test_another_session_gets_its_own_search_not_the_last_ones_matches(demo: Path, tmp_path: Path) -> None:
    from tests.sessions import write_session_file

    other = write_session_file(
        tmp_path / "other.jsonl",
        [user("o1", None, "nothing here", t=1), user("o2", "o1", "edit cache.py now", t=2)],
    )
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        await pilot.press("slash", *"cache.py", "enter")
        await until(pilot, lambda: not view.searching and len(view.matches) >= 2)
        first = app.explorer.stree
        app.explorer.open_session(other)
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.stree is not first)
        view.set_search("cache.py")
        await until(pilot, lambda: not view.searching)
        assert list(view.matches) == expected(view, "cache.py") and len(view.matches) == 1
