"""The compare screen through Textual's pilot: mark (m), compare (d), the two sides in one table that scrolls
as one, Enter going to the chosen side's entry, Escape, and the palette's two entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from pitree.widgets.compare import CompareRequested
from pitree.widgets.screens.diff_screen import DiffScreen, DiffTable
from textual.coordinate import Coordinate

from tests.sessions import chain, user, write_session_file
from tests.ui.test_app import cursor, make_app, until
from tests.unit.test_diff import forked


async def _open_diff(pilot, app) -> DiffScreen:  # type: ignore[no-untyped-def]
    await pilot.press("d")
    await until(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None)
    screen = app.screen
    assert isinstance(screen, DiffScreen)
    return screen


async def test_mark_compare_enter_and_escape(tmp_path: Path) -> None:
    path = write_session_file(tmp_path / "s.jsonl", forked())
    app = make_app(path)
    messages: list[object] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        assert app.explorer.go_to_entry("aa2")
        await pilot.press("m")
        assert app.explorer.marked_id == "aa2"
        view = app.explorer.tree_view
        marked_row = view.layout_.row_of(app.explorer.stree.get("aa2"))
        assert "◆ " in view.row_text(marked_row).plain  # the mark is drawn in the tree
        assert app.explorer.go_to_entry("ab2")
        assert "◆ " not in view.row_text(view.cursor).plain
        screen = await _open_diff(pilot, app)
        assert [(m.a, m.b) for m in messages if isinstance(m, CompareRequested)] == [("aa2", "ab2")]
        assert screen.diff is not None and screen.diff.ancestor is not None and screen.diff.ancestor.id == "r1"
        table = screen.query_one(DiffTable)
        assert table.row_count == len(screen.table_rows) and table.has_focus
        labels = [r.label for r in screen.table_rows]
        turn2 = labels.index("turn 2")
        table.cursor_coordinate = Coordinate(turn2, 1)
        assert screen.target() is None  # A has no second turn
        await pilot.press("enter")
        assert isinstance(app.screen, DiffScreen)  # nothing to go to: the screen stays
        await pilot.press("right")
        assert screen.target() == "ub2"
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, DiffScreen))
        assert cursor(app) == "ub2"
        # Escape closes where it was; m on the marked entry unmarks; d without a mark compares with the leaf
        assert app.explorer.go_to_entry("aa2")
        await pilot.press("m")
        assert app.explorer.marked_id is None
        assert "◆ " not in view.row_text(view.cursor).plain
        screen = await _open_diff(pilot, app)
        assert screen.diff is not None and (screen.diff.a.id, screen.diff.b.id) == ("ab2", "aa2")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, DiffScreen))
        assert cursor(app) == "aa2"


async def test_both_sides_scroll_together(tmp_path: Path) -> None:
    entries = chain(80)
    entries += [user("x1", entries[3]["id"], "other way", t=200), user("x2", "x1", "and again", t=201)]
    path = write_session_file(tmp_path / "s.jsonl", entries)
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        assert app.explorer.go_to_entry("e0000079")  # B; A is the leaf, x2, the file's last line
        screen = await _open_diff(pilot, app)
        table = screen.query_one(DiffTable)
        assert table.scroll_y == 0
        await pilot.press("end")
        await until(pilot, lambda: table.scroll_y > 0)
        last = table.row_count - 1
        label, a_cell, b_cell = table.get_row_at(last)
        assert str(label) == "turn 38" and str(a_cell) == "—" and "u78" in str(b_cell)
        # one table: the row under the cursor holds the same turn in both columns
        row = screen.table_rows[table.cursor_coordinate.row]
        assert row.turn == 37 and row.a_id is None and row.b_id == "e0000078"
        await pilot.press("home")
        await until(pilot, lambda: table.scroll_y == 0)


async def test_palette_entries(tmp_path: Path) -> None:
    path = write_session_file(tmp_path / "s.jsonl", forked())
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        assert app.explorer.go_to_entry("aa2")
        commands["Compare with the marked entry"].callback()
        await pilot.pause()
        assert not isinstance(app.screen, DiffScreen)  # nothing is marked yet: a notice instead
        commands["Compare with the leaf"].callback()
        await until(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None)
        assert isinstance(app.screen, DiffScreen) and app.screen.diff is not None
        assert (app.screen.diff.a.id, app.screen.diff.b.id) == ("ab2", "aa2")


async def test_hostile_text_stays_inert(tmp_path: Path) -> None:
    hostile = "\x1b[31mred\x1b]0;t\x07 [bold]x[/bold] \u202eevil"
    entries = [user("u", None, "start"), user("h1", "u", hostile, t=1), user("h2", "u", "plain", t=2)]
    path = write_session_file(tmp_path / "s.jsonl", entries)
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        assert app.explorer.go_to_entry("h1")
        screen = await _open_diff(pilot, app)  # A: the leaf h2, B: h1
        table = screen.query_one(DiffTable)
        cells = [str(c) for r in range(table.row_count) for c in table.get_row_at(r)]
        shown = "\n".join(cells)
        assert "[bold]x[/bold]" in shown and "␛[31mred" in shown  # as typed, escapes made visible
        assert not any(ch in shown for ch in "\x1b\x07\u202e")


async def test_e_writes_markdown_after_a_yes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitree.widgets.screens.confirm_dialog import ConfirmDialog

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    path = write_session_file(tmp_path / "s.jsonl", forked())
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        assert app.explorer.go_to_entry("aa2")
        screen = await _open_diff(pilot, app)
        out = home / "pitree-diff-ab2-aa2.md"
        assert screen.export_path() == out
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen)
        assert not out.exists()
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await until(pilot, lambda: out.exists())
        assert out.read_text().startswith("# Compare two branches of s.jsonl")
        out.write_text("mine")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await until(pilot, lambda: app.screen is screen)
        await pilot.pause(0.1)
        assert out.read_text() == "mine"  # never replaced


async def test_a_long_comparison_fills_its_table_in_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows' cells are made in the worker and added a batch per refresh: every row ends up in the table, in
    order, as `cell_text` makes it, and a resize meanwhile starts the fill over without doubling rows."""
    from pitree.cli.diff_text import cell_text
    from pitree.widgets.screens import diff_screen

    monkeypatch.setattr(diff_screen, "ROW_BATCH", 2)
    path = write_session_file(tmp_path / "s.jsonl", forked())
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        assert app.explorer.go_to_entry("aa2")
        await pilot.press("m")
        assert app.explorer.go_to_entry("ab2")
        screen = await _open_diff(pilot, app)
        table = screen.query_one(DiffTable)
        assert len(screen.table_rows) > 2 * diff_screen.ROW_BATCH
        await pilot.resize_terminal(110, 36)
        await until(pilot, lambda: table.row_count == len(screen.table_rows))
        await pilot.pause()
        assert table.row_count == len(screen.table_rows)
        for i, row in enumerate(screen.table_rows):
            label, a, b = table.get_row(str(i))
            assert (label.plain, a.plain, b.plain) == (row.label, cell_text(row.a).plain, cell_text(row.b).plain)
