"""The compaction audit, the context view (`c`) and the usage view (`u`), through Textual's pilot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pitree.cli.report import compaction_split
from pitree.session.context import build_context
from pitree.widgets.entry_view import EntryView
from pitree.widgets.screens.context_view import ContextPlot, ContextScreen
from pitree.widgets.screens.text_screen import Lines, LinesView, TextScreen
from pitree.widgets.tree_view import TreeView
from textual.widgets import DataTable, Static

from tests.ui.test_app import cursor, make_app, until

COMPACTION = "1d172977"


def on_ui_thread(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, wait: Any = None) -> list[bool]:
    """Replace `owner.name` by a wrapper recording, for each call, whether it ran on the UI (main) thread; `wait`
    (an Event) holds each call until it is set."""
    import threading

    real, seen = getattr(owner, name), []

    def recorded(*args: Any) -> Any:
        seen.append(threading.current_thread() is threading.main_thread())
        if wait is not None:
            wait.wait(10)
        return real(*args)

    monkeypatch.setattr(owner, name, recorded)
    return seen


def _plain(widget: Static) -> str:
    return str(widget.render())


async def test_selecting_a_compaction_marks_what_it_summarized_and_kept(demo_copy: Path) -> None:
    app = make_app(demo_copy)
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        view.select_id(COMPACTION)
        await until(pilot, lambda: bool(view.marks))
        split = compaction_split(app.explorer.stree, app.explorer.stree.get(COMPACTION))
        assert {k for k, v in view.marks.items() if v == "summarized"} == {m.node.id for m in split.summarized}
        assert {k for k, v in view.marks.items() if v == "kept"} == {m.node.id for m in split.kept}
        assert len(split.kept) == 8 and len(split.summarized) == 30
        assert app.explorer.status_bar.status.audit == "▒ summarized 30 · ▌ kept 8"
        # The gutter shows the mark on a kept row.
        kept_id = split.kept[0].node.id
        row = view.layout_.index_of(kept_id)
        assert view.row_text(row).plain[1] == "▌"
        # The detail pane has the audit table with the numbers of `pitree compactions`.
        entry = app.query_one(EntryView)
        await until(pilot, lambda: entry.node is not None and entry.node.id == COMPACTION and not entry.loading)
        text = "\n".join(str(s.render()) for s in entry.query("#entry-body Static"))
        assert "Compaction audit" in text and "48,093" in text and "no problems" in text
        # Moving off the compaction clears the marks.
        await pilot.press("up")
        await until(pilot, lambda: not view.marks)
        assert app.explorer.status_bar.status.audit == ""


async def test_context_view_lists_the_context_and_goes_to_an_entry(demo_copy: Path) -> None:
    app = make_app(demo_copy)
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ContextScreen))
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        ctx = build_context(app.explorer.stree, None)
        table = screen.query_one(DataTable)
        assert table.row_count == len(ctx.messages) == 34
        assert ctx.messages[0].role == "compactionSummary"
        # A turn of tool calls only names its calls (Pi's row text for it is "assistant: (no content)").
        bodies = [str(table.get_row(str(i))[-1]) for i in range(table.row_count)]
        assert "assistant: (no content)" not in bodies
        assert bodies[[m.node.id for m in ctx.messages].index("46d72b94")] == (
            "assistant: [edit: weather/cli.py] [edit: weather/cache.py]"
        )
        await until(pilot, lambda: screen.counted == len(ctx.messages))
        assert all(isinstance(c, int) and c > 0 for c in screen.tiktoken)
        head = _plain(screen.query_one("#ctx-head", Static))
        assert "window 200,000" in head and "tiktoken cl100k" in head and "after compaction 1d172977" in head
        plot = str(screen.query_one(ContextPlot).render())
        assert "▲" in plot and "peak 48k" in plot  # Pi 1.6 sizes the context from the last reply's usage
        # Keys of the explorer are off here: `/` does not open the search under the screen.
        await pilot.press("slash")
        assert isinstance(app.screen, ContextScreen)
        await pilot.press("home", "enter")
        await until(pilot, lambda: not isinstance(app.screen, ContextScreen))
        assert cursor(app) == COMPACTION  # the first message is the compaction's summary


async def test_context_view_at_a_selected_entry_and_escape(demo_copy: Path) -> None:
    app = make_app(demo_copy)
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        app.query_one(TreeView).select_id("20554e43")
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ContextScreen))
        assert [m.node.id for m in app.screen.ctx.messages][-1] == "20554e43"
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ContextScreen))
        assert cursor(app) == "20554e43"


async def test_usage_view(demo_copy: Path) -> None:
    app = make_app(demo_copy)
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("u")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        text = app.screen.query_one(".title", Static).render()
        assert "usage" in str(text)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TextScreen))


async def test_usage_is_counted_off_the_ui_thread(demo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A million-entry session takes seconds to count: the UI thread must keep answering keys meanwhile."""
    import threading

    from pitree.widgets.screens import explorer_screens

    threads: list[bool] = []
    count = explorer_screens.usage_text

    def observed(tree, width):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread() is threading.main_thread())
        widths.append(width)
        return count(tree, width)

    widths: list[int] = []
    monkeypatch.setattr(explorer_screens, "usage_text", observed)
    app = make_app(demo_copy)
    async with app.run_test(size=(150, 20)) as pilot:  # shorter than the tables: they scroll
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("u")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        screen = app.screen
        assert isinstance(screen, TextScreen)
        body = screen.body  # laid out in the thread: lines as wide as the screen's, tables and all
        assert isinstance(body, Lines)
        lines = [strip.text for strip in body]
        assert any("Per branch segment" in line for line in lines)
        assert max(strip.cell_length for strip in body) <= widths[0] == 150 * 9 // 10 - 6
        assert any("session" in line and "$" in line for line in lines)
        await pilot.pause()
        view = screen.query_one(LinesView)
        assert view.scrollable_content_region.width >= widths[0]  # nothing it drew is cut
        shown = [view.render_line(y).text.rstrip() for y in range(3)]
        assert shown == [line.rstrip() for line in lines[:3]]
        await pilot.press("end")  # only the lines on screen are drawn, wherever it is scrolled
        await pilot.pause()
        assert view.scroll_offset.y == len(lines) - view.scrollable_content_region.height > 0
        assert view.render_line(view.scrollable_content_region.height - 1).text.rstrip() == lines[-1].rstrip()
    assert threads == [False]


async def test_export_from_the_explorer(demo_copy: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from pitree.widgets.screens.export_dialog import ExportDialog
    from textual.widgets import Input

    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(elsewhere)  # never the current folder (under `make run`, the checkout)
    app = make_app(demo_copy)
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        app.query_one(TreeView).select_id("20554e43")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ExportDialog))
        box = app.screen.query_one("#out", Input)
        assert box.value == str(home / "demo-20554e43.md")
        await pilot.click("#format RadioButton:last-of-type")
        # A Pi session goes next to the one it comes from, where Pi lists it.
        assert box.value == str(demo_copy.parent / "demo-20554e43.jsonl")
        await pilot.click("#export")
        target = demo_copy.parent / "demo-20554e43.jsonl"
        await until(pilot, lambda: target.exists())
        lines = target.read_bytes().splitlines()
        assert b'"parentSession"' in lines[0] and any(b'"20554e43"' in line for line in lines[1:])
        # A second export to the same name is refused: the file is kept and the user told.
        before = target.read_bytes()
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ExportDialog))
        await pilot.click("#format RadioButton:last-of-type")
        app.screen.query_one("#out", Input).focus()
        await pilot.press("enter")  # Enter in the file name exports too
        await until(pilot, lambda: any("not exported" in (n.title or "") for n in app._notifications))
        assert target.read_bytes() == before


@pytest.mark.writes_session
async def test_an_append_at_the_leaf_extends_the_shown_layout(tmp_path: Path) -> None:
    import orjson
    from pitree.session.layout import build_layout

    from tests.conftest import DEMO
    from tests.sessions import user
    from tests.unit.test_extend_layout import shape

    session = tmp_path / "live.jsonl"
    session.write_bytes(DEMO.read_bytes())
    app = make_app(session)
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        layout = view.layout_
        with session.open("ab") as fh:  # what Pi does: one whole line under the leaf
            fh.write(orjson.dumps(user("feed0001", "40665560", "and one more thing", t=99_999)) + b"\n")
        assert app.explorer.live is not None
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        await until(pilot, lambda: cursor(app) == "feed0001")
        assert view.layout_ is layout  # updated in place, not rebuilt
        assert shape(layout) == shape(build_layout(app.explorer.stree, view.filter_mode))
        status = app.explorer.status_bar.status  # kept up to date without walking the tree
        assert status.context_tokens == build_context(app.explorer.stree, None).size.tokens
        assert status.branches == len(app.explorer.stree.leaves()) and status.entries == 89


async def test_skipped_lines_screen_lists_a_torn_last_line_as_the_cli_does(tmp_path: Path) -> None:
    from tests.sessions import to_bytes, user

    path = tmp_path / "torn.jsonl"
    path.write_bytes(to_bytes([user("u1", None, "hi", t=1)]) + b'{"bad json\n' + b'{"type":"message","id":"zz')
    app = make_app(path)
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.live is not None)
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        screen = app.screen
        assert isinstance(screen, TextScreen)
        assert screen.title_text == "2 skipped lines, 0 notes"
        body = str(screen.body)
        assert "line 3" in body and "line 4" in body and "held back" in body


@pytest.mark.writes_session
async def test_the_status_bars_context_size_of_a_big_session_is_measured_off_the_ui_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From MEASURE_IN_THREAD entries (here every session) the size walks the path in a thread: `ctx …` until it
    is known, then Pi's size; an append at the leaf grows it without a walk, a new leaf elsewhere measures again,
    and a measure of a leaf that moved meanwhile is dropped."""
    import orjson
    from pitree.widgets import explorer_state, explorer_status
    from pitree.widgets.status_bar import Status, StatusBar

    from tests.conftest import DEMO
    from tests.sessions import user

    monkeypatch.setattr(explorer_status, "MEASURE_IN_THREAD", 0)
    on_main = on_ui_thread(monkeypatch, explorer_state, "context_size")
    assert "ctx …" in StatusBar.render_status(Status(file="f", context_pending=True)).plain
    session = tmp_path / "live.jsonl"
    session.write_bytes(DEMO.read_bytes())
    app = make_app(session)

    def settled() -> bool:
        s = app.explorer.status_bar.status
        return app.explorer.stree is not None and not s.context_pending and s.context_tokens is not None

    def expected() -> int:
        return build_context(app.explorer.stree, None).size.tokens  # type: ignore[arg-type]

    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, settled)
        assert app.explorer.status_bar.status.context_tokens == expected()
        assert on_main and not any(on_main)
        tree = app.explorer.stree
        assert tree is not None and tree.leaf is not None
        old_leaf, measures = tree.leaf, len(on_main)
        with session.open("ab") as fh:  # at the leaf: grown from the size before, no walk
            fh.write(orjson.dumps(user("feed0001", old_leaf.id, "and one more thing", t=99_999)) + b"\n")
        assert app.explorer.live is not None
        await app.explorer.live.check()
        await until(pilot, lambda: settled() and app.explorer.status_bar.status.leaf == "feed0001")
        assert app.explorer.status_bar.status.context_tokens == expected() and len(on_main) == measures
        root = tree.roots[0]
        with session.open("ab") as fh:  # a new leaf on another branch: measured again, in a thread
            fh.write(orjson.dumps(user("feed0002", root.id, "elsewhere", t=100_000)) + b"\n")
        await app.explorer.live.check()
        await until(pilot, lambda: settled() and app.explorer.status_bar.status.leaf == "feed0002")
        assert app.explorer.status_bar.status.context_tokens == expected() and len(on_main) == measures + 1
        assert not any(on_main)
        shown = app.explorer.status_bar.status.context_tokens
        app.explorer._context_measured(tree, old_leaf, build_context(tree, old_leaf).size)  # arrives late
        assert app.explorer.status_bar.status.context_tokens == shown != build_context(tree, old_leaf).size.tokens


async def test_the_context_view_of_a_big_session_is_measured_off_the_ui_thread(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From MEASURE_IN_THREAD entries (here every session) the view opens at once, says it is measuring, and
    shows what the synchronous view shows once a thread has built the context and its curve; Esc while it
    measures closes it and what the thread finds is dropped."""
    import threading

    from pitree.session.context_curve import context_curve
    from pitree.widgets import explorer_status
    from pitree.widgets.screens import context_view

    gate = threading.Event()
    monkeypatch.setattr(explorer_status, "MEASURE_IN_THREAD", 0)
    on_main = on_ui_thread(monkeypatch, context_view, "build_context", wait=gate)
    app = make_app(demo_copy)
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ContextScreen))
        screen = app.screen
        assert isinstance(screen, ContextScreen) and not screen.measured
        await pilot.pause()
        assert "measuring" in _plain(screen.query_one("#ctx-head", Static))
        assert "measuring" in str(screen.query_one(ContextPlot).render())
        await pilot.press("escape")  # while the thread still measures
        await until(pilot, lambda: not isinstance(app.screen, ContextScreen))
        gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not screen.measured  # cancelled: its result never taken
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ContextScreen))
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        await until(pilot, lambda: screen.measured and screen.query_one(DataTable).row_count == 34)
        tree = app.explorer.stree
        assert tree is not None
        ctx = build_context(tree, None)
        assert [m.node.id for m in screen.ctx.messages] == [m.node.id for m in ctx.messages]
        assert [p.tokens for p in screen.curve] == [p.tokens for p in context_curve(tree, None)]
        plot = str(screen.query_one(ContextPlot).render())
        assert "▲" in plot and "peak 48k" in plot
        assert "after compaction 1d172977" in _plain(screen.query_one("#ctx-head", Static))
        await until(pilot, lambda: screen.counted == len(ctx.messages))
        assert on_main == [False, False]


async def test_a_big_sessions_compaction_marks_come_from_a_thread_shared_with_the_audit(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From MEASURE_IN_THREAD entries (here every session) selecting a compaction splits it in a thread (two
    contexts: a second at 1M entries); the entry pane's audit takes the same split, and marks that arrive after
    the cursor moved on are dropped."""
    from pitree.cli import report_context
    from pitree.widgets import explorer_status

    monkeypatch.setattr(explorer_status, "MEASURE_IN_THREAD", 0)
    calls = on_ui_thread(monkeypatch, report_context, "_split")
    app = make_app(demo_copy)
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        tree = app.explorer.stree
        assert tree is not None
        view = app.query_one(TreeView)
        entry = app.query_one(EntryView)
        view.select_id(COMPACTION)
        await until(pilot, lambda: bool(view.marks) and entry.node is not None and not entry.loading)
        assert calls == [False]  # once, off the UI thread, for the marks and the audit both
        expected = compaction_split(tree, tree.get(COMPACTION))  # type: ignore[arg-type]
        assert {k for k, v in view.marks.items() if v == "kept"} == {m.node.id for m in expected.kept}
        assert app.explorer.status_bar.status.audit == "▒ summarized 30 · ▌ kept 8"
        await pilot.press("up")
        await until(pilot, lambda: not view.marks and app.explorer.status_bar.status.audit == "")
        node = tree.get(COMPACTION)
        assert node is not None
        app.explorer._marked(tree, node, {"x": "kept"}, "late")  # the cursor is no longer on it
        assert not view.marks and app.explorer.status_bar.status.audit == ""
        assert "compaction_split" not in tree.memo  # dropped when the cursor left the compaction
    again = compaction_split(tree, node)
    assert compaction_split(tree, node) is again  # found again while the tree is the same
    tree.generation += 1
    assert compaction_split(tree, node) is not again
