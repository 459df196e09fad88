"""The entry pane on Pi 1.x entries, through the pilot: a real CLI session's system message (sections, tools),
session text in fold titles staying literal, context edits linking to their target and back (`o`, a click),
and the explorer moving its tree cursor there."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pitree.widgets.app import PitreeApp
from pitree.widgets.entry_link import EntryLink
from pitree.widgets.entry_view import EntryView
from pitree.widgets.tree_view import TreeView
from textual.app import App, ComposeResult
from textual.widgets import Collapsible

from tests.sessions import assistant, entry, user, write_session_file
from tests.ui.test_entry_view import loaded, pane_text, rendered, until

ROOT = Path(__file__).resolve().parents[2]
# ../shared/corpus beside the checkout (conftest's rule), or beside the folder of worktrees
CORPUS = (
    next((p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if (p / "corpus").is_dir()), ROOT.parent)
    / "corpus"
    / "pi1-cli-session.jsonl"
)


class Host(App[None]):
    """Only the entry view; keeps the links chosen."""

    def __init__(self) -> None:
        super().__init__()
        self.chosen: list[str] = []

    def compose(self) -> ComposeResult:
        yield EntryView()

    def on_entry_link_chosen(self, message: EntryLink.Chosen) -> None:
        self.chosen.append(message.entry_id)


def fold_titles(view: EntryView) -> list[str]:
    return [rendered(c._title.label).strip() for c in view.query(Collapsible)]


@pytest.fixture
def pi1_session(tmp_path: Path) -> Path:
    if not CORPUS.is_file():
        pytest.skip("../shared/corpus is not here")
    return Path(shutil.copy(CORPUS, tmp_path / "pi1.jsonl"))


async def test_a_cli_system_message_shows_its_sections_and_tools(pi1_session: Path) -> None:
    tree, reader = loaded(pi1_session)
    node = next(n for n in tree.nodes if n.role == "system")
    app = Host()
    async with app.run_test(size=(160, 50)) as pilot:
        view = app.query_one(EntryView)
        view.show(node, tree, reader)
        await until(pilot, lambda: not view.loading, "the system message")
        text = pane_text(view)
        assert "system prompt · 5 sections set · 4 tools added" in text
        assert "You are a coding assistant running inside pi" in text  # the prompt text, shown
        titles = fold_titles(view)
        for name in ("preamble", "tools", "rules", "docs", "cwd"):
            assert any(t.startswith(f"section {name}  ") for t in titles), titles
        for tool in ("read", "bash", "edit", "write"):
            assert any(t.startswith(f"tool {tool}  ") for t in titles), titles
        fold = next(c for c in view.query(Collapsible) if "tool edit" in rendered(c._title.label))
        fold.collapsed = False
        await until(pilot, lambda: "oldText" in pane_text(view), "the edit tool's parameters")
        assert "role not known" not in pane_text(view)


async def test_session_text_in_a_fold_title_is_literal(tmp_path: Path) -> None:
    name = "[bold]x[/bold] [@click=app.quit]q[/] \x1b[2J"
    msg = {"role": "system", "content": "", "sections": {name: "v"}, "toolsAdded": [{"name": name}]}
    path = write_session_file(tmp_path / "s.jsonl", [entry("message", "s1", None, message=msg)])
    tree, reader = loaded(path)
    app = Host()
    async with app.run_test(size=(160, 30)) as pilot:
        view = app.query_one(EntryView)
        view.show(tree.get("s1"), tree, reader)
        await until(pilot, lambda: not view.loading, "the entry")
        titles = fold_titles(view)
        assert any("section [bold]x[/bold] [@click=app.quit]q[/] ␛[2J" in t for t in titles), titles
        assert any("tool [bold]x[/bold] [@click=app.quit]q[/] ␛[2J" in t for t in titles), titles
        await pilot.click(Collapsible)
        assert app.is_running


@pytest.fixture
def edited(tmp_path: Path) -> Path:
    entries = [
        user("u1", None, "fix the parser"),
        assistant("a1", "u1", "done"),
        entry("context_edit", "e1", "a1", targetId="u1", replacement=None),
        user("u2", "e1", "next"),
    ]
    return write_session_file(tmp_path / "s.jsonl", entries)


async def test_an_edit_links_to_its_target_and_the_target_back(edited: Path) -> None:
    tree, reader = loaded(edited)
    app = Host()
    async with app.run_test(size=(160, 30)) as pilot:
        view = app.query_one(EntryView)
        view.show(tree.get("e1"), tree, reader)
        await until(pilot, lambda: not view.loading, "the edit")
        assert "omits u1 from the model's context" in pane_text(view)
        assert "in effect on the active path" in pane_text(view)
        note = view.query_one("#entry-note", EntryLink)
        assert not note.display
        view.focus()
        await pilot.press("o")
        await until(pilot, lambda: app.chosen == ["u1"], "o on the edit")
        await pilot.click("#entry-body EntryLink")
        await until(pilot, lambda: app.chosen == ["u1", "u1"], "a click on the target line")

        view.show(tree.get("u1"), tree, reader)
        await until(pilot, lambda: not view.loading, "the target")
        assert note.display and "omitted from context by edit e1" in rendered(note.content)
        await pilot.press("o")
        await until(pilot, lambda: app.chosen[-1:] == ["e1"], "o on the edited entry")

        view.show(tree.get("u2"), tree, reader)
        await until(pilot, lambda: not view.loading, "an entry without edits")
        assert not note.display
        await pilot.press("o")  # nothing to go to: a notice, no message
        assert app.chosen == ["u1", "u1", "e1"]


async def test_the_explorer_goes_to_the_target(edited: Path) -> None:
    app = PitreeApp(edited, watch=False, config_overrides={"summarizer": "extractive"})
    seen: list[Any] = []
    async with app.run_test(size=(140, 40), message_hook=seen.append) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None, "the session")
        tree = app.query_one(TreeView)
        entry_view = app.query_one(EntryView)
        assert tree.select_id("e1")  # hidden by the default filter: the view switches to "all"
        await until(pilot, lambda: entry_view.node is tree.cursor_node and not entry_view.loading, "the edit's pane")
        await pilot.press("o")
        await until(pilot, lambda: tree.cursor_node is not None and tree.cursor_node.id == "u1", "the target")
        assert any(isinstance(m, EntryLink.Chosen) and m.entry_id == "u1" for m in seen)
        await until(pilot, lambda: entry_view.node is tree.cursor_node and not entry_view.loading, "the target's pane")
        await pilot.press("o")
        await until(pilot, lambda: tree.cursor_node is not None and tree.cursor_node.id == "e1", "back to the edit")
