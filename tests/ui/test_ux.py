"""What a new user hit in the explorer (issue #20): follow state across filters, a relabel in the entry pane,
deep trees, status texts, dialogs' keys and first focus, the layout key and narrow terminals, column headers."""

from __future__ import annotations

from pathlib import Path

import pytest
from pitree.widgets.app import PitreeApp
from pitree.widgets.entry_view import EntryView
from pitree.widgets.panes import Panes
from pitree.widgets.status_bar import Status, StatusBar
from pitree.widgets.tree_view import TreeView
from textual.widgets import Input, Static

from tests.sessions import to_bytes, user
from tests.ui.screenshot import screen_text
from tests.ui.test_app import DEMO, append, cursor, make_app, until

ROOT, LEAF = "5e39d22d", "40665560"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    return path


@pytest.mark.writes_session
async def test_follow_stays_off_across_a_filter_round_trip(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("home")
        assert cursor(app) == ROOT and not app.explorer.status_bar.status.follow
        await pilot.press("ctrl+l")  # the root has no label: the filter shows the cursor elsewhere
        assert not app.explorer.following and not app.explorer.status_bar.status.follow
        await pilot.press("ctrl+l")  # back to the default filter: back on the entry the user chose
        assert cursor(app) == ROOT
        assert not app.explorer.following and not app.explorer.status_bar.status.follow
        append(demo, user("f0000001", LEAF, "appended under the leaf"))
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        assert cursor(app) == ROOT and not app.explorer.status_bar.status.follow


@pytest.mark.writes_session
async def test_follow_stays_on_across_a_filter_that_hides_the_leaf(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        assert app.explorer.following
        await pilot.press("ctrl+u")  # the leaf is an assistant reply: user-only hides it
        assert app.explorer.following and app.explorer.status_bar.status.follow
        await pilot.press("ctrl+u")
        assert cursor(app) == LEAF and app.explorer.following
        append(demo, user("f0000001", LEAF, "appended under the leaf"))
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        assert cursor(app) == "f0000001" and app.explorer.status_bar.status.follow


def head_text(app: PitreeApp) -> str:
    return str(app.query_one("#entry-head", Static).render())


async def test_relabel_shows_in_the_entry_pane(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("g", *"13721af2", "enter")
        entry = app.query_one(EntryView)
        await until(pilot, lambda: entry.node is not None and entry.node.id == "13721af2" and not entry.loading)
        assert "working-api" in head_text(app)
        await pilot.press("L")
        await until(pilot, lambda: app.screen.query(Input))
        app.screen.query_one(Input).value = "renamed-label"
        await pilot.press("enter")
        await until(pilot, lambda: app.explorer.stree.labels.get("13721af2") == "renamed-label")
        await until(pilot, lambda: "renamed-label" in head_text(app))
        assert "working-api" not in head_text(app)
        assert app.explorer.status_bar.status.file_state == ""  # pitree's own label entry is not "1 new entry"


async def test_empty_goto_is_not_an_error(demo: Path) -> None:
    app = make_app(demo)
    notes: list[str] = []
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("g", "enter")
        assert cursor(app) == LEAF and not any("''" in n for n in notes)


@pytest.mark.writes_session
async def test_new_entries_are_counted_while_not_following(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("f")  # follow off
        parent = LEAF
        for i in range(20):
            append(demo, user(f"f{i:07d}", parent, f"one of twenty {i}"))
            parent = f"f{i:07d}"
            await app.explorer.live.check()
            await pilot.pause()  # the explorer handles what the tail posted
        assert app.explorer.status_bar.status.file_state == "20 new entries"
        await pilot.press("up")  # the user looked: the count starts again
        assert app.explorer.status_bar.status.file_state == ""


@pytest.mark.writes_session
async def test_rewritten_notice_leaves_the_status_bar(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        original = demo.read_bytes()
        demo.write_bytes(original[: original.index(b"\n", len(original) // 2) + 1])
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        await until(pilot, lambda: "rewritten" in app.explorer.status_bar.status.file_state)
        await pilot.press("up")
        assert app.explorer.status_bar.status.file_state == ""


def test_status_counts_are_singular_and_plural() -> None:
    one = StatusBar.render_status(Status(file="a.jsonl", entries=1, branches=1)).plain
    assert "1 entry" in one and "1 branch " in one + " " and "entries" not in one and "branches" not in one
    two = StatusBar.render_status(Status(file="a.jsonl", entries=2, branches=2)).plain
    assert "2 entries" in two and "2 branches" in two


def test_a_long_file_name_leaves_room_for_context_and_follow() -> None:
    status = Status(
        file="2026-11-28T09-00-00-000Z_0193ab1c-0000-7000-8000-0123456789ab-" + "x" * 60 + ".jsonl",
        name="a session with a long name that goes on and on and on",
        entries=88,
        branches=5,
        leaf="40665560",
        context_tokens=3433,
    )
    text = StatusBar.render_status(status, width=78).plain
    assert len(text) <= 78
    assert "follow on" in text and "ctx ~3,433 tok" in text and "leaf 40665560" in text and "88 entries" in text
    assert text.startswith("2026-11-28") and "…" in text


def deep_lines(view: TreeView) -> tuple[list[str], list[str]]:
    """The tree's lines on screen as drawn, and each row's uncut guides from the layout."""
    assert view.layout_ is not None
    top = int(view.scroll_offset.y)
    lines, prefixes = [], []
    for y in range(min(view.size.height, len(view.shown) - top)):
        lines.append("".join(seg.text for seg in view.render_line(y)))
        row = view.shown[top + y]
        prefixes.append(view.layout_.prefix(row, view.layout_.rows[row].node.id in view.folded))
    return lines, prefixes


def cut_alike(lines: list[str], prefixes: list[str], shift: int, room: int) -> bool:
    """Every row's guides are its layout's prefix less the same first `shift` columns (marked `…`), and those
    still longer than `room` lose their middle levels but keep their own (so their text starts in one column)."""
    for line, prefix in zip(lines, prefixes, strict=True):
        guides = prefix if not shift else "…" + prefix[shift + 1 :] if len(prefix) > shift else "…"
        if len(guides) > room:
            guides = guides[: room - 4] + "…" + guides[-3:]
        if not line[2:].startswith(guides) or line[2 + len(guides)] in " │├└─":
            return False
        if "main" not in line and "side" not in line:
            return False  # every row's text stays on screen
    return True


@pytest.mark.parametrize("keys", [(), ("ctrl+u",)], ids=["default", "user-only"])
async def test_deep_tree_guides_line_up(tmp_path: Path, keys: tuple[str, ...]) -> None:
    entries, parent = [], None
    for i in range(40):  # every entry forks: each level indents further
        entries.append(user(f"m{i:07d}", parent, f"main {i}", t=2 * i))
        entries.append(user(f"s{i:07d}", parent, f"side {i}", t=2 * i + 1))
        parent = f"m{i:07d}"
    path = tmp_path / "deep.jsonl"
    path.write_bytes(to_bytes(entries))
    app = make_app(path)
    async with app.run_test(size=(80, 30)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        for key in keys:
            await pilot.press(key)
        view = app.query_one(TreeView)
        await until(pilot, lambda: int(view.scroll_offset.y) <= view.cursor < int(view.scroll_offset.y) + 20)
        room = view.prefix_room(view.scrollable_content_region.width)
        lines, prefixes = deep_lines(view)
        assert max(len(p) for p in prefixes) > room  # deep enough to need a cut at all
        assert any(cut_alike(lines, prefixes, shift, room) for shift in range(3, 3 * 45, 3)), "cut unlike"
        cursor_line = lines[view.cursor - int(view.scroll_offset.y)]
        assert "side 39" in cursor_line and cursor_line.startswith("› …"), cursor_line
        await pilot.press("home")  # the shallow end: the cut follows the cursor
        lines, prefixes = deep_lines(view)
        assert max(len(p) for p in prefixes) > room and cut_alike(lines, prefixes, 0, room)
        await pilot.pause()
        # What the terminal shows is every line redrawn with the new cut, not only the two the move touched.
        screen = screen_text(app).splitlines()
        region = view.region
        shown = [line[region.x : region.x + len(lines[0])] for line in screen[region.y : region.y + len(lines)]]
        assert [line.rstrip() for line in shown] == [line.rstrip() for line in lines]


async def test_confirm_dialog_keys_and_safe_first_focus(tmp_path: Path) -> None:
    from pitree.widgets.screens.confirm_dialog import ConfirmDialog
    from textual.widgets import Button

    path = tmp_path / "old.jsonl"
    original = (Path(__file__).resolve().parents[1] / "data" / "v1_linear.jsonl").read_bytes()
    path.write_bytes(original)
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        for keys in (("enter",), ("n",), ("escape",)):  # Enter on the first focus is "no", as are n and Esc
            await pilot.press("home", "enter")
            await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            assert isinstance(app.screen.focused, Button) and app.screen.focused.id == "no"
            await pilot.press(*keys)
            await until(pilot, lambda: not isinstance(app.screen, ConfirmDialog))
            assert path.read_bytes() == original and not list(tmp_path.glob("*.bak-*"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("y")
        await until(pilot, lambda: app.explorer.stree.version == 3)
        assert len(list(tmp_path.glob("old.jsonl.bak-*"))) == 1


async def test_label_dialog_removes_with_a_key(demo: Path) -> None:
    from pitree.widgets.screens.label_dialog import LabelDialog

    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        app.explorer.tree_view.select_id("13721af2")
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LabelDialog))
        assert isinstance(app.screen.focused, Input)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "13721af2" not in app.explorer.stree.labels)


async def test_export_dialog_keys_and_safe_first_focus(demo: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from pitree.widgets.screens.export_dialog import ExportDialog
    from textual.widgets import Button, Checkbox

    monkeypatch.setenv("HOME", str(tmp_path))
    app = make_app(demo)
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ExportDialog))
        dialog = app.screen
        assert isinstance(dialog.focused, Button) and dialog.focused.id == "cancel"
        await pilot.press("tab")  # Tab still moves between the dialog's choices
        assert dialog.focused is not None and dialog.focused.id != "cancel"
        dialog.query_one("#cancel", Button).focus()
        box = dialog.query_one("#out", Input)
        await pilot.press("h")
        assert dialog.fmt == "html" and box.value == str(tmp_path / f"demo-{LEAF}.html")
        await pilot.press("j")
        assert dialog.fmt == "jsonl" and box.value == str(demo.parent / f"demo-{LEAF}.jsonl")
        await pilot.press("t", "o")
        assert dialog.query_one("#thinking", Checkbox).value and dialog.query_one("#force", Checkbox).value
        await pilot.press("m")
        assert dialog.fmt == "md" and box.value == str(tmp_path / f"demo-{LEAF}.md")
        await pilot.press("f")
        assert dialog.focused is box
        await pilot.press("x")  # typed into the name, not a key of the dialog
        assert box.value.endswith(".mdx")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ExportDialog))
        assert not list(tmp_path.glob("demo-*"))
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ExportDialog))
        await pilot.press("enter")  # the first focus is Cancel: nothing is written
        await until(pilot, lambda: not isinstance(app.screen, ExportDialog))
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ExportDialog))
        await pilot.press("e")  # e again exports with what is shown
        target = tmp_path / f"demo-{LEAF}.md"
        await until(pilot, lambda: target.exists())
        assert target.read_text().startswith("#")


def test_export_default_folders(tmp_path: Path) -> None:
    from pitree.widgets.screens.export_dialog import default_folder

    session = tmp_path / "sessions" / "s.jsonl"
    home = tmp_path / "home"
    assert default_folder(session, "jsonl", home) == session.parent
    assert default_folder(session, "md", home) == home and default_folder(session, "html", home) == home
    demo_copy = tmp_path / "pitree-demo-abc123" / "demo.jsonl"  # deleted when pitree exits
    assert default_folder(demo_copy, "jsonl", home) == home


@pytest.mark.parametrize(("size", "stacked"), [((80, 24), True), ((200, 50), False)])
async def test_panes_stack_on_a_narrow_terminal_and_w_cycles(demo: Path, size: tuple[int, int], stacked: bool) -> None:
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.pause()
        tree, entry = app.query_one("#tree-pane"), app.query_one(EntryView)
        if stacked:  # the entry pane under the tree, the tree as wide as the terminal
            assert entry.region.y >= tree.region.bottom and tree.region.width == size[0]
        else:
            assert entry.region.x >= tree.region.right and tree.region.width >= size[0] // 2
        split = tree.region.height if stacked else tree.region.width
        await pilot.press("w")  # wide
        await pilot.pause()
        assert (tree.region.height if stacked else tree.region.width) > split and entry.display
        await pilot.press("w")  # the tree alone
        await pilot.pause()
        assert not entry.region.area and tree.region.width == size[0]
        await pilot.press("tab")  # asks for the entry pane: it comes back, focused
        await pilot.pause()
        assert app.query_one(Panes).mode == "split" and entry.region.area and entry.has_focus


async def test_header_names_the_columns_over_them(demo: Path) -> None:
    from pitree.widgets.tree_header import TreeHeader

    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.pause()
        view = app.query_one(TreeView)

        def header() -> str:
            return str(app.query_one("#tree-head", TreeHeader).render()).rstrip()

        def row(index: int) -> str:
            return "".join(seg.text for seg in view.render_line(index - int(view.scroll_offset.y))).rstrip()

        assert "reply" in header() and "total tokens" in header() and header().endswith("age")
        leaf_row = row(view.cursor)  # an assistant reply: its tokens under `reply`, its age under `age`
        assert len(leaf_row) == len(header())
        tokens_end = header().rindex("reply") + len("reply")
        assert leaf_row[:tokens_end].endswith("46.1k")
        await pilot.press("2", "1")  # the model column on, the time column off
        await pilot.pause()
        assert "model" in header() and not header().endswith("age") and header().endswith("reply")
        await pilot.press("ctrl+u")
        await pilot.pause()
        assert "user-only view" in header()


async def test_search_hits_say_which_session_is_the_fork(tmp_path: Path) -> None:
    from pitree.widgets.screens.browser import BrowserScreen
    from pitree.widgets.screens.rows_table import RowsTable

    from tests.sessions import assistant
    from tests.ui.test_browser import HERE, _write, make

    root = tmp_path / "sessions"
    long = "2026-01-01T00-00-00-000Z-" + "a-very-long-session-file-name-" * 3
    entries = [user("u1", None, "the same question", t=5), assistant("a1", "u1", "the same answer", t=6)]
    parent = _write(root, HERE, long, "aaaa1111", entries)
    _write(root, HERE, "2026-01-02T00-00-00-000Z", "bbbb2222", entries, parentSession=str(parent))
    app = make(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.stats is not None)
        screen = app.screen
        await pilot.press("slash", *'"same answer"')
        await until(pilot, lambda: screen.mode == "hits" and len(screen.hits) == 2)
        table = screen.query_one(RowsTable)
        cells = {str(table.get_row_at(i)[0]) for i in range(2)}
        assert cells == {"the same question", "fork: the same question"}
        fork_row = next(i for i in range(2) if str(table.get_row_at(i)[0]).startswith("fork: "))
        assert screen.hits[fork_row].path.name.endswith("bbbb2222.jsonl")
        # The parent, whose file name is long: the status bar still shows the context size and follow state.
        parent_row = 1 - fork_row
        table.move_cursor(row=parent_row)
        await pilot.press("enter")  # from the search box: opens the hit under the cursor
        await until(
            pilot, lambda: app.explorer.stree is not None and app.explorer.status_bar.status.context_tokens is not None
        )
        assert app.explorer.path == parent
        await pilot.pause()
        shown = str(app.explorer.status_bar.render())
        assert "ctx ~" in shown and "follow on" in shown and len(shown) <= 78


def test_the_audit_says_why_its_numbers_need_not_add_up(demo: Path) -> None:
    from pitree.cli.report import compaction_audit
    from pitree.store.session_file import load_session
    from pitree.widgets.render.audit import audit_parts
    from rich.text import Text

    from tests.ui.test_views import COMPACTION

    tree, _ = load_session(demo)
    audit = compaction_audit(tree, tree.get(COMPACTION), None)
    assert not audit["problems"]
    said = "\n".join(part.plain for part in audit_parts(audit) if isinstance(part, Text))
    assert "tokens add up" not in said and "tokensBefore plausible" in said
    assert "need not add up" in said and "at least half" in said
