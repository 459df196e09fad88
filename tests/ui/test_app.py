"""The explorer driven like a person would, through Textual's pilot: keys in, state and messages out."""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson
import pytest
from pitree.widgets.app import PitreeApp
from pitree.widgets.entry_view import EntryView
from pitree.widgets.loading_pane import LoadingPane
from pitree.widgets.tree_view import TreeView

from tests.sessions import assistant, to_bytes, user

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo.jsonl"


async def until(pilot, condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.02)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    os.utime(path, (1, 1))
    return path


def make_app(path: Path, watch: bool = False) -> PitreeApp:
    return PitreeApp(path, watch=watch, config_overrides={"summarizer": "extractive"})


def cursor(app: PitreeApp) -> str | None:
    node = app.query_one(TreeView).cursor_node
    return node.id if node else None


async def test_opens_at_the_leaf_and_moves(demo: Path) -> None:
    app = make_app(demo)
    messages: list[object] = []
    async with app.run_test(size=(140, 40), message_hook=messages.append) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        assert cursor(app) == "40665560" and app.explorer.following
        await pilot.press("up")
        assert cursor(app) != "40665560" and not app.explorer.following
        await pilot.press("home")
        assert cursor(app) == "5e39d22d"
        await pilot.press("end")
        await pilot.press("pageup")
        assert any(isinstance(m, TreeView.Highlighted) for m in messages)
        entry = app.query_one(EntryView)
        await until(pilot, lambda: entry.node is app.query_one(TreeView).cursor_node)


async def test_filters_and_cycle(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        default_rows = len(view.shown)
        await pilot.press("ctrl+u")
        assert view.filter_mode == "user-only" and all(view.layout_.rows[i].node.role == "user" for i in view.shown)
        await pilot.press("ctrl+u")
        assert view.filter_mode == "default" and len(view.shown) == default_rows
        await pilot.press("ctrl+a")
        # "all" still hides assistant turns that only call tools (Pi does too): their results show the calls.
        hidden = sum(1 for n in app.explorer.stree.nodes if n.flags & 1 and n is not app.explorer.stree.leaf)
        assert view.filter_mode == "all" and len(view.shown) == 88 - hidden and hidden > 0
        await pilot.press("ctrl+o")
        assert view.filter_mode == "default"
        await pilot.press("ctrl+l")
        assert {view.layout_.rows[i].node.id for i in view.shown} == set(app.explorer.stree.labels)
        assert app.explorer.status_bar.status.filter == "labeled-only"


async def test_fold_and_branch_jumps(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        view.select_id("5b622433")  # the start of the abandoned cache branch (a fork child)
        total = len(view.shown)
        await pilot.press("ctrl+left")  # fold it
        assert "5b622433" in view.folded and len(view.shown) == total - 4
        await pilot.press("ctrl+right")  # unfold
        assert not view.folded and len(view.shown) == total
        view.select_id("c743aed4")  # inside the branch: Ctrl+← jumps up to the branch start
        await pilot.press("ctrl+left")
        assert cursor(app) == "5b622433"


async def test_going_to_an_entry_opens_only_the_folds_that_hide_it(demo: Path) -> None:
    """Each fold whose subtree holds the entry opens (nested ones too); a fold elsewhere stays."""
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        layout = view.layout_
        assert layout is not None and app.explorer.stree is not None
        target = app.explorer.stree.get("c743aed4")  # inside the abandoned cache branch, under 5b622433
        assert target is not None
        holders = []
        walk = target.parent
        while walk is not None:
            row = layout.index_of(walk.id)
            if row is not None and layout.rows.children_of(row):
                holders.append(walk.id)
            walk = walk.parent
        assert "5b622433" in holders and len(holders) >= 2
        elsewhere = next(
            layout.rows.node(r).id for r in range(len(layout.rows))
            if layout.foldable(r) and layout.rows.node(r).id not in holders
            and not layout.rows.node(r).id == target.id
            and not (r < layout.index_of(target.id) < layout.rows.end_of(r))  # type: ignore[operator]
        )
        view.folded.update(["5b622433", holders[-1], elsewhere])  # the branch start, the root, another branch
        view._refold()
        assert view.go_to("c743aed4") == ""
        assert cursor(app) == "c743aed4"
        assert view.folded == {elsewhere}


async def test_search_counts_keeps_folds_and_opens_them(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        view.select_id("5b622433")
        await pilot.press("ctrl+left")
        await pilot.press("slash")
        await pilot.press(*"cache.py")  # a path: only in tool calls
        assert len(view.matches) >= 2
        assert "matches" in app.explorer.status_bar.status.matches
        await pilot.press("enter")
        assert "5b622433" in view.folded or cursor(app) != "5b622433"
        seen = set()
        for _ in range(len(view.matches)):
            await pilot.press("n")
            seen.add(cursor(app))
        assert "4e854342" in seen  # the match inside the fold was reached: its fold opened
        assert "5b622433" not in view.folded
        await pilot.press("N")
        assert app.explorer.status_bar.status.matches.startswith("match ")


async def test_a_key_typed_right_after_enter_goes_to_the_tree_not_the_closed_search(demo: Path) -> None:
    from pitree.widgets.prompt_bar import PromptBar
    from textual import events

    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("slash", *"cache.py")
        bar = app.query_one(PromptBar)
        view = app.query_one(TreeView)
        first = view.matches[0] if view.matches else None
        # Both keys queued before either is handled, as when a terminal delivers them in one read.
        app.post_message(events.Key("enter", "\r"))
        app.post_message(events.Key("j", "j"))
        await pilot.pause(0.2)
        assert bar.value == "cache.py" and not bar.display
        assert view.has_focus
        assert first is not None and cursor(app) != first  # Enter went to the first match, then j moved on


async def test_goto_and_bad_id(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("g", *"c743", "enter")
        assert cursor(app) == "c743aed4"
        await pilot.press("g", *"zzzz", "enter")
        assert cursor(app) == "c743aed4"  # unchanged; a notification says why


def append(path: Path, *entries: dict) -> None:
    with open(path, "ab") as fh:
        for e in entries:
            fh.write(orjson.dumps(e) + b"\n")


async def test_tail_append_follow_and_new_branch(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        append(demo, user("f0000001", "40665560", "next question"), assistant("f0000002", "f0000001", "next answer"))
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        await until(pilot, lambda: cursor(app) == "f0000002")  # following: the cursor moved to the new leaf
        await pilot.press("up", "up")
        before = cursor(app)
        append(demo, user("f0000003", "ae1a42a9", "a new branch elsewhere"))
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        assert cursor(app) == before and app.explorer.stree.leaf.id == "f0000003"


async def test_tail_torn_line_waits_then_completes(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        line = orjson.dumps(user("f0000009", "40665560", "torn"))
        with open(demo, "ab") as fh:
            fh.write(line[:20])
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        assert app.explorer.stree.get("f0000009") is None
        with open(demo, "ab") as fh:
            fh.write(line[20:] + b"\n")
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        assert app.explorer.stree.get("f0000009") is not None and app.explorer.stree.entry_count == 89


async def test_tail_burst(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        parent = "40665560"
        for i in range(200):
            eid = f"b{i:07d}"
            append(demo, user(eid, parent, f"burst {i}"))
            parent = eid
            if i % 50 == 0:
                await app.explorer.live.check()
                await pilot.pause()  # the explorer handles what the tail posted
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        assert app.explorer.stree.entry_count == 288 and cursor(app) == "b0000199"


async def test_tail_rewrite_delete_and_recreate(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        app.query_one(TreeView).select_id("ae1a42a9")
        original = demo.read_bytes()
        # Pi rewrites in place (shorter): reload, keep the selection by id.
        demo.write_bytes(original[: original.index(b"\n", len(original) // 2) + 1])
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.stree.entry_count < 88)
        assert cursor(app) == "ae1a42a9"
        demo.unlink()
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        assert "deleted" in app.explorer.status_bar.status.file_state and app.explorer.stree.entry_count > 0
        tmp = demo.with_suffix(".new")
        tmp.write_bytes(original)
        os.replace(tmp, demo)
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        await until(pilot, lambda: app.explorer.stree.entry_count == 88)
        assert cursor(app) == "ae1a42a9"


async def test_late_creation_with_real_watching(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "later.jsonl"
    app = make_app(path, watch=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause(0.2)
        assert app.explorer.stree is None and "waiting" in app.explorer.status_bar.status.file_state
        path.parent.mkdir()
        path.write_bytes(to_bytes([user("u0000001", None, "first"), assistant("a0000001", "u0000001", "hello")]))
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.stree.entry_count == 2)
        append(path, user("u0000002", "a0000001", "more"))
        await until(pilot, lambda: app.explorer.stree.entry_count == 3)  # the real watcher saw the append
        assert cursor(app) == "u0000002"


async def test_jump_with_extractive_summary(demo: Path) -> None:
    from pitree.widgets.screens.jump_dialog import JumpDialog

    app = make_app(demo)
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        app.query_one(TreeView).select_id("ae1a42a9")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JumpDialog))
        dialog = app.screen
        await until(pilot, lambda: dialog.job is not None)
        await pilot.pause(0.2)  # the plan text just grew: let the layout settle before clicking
        await pilot.click("#summarize")
        await until(pilot, lambda: dialog.phase == "review")
        before = demo.read_bytes()
        await pilot.click("#append")
        await until(pilot, lambda: app.explorer.stree.leaf.type == "branch_summary")
        after = demo.read_bytes()
        assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
        leaf = app.explorer.stree.leaf
        assert leaf.parent.id == "ae1a42a9" and leaf.meta["fromId"] == "40665560"
        assert cursor(app) == leaf.id


async def test_jump_cancel_writes_nothing(demo: Path) -> None:
    from pitree.widgets.screens.jump_dialog import JumpDialog

    app = make_app(demo)
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        before = demo.read_bytes()
        app.query_one(TreeView).select_id("20554e43")  # a user message: its parent becomes the leaf
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JumpDialog))
        await until(pilot, lambda: app.screen.text_for_editor is not None)
        assert app.screen.text_for_editor.startswith("Let's build a small weather CLI: `weather now Berlin`")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, JumpDialog))
        assert demo.read_bytes() == before


async def test_label_add_and_clear(demo: Path) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        app.query_one(TreeView).select_id("ae1a42a9")
        await pilot.press("L")
        await pilot.pause(0.1)
        await pilot.press(*"keep", "enter")
        await until(pilot, lambda: app.explorer.stree.labels.get("ae1a42a9") == "keep")
        await pilot.press("L")
        await pilot.pause(0.1)
        await pilot.press("backspace", "backspace", "backspace", "backspace", "enter")  # empty: clear
        await until(pilot, lambda: "ae1a42a9" not in app.explorer.stree.labels)


async def test_hostile_text_never_reaches_the_screen_raw(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    text = "evil \x1b]52;c;aGk=\x07 \x1b[31mred [bold]markup[/bold] \u202e"
    path.write_bytes(to_bytes([user("u0000001", None, text), assistant("a0000001", "u0000001", text)]))
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        rendered = "".join(view.row_text(i).plain for i in range(len(view.layout_.rows)))
        assert "\x1b" not in rendered and "[bold]markup[/bold]" in rendered and "␛]52" in rendered
        entry = app.query_one(EntryView)
        await until(pilot, lambda: entry.node is not None and len(entry.children) > 1)
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "\u202e" not in svg


async def test_skipped_lines_screen(tmp_path: Path) -> None:
    from pitree.widgets.screens.text_screen import TextScreen

    path = tmp_path / "bad.jsonl"
    path.write_bytes(to_bytes([user("u0000001", None)]) + b"garbage\n[1]\n")
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        assert app.explorer.status_bar.status.skipped == 2
        await pilot.press("s")
        assert isinstance(app.screen, TextScreen)
        await pilot.press("escape")
        await pilot.press("question_mark")
        assert isinstance(app.screen, TextScreen)


async def test_pre_v3_file_is_migrated_only_with_consent(tmp_path: Path) -> None:
    from pitree.widgets.screens.confirm_dialog import ConfirmDialog

    path = tmp_path / "old.jsonl"
    original = (Path(__file__).resolve().parents[1] / "data" / "v1_linear.jsonl").read_bytes()
    path.write_bytes(original)
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("home", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.press("escape")  # no consent: nothing changes
        await until(pilot, lambda: not isinstance(app.screen, ConfirmDialog))
        assert path.read_bytes() == original and not list(tmp_path.glob("*.bak-*"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.click("#yes")
        await until(pilot, lambda: app.explorer.stree.version == 3)  # the tail saw the replaced file and reloaded
        backups = list(tmp_path.glob("old.jsonl.bak-*"))
        assert len(backups) == 1 and backups[0].read_bytes() == original


async def test_deeply_nested_forks_keep_their_text_on_screen(tmp_path: Path) -> None:
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
        view = app.query_one(TreeView)
        strip = view._render_row(view.shown[view.cursor], 60, True)
        line = "".join(seg.text for seg in strip)
        assert "side 39" in line and line.startswith("› …")  # the leaf (last line) with its text visible


def test_load_progress_is_posted_at_most_every_tenth_of_a_second(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pane = LoadingPane()
    posted: list[int] = []
    monkeypatch.setattr(pane, "post_message", lambda m: posted.append(m.done) or True)
    clock = [100.0]
    monkeypatch.setattr("pitree.widgets.loading_pane.time.monotonic", lambda: clock[0])
    post = pane.progress_poster()
    for done in range(1, 1000):  # a megabyte every millisecond
        post(done, 1000)
        clock[0] += 0.001
    post(1000, 1000)  # the end is always shown
    assert posted[0] == 1 and posted[-1] == 1000 and 10 <= len(posted) <= 11
    assert all(b - a >= 99 for a, b in zip(posted[:-2], posted[1:-1], strict=True))
