"""A big session's second open shows its kept first screen while the tree is read: the same lines the tree view
then shows, the cursor where the user moved it, nothing for a file that changed, nothing raw from the file."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pitree.store import first_screen
from pitree.widgets.app import PitreeApp
from pitree.widgets.loading_pane import LoadingPane
from pitree.widgets.tree_draw import column_figures
from pitree.widgets.tree_preview import TreePreview
from pitree.widgets.tree_view import TreeView

from tests.sessions import assistant, entry, to_bytes, user
from tests.ui.test_app import until


def branched(n: int = 80) -> list[dict]:
    """A session with two branches and a label, long enough to scroll."""
    entries: list[dict] = [user("u0", None, text="start", t=1)]
    parent = "u0"
    for i in range(1, n):
        eid = f"e{i:03d}"
        make = user if i % 2 else assistant
        entries.append(make(eid, parent, text=f"turn {i}", t=i + 1))
        parent = eid
    entries.append(user("side", "e010", text="the other attempt", t=n + 5))
    entries.append(entry("label", "lab", "e079", t=n + 6, targetId="e005", label="keep\x1b[31m"))
    entries.append(user("last", parent, text="the leaf", t=n + 7))
    return entries


@pytest.fixture
def big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(first_screen, "MIN_BYTES", 0)  # every session counts as big
    path = tmp_path / "big.jsonl"
    path.write_bytes(to_bytes(branched()))
    return path


def make_app(path: Path) -> PitreeApp:
    return PitreeApp(path, watch=False, config_overrides={"summarizer": "extractive"})


def lines(widget: TreeView | TreePreview) -> list[str]:
    return [widget.render_line(y).text for y in range(widget.size.height)]


class HeldLoad:
    """The load worker waits until `release()`: what is on screen meanwhile can be looked at."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import pitree.widgets.loading_pane as loading_pane

        self.gate = threading.Event()
        real = loading_pane.load_session_fast

        def held(*args, **kwargs):  # type: ignore[no-untyped-def]
            self.gate.wait(20)
            return real(*args, **kwargs)

        monkeypatch.setattr(loading_pane, "load_session_fast", held)

    def release(self) -> None:
        self.gate.set()


class TopLines:
    """The top line of every frame the preview and the tree view paint (blank ones left out): a frame drawn
    before the view scrolled to its place shows up as another top line."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: dict[type, list[str]] = {TreePreview: [], TreeView: []}
        for cls, seen in self.seen.items():
            real = cls.render_line

            def render_line(widget, y, real=real, seen=seen):  # type: ignore[no-untyped-def]
                strip = real(widget, y)
                if y == 0 and strip.text.strip():
                    seen.append(strip.text)
                return strip

            monkeypatch.setattr(cls, "render_line", render_line)


def placed_scrolls(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The tree view's scroll as each `show_tree` leaves it (the first: before the view is laid out)."""
    placed: list[float] = []
    show_tree = TreeView.show_tree

    def recorded(view, *args, **kwargs):  # type: ignore[no-untyped-def]
        show_tree(view, *args, **kwargs)
        placed.append(view.scroll_offset.y)

    monkeypatch.setattr(TreeView, "show_tree", recorded)
    return placed


async def preview_shown(pilot, app: PitreeApp) -> TreePreview:  # type: ignore[no-untyped-def]
    """The preview, once it is shown and laid out (the tree being read meanwhile)."""
    preview = app.query_one(TreePreview)
    await until(pilot, lambda: app.query_one(LoadingPane).has_class("-preview") and preview.size.height > 0)
    return preview


async def first_open(path: Path, size: tuple[int, int] = (120, 30)) -> list[str]:
    """Open `path` once (which keeps its first screen); the tree view's lines."""
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.pause(0.1)
        shown = lines(app.query_one(TreeView))
        await pilot.press("q")
    return shown


async def move_on_the_preview_then_open(path: Path, monkeypatch: pytest.MonkeyPatch, keys: tuple[str, ...]) -> None:
    """Press `keys` on the screen shown while the tree is read (held until then); the tree opens where they went,
    on the same screen row, and no frame of either shows them at another scroll."""
    tops = TopLines(monkeypatch)
    placed = placed_scrolls(monkeypatch)
    held = HeldLoad(monkeypatch)
    app = make_app(path)
    async with app.run_test(size=(120, 30)) as pilot:
        preview = await preview_shown(pilot, app)
        await pilot.press(*keys)
        moved_to, row = preview.cursor_id, preview.cursor_row
        assert moved_to is not None and moved_to != "last"
        held.release()
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.pause(0.1)
        view = app.query_one(TreeView)
        assert view.cursor_node.id == moved_to and view.cursor - view.scroll_offset.y == row
        assert placed[0] == view.scroll_offset.y, "in place from the start: a terminal paints it before its resize"
        assert len(set(tops.seen[TreePreview])) == 1 and set(tops.seen[TreeView]) == {lines(view)[0]}


async def test_the_second_open_shows_the_first_screen_before_the_tree_is_read(
    big: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = await first_open(big)
    tops = TopLines(monkeypatch)
    placed = placed_scrolls(monkeypatch)
    held = HeldLoad(monkeypatch)
    app = make_app(big)
    async with app.run_test(size=(120, 30)) as pilot:
        preview = await preview_shown(pilot, app)
        await pilot.pause(0.1)
        assert app.explorer.stree is None  # not read yet
        assert lines(preview) == real  # line for line what the tree view showed
        assert "← leaf" in "".join(lines(preview))
        assert f"{len(branched())} entries" in app.explorer.status_bar.render().plain  # the kept counts
        held.release()
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.pause(0.1)
        assert not app.query_one(LoadingPane).display
        assert lines(app.query_one(TreeView)) == real
        assert app.query_one(TreeView).cursor_node.id == "last"
        assert placed[0] == app.query_one(TreeView).scroll_offset.y, "in place before its first frame"
    # No frame of either at another scroll: the kept screen's first frame is drawn centred, the tree's in place.
    assert set(tops.seen[TreePreview]) == {real[0]} and set(tops.seen[TreeView]) == {real[0]}


async def test_the_cursor_moved_on_the_kept_screen_is_where_the_tree_opens(
    big: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await first_open(big)
    await move_on_the_preview_then_open(big, monkeypatch, ("k", "k", "k"))


@pytest.mark.writes_session
async def test_a_changed_file_gets_no_kept_screen(big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept screen is stale: what shows is the leaf's branch read from the file as it is now."""
    await first_open(big)
    with open(big, "ab") as fh:
        fh.write(to_bytes([user("after", "last", text="appended since", t=500)], with_header=False))
    held = HeldLoad(monkeypatch)
    app = make_app(big)
    async with app.run_test(size=(120, 30)) as pilot:
        loading = app.query_one(LoadingPane)
        await until(pilot, lambda: loading.kept is not None)
        assert loading.kept.rows[loading.kept.leaf_row].id == "after"
        assert all(row.prefix == "" for row in loading.kept.rows), "the leaf's branch, not the kept tree rows"
        held.release()
        await until(pilot, lambda: app.explorer.stree is not None)
        assert app.query_one(TreeView).cursor_node.id == "after"


@pytest.mark.writes_session
async def test_quitting_keeps_the_screen_as_it_is_now(big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries appended while the explorer shows the session: what is kept on quitting includes them."""
    app = PitreeApp(big, watch=False, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        with open(big, "ab") as fh:
            fh.write(to_bytes([user("later", "last", text="written while open", t=600)], with_header=False))
        assert app.explorer.live is not None
        await app.explorer.live.check()
        await until(pilot, lambda: app.explorer.stree.get("later") is not None)
        await pilot.pause(0.1)
        await pilot.press("q")
    kept = first_screen.load(big)
    assert kept is not None and kept.rows[kept.leaf_row].id == "later"


async def test_nothing_raw_from_the_file_reaches_the_kept_screen(big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    await first_open(big)
    held = HeldLoad(monkeypatch)
    app = make_app(big)
    async with app.run_test(size=(120, 30)) as pilot:
        preview = await preview_shown(pilot, app)
        for _ in range(10):
            await pilot.press("pageup")
        text = "".join(lines(preview))
        assert "\x1b" not in text
        held.release()
        await until(pilot, lambda: app.explorer.stree is not None)


async def test_opened_at_a_chosen_entry_it_waits_for_the_tree(big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept screen is the leaf's: a session opened at another entry (a search hit) does not show it."""
    await first_open(big)
    held = HeldLoad(monkeypatch)
    app = PitreeApp(big, select_id="e010", watch=False, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause(0.2)
        assert not app.query_one(LoadingPane).has_class("-preview")
        held.release()
        await until(pilot, lambda: app.explorer.stree is not None)
        assert app.query_one(TreeView).cursor_node.id == "e010"


def row_text(parts: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> str:
    return "".join(text for text, _ in parts)


async def test_a_first_open_shows_the_leafs_branch_while_the_tree_is_read(
    big: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No kept screen: the leaf's branch, read from the end of the file, each row as the tree then shows it
    (without guides), the leaf's row last with its marker; then the tree, its cursor on the leaf, centred from
    its first frame on."""
    placed = placed_scrolls(monkeypatch)
    held = HeldLoad(monkeypatch)
    app = make_app(big)
    async with app.run_test(size=(120, 30)) as pilot:
        loading = app.query_one(LoadingPane)
        preview = await preview_shown(pilot, app)
        await pilot.pause(0.1)
        assert app.explorer.stree is None
        branch = loading.kept
        assert branch is not None and branch.rows[-1].id == "last" and branch.leaf_row == len(branch.rows) - 1
        shown = lines(preview)
        assert any("the leaf" in line and "← leaf" in line for line in shown)
        assert "\x1b" not in "".join(shown), "the label's escape is made safe"
        assert "leaf's branch" in str(app.query_one("#loading-label").render())
        held.release()
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.pause(0.1)
        view = app.query_one(TreeView)
        assert view.cursor_node.id == "last"
        assert placed[0] == view.scroll_offset.y
        layout = view.layout_for("default")
        path_rows = [i for i, n in enumerate(layout.rows.iter_nodes()) if n in layout.active]
        assert [r.id for r in branch.rows] == [layout.rows.node(i).id for i in path_rows]
        for row, i in zip(branch.rows, path_rows, strict=True):
            assert row_text(row.parts) == row_text(view.row_parts(layout, i, False, bool(layout.prefix(i)))), row.id
            assert (row.model, row.tokens) == column_figures(layout.rows.node(i))[:2], row.id


async def test_the_cursor_moved_on_the_leafs_branch_is_where_the_tree_opens(
    big: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await move_on_the_preview_then_open(big, monkeypatch, ("k", "k"))


async def test_a_small_session_loads_without_the_leafs_branch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "small.jsonl"
    path.write_bytes(to_bytes(branched()))
    held = HeldLoad(monkeypatch)
    app = make_app(path)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause(0.3)
        assert app.query_one(LoadingPane).kept is None and not app.query_one(LoadingPane).has_class("-preview")
        held.release()
        await until(pilot, lambda: app.explorer.stree is not None)
