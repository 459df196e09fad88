"""Going to an entry Pi's tree shows no row for (a reply with only tool calls, a `usage` entry) or that the filter
hides: the entry pane shows it, the cursor goes to the row that stands for it, and a notice says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from pitree.widgets.entry_view import EntryView

from tests.sessions import assistant, entry, to_bytes, user
from tests.ui.screenshot import screen_text
from tests.ui.test_app import DEMO, cursor, make_app, until

TOOL_ONLY, ITS_RESULT = "71037525", "78567699"  # the demo's reply that only calls a tool, and that tool's result
USAGE = {"input": 0, "output": 0, "cacheRead": 5, "cacheWrite": 0, "totalTokens": 5, "cost": {"total": 0.01}}


def capture(app) -> list[str]:  # type: ignore[no-untyped-def]
    notes: list[str] = []
    app.notify = lambda message, **kw: notes.append(str(message))
    return notes


async def shown_in_pane(pilot, app, entry_id: str) -> None:  # type: ignore[no-untyped-def]
    pane = app.query_one(EntryView)
    await until(pilot, lambda: pane.node is not None and pane.node.id == entry_id and not pane.loading)


async def test_goto_a_tool_only_reply_shows_it_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        notes = capture(app)
        await pilot.press("g", *TOOL_ONLY, "enter")
        await shown_in_pane(pilot, app, TOOL_ONLY)
        assert cursor(app) == ITS_RESULT
        assert app.explorer.tree_view.filter_mode == "default"  # no silent switch to "all"
        assert len(notes) == 1 and "no row in Pi's tree" in notes[0] and "its tool result" in notes[0]
        await pilot.press("down")  # moving on shows the rows' own entries again
        await until(pilot, lambda: app.query_one(EntryView).node is app.explorer.tree_view.cursor_node)


async def test_goto_a_filtered_entry_announces_the_filter_switch(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        notes = capture(app)
        await pilot.press("g", *"8dfdbf43", "enter")  # a model_change: the default filter hides it
        assert cursor(app) == "8dfdbf43" and app.explorer.tree_view.filter_mode == "all"
        assert len(notes) == 1 and "default → all" in notes[0]


async def test_a_usage_entry_is_reachable_from_go_to_and_the_context_view(tmp_path: Path) -> None:
    path = tmp_path / "pi1.jsonl"
    entries = [
        user("u1", None, "hello"),
        assistant("a1", "u1", "hi there"),
        entry("usage", "k1", "a1", kind="cache_warm", provider="p", model="m", usage=USAGE),
        user("u2", "k1", "again"),
    ]
    path.write_bytes(to_bytes(entries))
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        notes = capture(app)
        await pilot.press("g", *"k1", "enter")
        await shown_in_pane(pilot, app, "k1")
        assert cursor(app) == "a1" and app.explorer.tree_view.filter_mode == "default"
        assert "no row in Pi's tree" in notes[-1] and "usage" in notes[-1]
        app.explorer.tree_view.go_to("u2")
        await shown_in_pane(pilot, app, "u2")
        # the context view's Enter goes the same way
        app.explorer.go_to_entry("k1")
        await shown_in_pane(pilot, app, "k1")
        assert cursor(app) == "a1" and len(notes) == 2


@pytest.mark.parametrize("size", [(80, 24), (120, 36), (160, 50)])
async def test_the_leaf_marker_survives_a_long_row(tmp_path: Path, size: tuple[int, int]) -> None:
    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await until(pilot, lambda: any(line.startswith("›") for line in screen_text(app).split("\n")))
        cursor_line = next(line for line in screen_text(app).split("\n") if line.startswith("›"))
        assert "← leaf" in cursor_line


async def test_a_hidden_leaf_is_marked_on_its_nearest_shown_ancestor(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    entries = [user("u1", None, "hello"), assistant("a1", "u1", "hi there"), entry("label", "l1", "a1", targetId="u1")]
    path.write_bytes(to_bytes([*entries[:2], {**entries[2], "label": "first"}]))
    app = make_app(path)
    async with app.run_test(size=(140, 24)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.explorer.tree_view
        assert cursor(app) == "a1" and app.explorer.following
        row = view.layout_.index_of("a1")
        assert view.row_text(row).plain.endswith("← leaf (hidden: [label: first])")
        await until(pilot, lambda: "assistant: hi there  ← leaf (hidden: [label: first])" in screen_text(app))
        await pilot.press("ctrl+a")  # the 'all' filter shows the label entry: the marker is on its own row
        assert cursor(app) == "l1" and view.row_text(view.layout_.index_of("l1")).plain.endswith("← leaf")
        assert "hidden" not in view.row_text(view.layout_.index_of("a1")).plain


@pytest.mark.parametrize(("keys", "again"), [(("L",), "Shift+L again to label"), (("enter",), "Enter again to jump")])
async def test_migration_notice_points_back_to_the_action_that_asked(
    tmp_path: Path, keys: tuple[str, ...], again: str
) -> None:
    from pitree.widgets.screens.confirm_dialog import ConfirmDialog

    path = tmp_path / "old.jsonl"
    path.write_bytes((Path(__file__).resolve().parents[1] / "data" / "v1_linear.jsonl").read_bytes())
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        notes = capture(app)
        await pilot.press("home", *keys)
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.click("#yes")
        await until(pilot, lambda: any("migrated to version 3" in n for n in notes))
        assert again in next(n for n in notes if "migrated" in n)


async def test_the_jump_dialogs_summarizer_fits_at_80x24(tmp_path: Path) -> None:
    from pitree.widgets.screens.jump_dialog import JumpDialog

    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("home", "down", "down", "enter")
        await until(pilot, lambda: isinstance(app.screen, JumpDialog))
        await until(pilot, lambda: "offline (extractive)" in screen_text(app))


async def test_goto_by_prefix_in_a_big_tree_looks_in_a_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A prefix is looked for among every id (a few hundred ms at a million entries): off the UI thread, then the
    cursor goes there; an ambiguous or unknown prefix says why; a full id is found at once, on the UI thread."""
    from pitree.session.tree import SessionTree
    from pitree.widgets import explorer_status

    from tests.ui.test_views import on_ui_thread

    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    monkeypatch.setattr(explorer_status, "MEASURE_IN_THREAD", 0)
    calls = on_ui_thread(monkeypatch, SessionTree, "resolve")
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        notes = capture(app)
        await pilot.press("g", *"c743", "enter")
        await until(pilot, lambda: cursor(app) == "c743aed4")
        assert calls == [False]
        await pilot.press("g", *"zzzz", "enter")
        await until(pilot, lambda: any("no entry with id 'zzzz'" in n for n in notes))
        await pilot.press("g", "enter")  # nothing typed: nothing looked for
        await pilot.press("g", *TOOL_ONLY, "enter")
        await shown_in_pane(pilot, app, TOOL_ONLY)
        assert calls == [False, False, True]  # a full id: one dict lookup, at once on the UI thread
        assert app.explorer.status_bar.status.file_state != "finding the entry…"
