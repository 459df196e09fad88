"""While a big session's tree is read (its kept first screen shown meanwhile): the keys that need the tree are
dimmed in the footer and do nothing but say what they wait for (and are left out of the palette), a search typed
meanwhile says it waits and is applied once the tree is read, and the cursor keys keep moving the preview after the
prompt."""

from __future__ import annotations

from pathlib import Path

import pytest
from pitree.widgets.explorer_search import WAITS_FOR_TREE
from pitree.widgets.loading_pane import LoadingPane
from pitree.widgets.tree_view import TreeView
from textual.widgets import Footer

from tests.ui.test_app import until
from tests.ui.test_first_screen import HeldLoad, big, first_open, make_app, preview_shown  # noqa: F401


def footer_keys(app) -> dict[str, bool]:  # type: ignore[no-untyped-def]
    """The footer's keys by action, and whether each is enabled."""
    return {
        binding.action: enabled
        for (_node, binding, enabled, _tooltip) in app.active_bindings.values()
        if binding.show
    }


async def test_tree_keys_wait_and_a_search_typed_meanwhile_applies_once_read(
    big: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    await first_open(big)
    held = HeldLoad(monkeypatch)
    app = make_app(big)
    async with app.run_test(size=(120, 30)) as pilot:
        preview = await preview_shown(pilot, app)
        assert app.query(Footer)
        keys = footer_keys(app)
        assert keys["context"] is False and keys["usage"] is False and keys["export"] is False
        assert keys["label"] is False
        assert keys["search"] is True and keys["app.quit"] is True
        await pilot.press("c")  # nothing opens
        await pilot.pause(0.1)
        assert len(app.screen_stack) == 1
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert "Search entries" in titles and "Context view" not in titles and "Export" not in titles

        await pilot.press("slash", *"turn", "enter")
        await pilot.pause(0.1)
        assert app.explorer.status_bar.status.matches == WAITS_FOR_TREE
        assert app.focused is preview, "back from the prompt to the preview, not the hidden tree"
        await pilot.press("k")
        assert preview.cursor == app.query_one(LoadingPane).kept.leaf_row - 1

        held.release()
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.pause(0.1)
        view = app.query_one(TreeView)
        assert len(view.matches) > 10  # "turn 1" … "turn 79"
        assert app.explorer.status_bar.status.matches.startswith("match ")
        keys = footer_keys(app)
        assert keys["context"] is True and keys["usage"] is True and keys["export"] is True
        assert {"Context view", "Export"} <= {c.title for c in app.get_system_commands(app.screen)}
        await pilot.press("c")
        await until(pilot, lambda: len(app.screen_stack) == 2)


def notes(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [n.message for n in app._notifications]


async def test_a_key_that_waits_for_the_tree_says_so(big: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    await first_open(big)
    held = HeldLoad(monkeypatch)
    app = make_app(big)
    async with app.run_test(size=(120, 30)) as pilot:
        preview = await preview_shown(pilot, app)
        await pilot.press("u", "u", "u")  # held: noted once
        await pilot.pause(0.1)
        assert notes(app) == ["Usage: once the tree is read (0% so far)"]
        await pilot.press("ctrl+o", "enter", "ctrl+left", "L")  # the tree view's keys, and the explorer's
        await pilot.pause(0.1)
        assert notes(app)[1:] == [
            "Filter: once the tree is read (0% so far)",
            "Jump here: once the tree is read (0% so far)",
            "Fold / branch up: once the tree is read (0% so far)",
            "Label: once the tree is read (0% so far)",
        ]
        await pilot.press("k", "j", "pageup", "slash")  # the preview's keys and the search prompt: no note
        await pilot.press(*"ab", "home", "ctrl+left", "end", "enter")  # the prompt's own keys: no note either
        await pilot.pause(0.1)
        assert len(notes(app)) == 5 and preview.cursor < app.query_one(LoadingPane).kept.leaf_row
        assert app.focused is preview  # Enter closed the prompt

        held.release()
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("u")  # now it works, without a note
        await until(pilot, lambda: len(app.screen_stack) == 2)
        assert len(notes(app)) == 5


async def test_a_key_pressed_while_waiting_for_the_file_says_so(tmp_path: Path) -> None:
    from pitree.widgets.app import PitreeApp

    app = PitreeApp(tmp_path / "not-yet.jsonl", watch=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause(0.1)
        await pilot.press("c")
        await pilot.pause(0.1)
        assert notes(app) == ["Context: once the session file exists and is read"]
