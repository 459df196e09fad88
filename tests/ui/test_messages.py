"""The messages the explorer's parts post, seen through the pilot's message hook: the live tailer's news of the
file (entries appended, a rewrite, a deletion) and the tree view's cursor, which stays on a shown row."""

from __future__ import annotations

from pathlib import Path

import pytest
from pitree.widgets.app import PitreeApp
from pitree.widgets.live import LiveSession
from pitree.widgets.tree_view import TreeView
from textual.message import Message

from tests.sessions import chain, to_bytes, user
from tests.ui.test_app import append, until


def session(tmp_path: Path, n: int = 5) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(n)))
    return path


def posted(messages: list[Message], kind: type[Message]) -> list[Message]:
    """Each message of `kind` once (the hook sees a message at every node it bubbles through)."""
    return list({id(m): m for m in messages if isinstance(m, kind)}.values())


@pytest.mark.writes_session  # the test plays Pi writing the file
async def test_tailer_posts_entries_appended_on_append(tmp_path: Path) -> None:
    path = session(tmp_path)
    app = PitreeApp(path, watch=False)
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.live is not None)
        assert not posted(messages, LiveSession.EntriesAppended)
        append(path, user("n0000001", "e0000004", "one"), user("n0000002", "n0000001", "two"))
        await app.explorer.live.check()
        await pilot.pause()
        (appended,) = posted(messages, LiveSession.EntriesAppended)
        assert isinstance(appended, LiveSession.EntriesAppended)
        assert [n.id for n in appended.added] == ["n0000001", "n0000002"] and appended.old_leaf.id == "e0000004"
        assert not posted(messages, LiveSession.FileRewritten)
        # The explorer followed: the leaf it was on moved to the new one.
        assert app.query_one(TreeView).cursor_node.id == "n0000002"


@pytest.mark.writes_session  # the test plays Pi writing the file
async def test_tailer_posts_file_rewritten_on_a_rewrite(tmp_path: Path) -> None:
    path = session(tmp_path)
    app = PitreeApp(path, watch=False)
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.live is not None)
        path.write_bytes(to_bytes(chain(3)))  # shorter: Pi rewrote the file
        await app.explorer.live.check()
        await until(pilot, lambda: bool(posted(messages, LiveSession.FileRewritten)))
        (rewritten,) = posted(messages, LiveSession.FileRewritten)
        assert isinstance(rewritten, LiveSession.FileRewritten) and "rewritten" in rewritten.why
        assert not posted(messages, LiveSession.EntriesAppended)
        # read again as a session is opened: the loading pane's load, a tail of its own
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.stree.entry_count == 3)
        assert app.explorer.live is not rewritten.live and rewritten.live.rewritten


@pytest.mark.writes_session  # the test plays Pi writing the file
async def test_tailer_posts_file_state_changed_when_the_file_goes(tmp_path: Path) -> None:
    path = session(tmp_path)
    app = PitreeApp(path, watch=False)
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.live is not None)
        path.unlink()
        await app.explorer.live.check()
        await pilot.pause()
        states = posted(messages, LiveSession.FileStateChanged)
        assert len(states) == 1 and isinstance(states[0], LiveSession.FileStateChanged)
        assert "deleted" in states[0].state and states[0].severity == "error"
        assert "deleted" in app.explorer.status_bar.status.file_state


async def test_cursor_reactive_clamps_out_of_range(tmp_path: Path) -> None:
    app = PitreeApp(session(tmp_path, 6), watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        assert len(view.shown) == 6
        view.cursor = 100
        assert view.cursor == 5 and view.cursor_node is not None and view.cursor_node.id == "e0000005"
        view.cursor = -3
        assert view.cursor == 0 and view.cursor_node.id == "e0000000"
        view.forget_tree()
        view.cursor = 4  # no rows: the cursor stays at 0
        assert view.cursor == 0 and view.cursor_node is None
