"""The context view (`c`) and the status bar on a Pi 1.x session: the collapsed system head first, system
messages folded into it, a replaced message naming its edit, an omitted entry with a row of its own, ids from
the file shown as text (never markup), and the status bar's size by Pi 1.6's rule."""

from __future__ import annotations

from pathlib import Path

from pitree.session.context import build_context
from pitree.widgets.screens.context_view import ContextScreen
from textual.widgets import DataTable, Static

from tests.sessions import assistant, entry, message, user, write_session
from tests.ui.test_app import make_app, until

EDIT = "e[b]2\x1b"  # an id holding markup and an escape: shown literally, made safe


def session(tmp_path: Path) -> Path:
    entries = [
        message("s1", None, "system", content="", sections={"preamble": "P" * 400}, timestamp=1),
        user("u1", "s1", "first question"),
        assistant(
            "a1", "u1", "an answer", stop="stop", usage={"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        ),
        user("u2", "a1", "x" * 80),
        entry("context_edit", "e1", "u2", targetId="u2", replacement=None),
        entry("context_edit", EDIT, "e1", targetId="a1", replacement={"content": "short"}),
        message("s2", EDIT, "system", content="", sections={"cwd": "/w"}, timestamp=2),
        user("u3", "s2", "last"),
    ]
    return write_session(tmp_path, entries)


async def test_context_view_shows_head_edits_and_omissions(tmp_path: Path) -> None:
    path = session(tmp_path)
    app = make_app(path)
    async with app.run_test(size=(150, 45)) as pilot:
        await until(
            pilot, lambda: app.explorer.stree is not None and app.explorer.status_bar.status.context_tokens is not None
        )
        ctx = build_context(app.explorer.stree, None)
        # the head (400 + 2 chars), u1, a1 as "short", u3: a1's usage is all zeros, so Pi estimates
        assert app.explorer.status_bar.status.context_tokens == ctx.size.tokens == 101 + 4 + 2 + 1
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ContextScreen))
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        table = screen.query_one(DataTable)
        await until(pilot, lambda: table.row_count == len(screen.rows))
        keys = [key for key, _ in screen.rows]
        assert keys == ["head", "0", "1", "2", "omit3", "3", "4"]  # s1, u1, a1, (u2 omitted), s2, u3
        head = [str(c) for c in table.get_row("head")]
        assert head[1] == "system head" and head[3] == "101" and "preamble, cwd" in head[6]
        assert str(table.get_row("0")[1]) == "system (in head)"
        edited = str(table.get_row("2")[-1])
        assert edited == "✎ replaced by e[b]2␛: assistant: short" and str(table.get_row("2")[3]) == "2"
        assert "omitted by context edit e1" in str(table.get_row("omit3")[-1])
        await until(pilot, lambda: screen.head_count is not None and screen.counted == len(ctx.messages))
        assert str(table.get_row("head")[4]) == f"{screen.head_count:,}"
        text = str(screen.query_one("#ctx-head", Static).render())
        assert "context size 108 (Pi: estimate: no valid usage: 1 reply (1 with zero usage))" in text
        assert "1 entry omitted by context edit" in text and "\n5 messages · " in text
        table.move_cursor(row=0)
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, ContextScreen))
        assert app.explorer.tree_view.cursor_node is not None and app.explorer.tree_view.cursor_node.id == "s1"
