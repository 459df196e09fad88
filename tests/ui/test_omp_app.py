"""The explorer on an oh-my-pi session: opens with its title, model and image; a title slot rewritten in place
renames it without a reload; a jump with a summary is appended with omp's fromId and leaves the slot alone."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from pitree.store import blobs
from pitree.widgets.entry_view import EntryView
from pitree.widgets.tree_view import TreeView

from tests.omp_files import SLOT_BYTES, assistant, case16, rewrite_slot, user
from tests.ui.test_app import cursor, make_app, until


@pytest.fixture
def omp_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setattr(blobs, "_known", [])
    path, _ = case16(tmp_path)
    with open(path, "ab") as fh:
        for e in (user("u2", "a1", "and now?", t=5), assistant("a2", "u2", "now this", t=6)):
            fh.write(orjson.dumps(e) + b"\n")
    return path


@pytest.mark.writes_session  # the test rewrites the slot as oh-my-pi does
async def test_opens_and_follows_a_slot_rename(omp_session: Path) -> None:
    app = make_app(omp_session)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        tree = app.explorer.stree
        assert tree.dialect == "omp" and tree.skipped == [] and cursor(app) == "a2"
        assert app.explorer.status_bar.status.name == "Fix the parser"
        app.query_one(TreeView).select_id("u1")
        entry = app.query_one(EntryView)
        await until(pilot, lambda: entry.node is not None and entry.node.id == "u1")
        rewrite_slot(omp_session, "Renamed in omp")
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        assert app.explorer.stree is tree  # no reload
        assert tree.name == "Renamed in omp" and app.explorer.status_bar.status.name == "Renamed in omp"


async def test_jump_with_summary_follows_omp(omp_session: Path) -> None:
    from pitree.widgets.screens.jump_dialog import JumpDialog

    slot = omp_session.read_bytes()[:SLOT_BYTES]
    app = make_app(omp_session)
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        app.query_one(TreeView).select_id("a1")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JumpDialog))
        dialog = app.screen
        await until(pilot, lambda: dialog.job is not None)
        await pilot.click("#summarize")
        await until(pilot, lambda: dialog.phase == "review")
        await pilot.click("#append")
        await until(pilot, lambda: app.explorer.stree.leaf.type == "branch_summary")
        leaf = app.explorer.stree.leaf
        assert leaf.parent.id == "a1" and leaf.meta["fromId"] == "a1"  # omp: fromId is where it branched from
        assert omp_session.read_bytes()[:SLOT_BYTES] == slot


async def test_the_browser_lists_omp_beside_pi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No --session-dir: Pi's folder and oh-my-pi's are both scanned; each row names its agent; the subagents
    sit under their session, and one opens like a session."""
    from pitree.widgets.app import PitreeApp
    from pitree.widgets.screens.browser import BrowserScreen, BrowserState
    from pitree.widgets.screens.rows_table import RowsTable

    from tests.unit.test_omp_cli import _store

    home = tmp_path / "home"
    for var in ("PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "PI_CONFIG_DIR", "OMP_PROFILE", "PI_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "no-xdg"))
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    store = _store(home)
    app = PitreeApp(None, watch=False, browser=BrowserState(cwd=str(store["cwd"])))
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and len(app.screen.rows) == 4)
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        rows = [(s.path.name, s.agent, depth) for s, depth in screen.rows]
        assert rows[0] == (store["parent"].name, "omp", 0) and rows[-1] == (store["pi"].name, "pi", 0)
        assert ("scout.jsonl", "omp", 1) in rows
        table = screen.query_one(RowsTable)
        assert [str(table.get_row_at(i)[-1]) for i in range(4)] == ["oh-my-pi", "oh-my-pi sub", "oh-my-pi sub", "pi"]
        table.move_cursor(row=1)
        await pilot.press("enter")
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.stree.header is not None)
        assert app.explorer.stree.header["id"] == "019a0000-0000-7000-8000-0000000000b1"


async def test_context_view_says_it_followed_omp(omp_session: Path) -> None:
    from pitree.widgets.screens.context_view import ContextScreen
    from textual.widgets import Static

    app = make_app(omp_session)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ContextScreen))
        head = str(app.screen.query_one("#ctx-head", Static).render())
        assert "rules: oh-my-pi's" in head and "model a/x" in head
