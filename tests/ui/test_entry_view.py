"""EntryView in a tiny app: rendering an entry, raw toggle, a huge entry loading without blocking the UI."""

from __future__ import annotations

import io
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pitree.session.entries import Node
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader, load_session
from pitree.summary.tokens import count_text
from pitree.widgets.entry_view import TOKEN_CHUNK, EntryView, count_tokens
from pitree.widgets.render.entry import HEAD_CHARS, MAX_CHARS
from rich.console import Console
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Collapsible, Static
from textual.widgets._collapsible import CollapsibleTitle

from tests.sessions import assistant, tool_result, user, write_session_file

BIG_LINES = 40_000  # ~3 MB of tool output: well past MAX_CHARS


class Host(App[None]):
    """Only the entry view, with the app's `r` binding and a key that proves the UI answers."""

    BINDINGS = [("r", "raw", "raw"), ("x", "ping", "ping")]

    def __init__(self) -> None:
        super().__init__()
        self.pings = 0

    def compose(self) -> ComposeResult:
        yield EntryView()

    def action_raw(self) -> None:
        self.query_one(EntryView).toggle_raw()

    def action_ping(self) -> None:
        self.pings += 1


class GatedReader(EntryReader):
    """An EntryReader whose reads of chosen entries wait until the test opens the gate."""

    def __init__(self, path: Path, tree: SessionTree, gated: set[str]) -> None:
        super().__init__(path, tree)
        self.gated = gated
        self.gate = threading.Event()
        self.waiting = threading.Event()

    def entry(self, node: Node) -> dict[str, Any]:
        if node.id in self.gated:
            self.waiting.set()
            assert self.gate.wait(30), "the test never opened the gate"
        return super().entry(node)


def big_output() -> str:
    return "\n".join(f"out {i:05d} " + "z" * 60 for i in range(BIG_LINES))


@pytest.fixture
def session(tmp_path: Path) -> Path:
    entries = [
        user("u1", None, "please read [bold]a.py[/bold]", t=0),
        assistant(
            "a1",
            "u1",
            "# Reading\n\nI will read **a.py** now.",
            t=1,
            calls=[("c1", "read", {"path": "a.py"})],
        ),
        tool_result("r1", "a1", "c1", "read", "def f():\n    return 1\n", t=2),
        tool_result("big", "r1", "c1", "read", big_output(), t=3),
    ]
    entries[1]["message"]["content"].insert(0, {"type": "thinking", "thinking": "the user wants a.py"})
    return write_session_file(tmp_path / "s.jsonl", entries)


def rendered(part: Any) -> str:
    console = Console(record=True, width=200, file=io.StringIO(), color_system=None)
    console.print(part)
    return console.export_text()


def pane_text(view: EntryView) -> str:
    """The header, the body's texts and the fold titles, as plain text."""
    out = [rendered(view.query_one("#entry-head", Static).content)]
    for widget in view.query("#entry-body *"):
        if isinstance(widget, Collapsible):
            out.append(f"[fold: {widget.title}]")
        elif isinstance(widget, Static) and not isinstance(widget, CollapsibleTitle):
            out.append(rendered(widget.content))
    return "\n".join(out)


async def until(pilot: Pilot[None], cond: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.01)


def loaded(path: Path) -> tuple[SessionTree, EntryReader]:
    tree, _ = load_session(path)
    return tree, EntryReader(path, tree)


async def test_shows_an_assistant_entry_and_toggles_raw(session: Path) -> None:
    tree, reader = loaded(session)
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(EntryView)
        assert "No entry selected." in pane_text(view)
        view.show(tree.by_id["a1"], tree, reader)
        assert view.loading
        await until(pilot, lambda: not view.loading, "the entry")
        text = pane_text(view)
        for piece in (
            "message · assistant",
            "id a1",
            "parent u1",
            "model anthropic/claude",
            "stop reason stop",
            "Reading",
            "I will read a.py now.",
            "tool call read  c1",
            '"path": "a.py"',
            "[fold: thinking (19 chars)]",
            "totalTokens",
            "$0.5000",
        ):
            assert piece in text, f"{piece!r} not in\n{text}"
        assert "the user wants" not in text  # thinking stays folded ...
        fold = view.query_one("#entry-body Collapsible", Collapsible)
        assert fold.collapsed
        fold.collapsed = False
        await until(pilot, lambda: "the user wants a.py" in pane_text(view), "the opened thinking block")

        await until(pilot, lambda: isinstance(view.tokens, int), "the tiktoken count")
        assert f"{view.tokens:,} (tiktoken cl100k)" in pane_text(view)

        await pilot.press("r")
        await until(pilot, lambda: not view.loading, "the raw line")
        text = pane_text(view)
        assert view.raw and "raw line as stored" in text
        assert '"role": "assistant"' in text and '  "message": {' in text
        assert "I will read **a.py** now." in text  # the source, not rendered Markdown

        await pilot.press("r")
        await until(pilot, lambda: not view.loading, "the entry again")
        assert not view.raw and "I will read a.py now." in pane_text(view)


async def test_user_text_is_literal_and_show_none_clears(session: Path) -> None:
    tree, reader = loaded(session)
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(EntryView)
        view.show(tree.by_id["u1"], tree, reader)
        await until(pilot, lambda: not view.loading, "the user entry")
        assert "please read [bold]a.py[/bold]" in pane_text(view)
        view.show(None, tree, reader)
        await pilot.pause()
        assert "No entry selected." in pane_text(view) and not view.query("#entry-body Static")


async def test_reshowing_the_same_entry_keeps_its_widgets(session: Path) -> None:
    tree, reader = loaded(session)
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(EntryView)
        view.show(tree.by_id["r1"], tree, reader)
        await until(pilot, lambda: not view.loading, "the tool result")
        before = list(view.query("#entry-body Static"))
        view.show(tree.by_id["r1"], tree, reader)
        assert not view.loading
        await pilot.pause()
        assert list(view.query("#entry-body Static")) == before
        assert "call: [read: a.py]" in pane_text(view)


async def test_huge_entry_loads_in_a_worker_while_the_ui_answers(session: Path) -> None:
    tree, _ = load_session(session)
    reader = GatedReader(session, tree, {"big"})
    app = Host()
    try:
        async with app.run_test(size=(100, 40)) as pilot:
            view = app.query_one(EntryView)
            view.show(tree.by_id["big"], tree, reader)
            await until(pilot, reader.waiting.is_set, "the worker to start reading")
            await pilot.press("x")
            assert app.pings == 1, "a key press was not handled while the entry was loading"
            assert view.loading and "loading line 5" in pane_text(view)

            reader.gate.set()
            await until(pilot, lambda: not view.loading, "the huge entry")
            text = pane_text(view)
            assert "out 00000" in text and "out 00039" in text and "out 00040" not in text
            shown = sum(
                len(rendered(w.content))
                for w in view.query("#entry-body Static")
                if not isinstance(w, CollapsibleTitle)
            )
            assert shown < HEAD_CHARS + 2_000, "everything unfolded must stay small"
            fold = view.query_one("#entry-body Collapsible", Collapsible)
            assert fold.title.startswith("… ") and fold.title.endswith(" more lines")
            assert not fold.query(Static).exclude("CollapsibleTitle"), "a folded body is mounted only when opened"

            fold.collapsed = False
            await until(pilot, lambda: bool(fold.query(Static).exclude("CollapsibleTitle")), "the opened fold")
            body = "".join(rendered(w.content) for w in fold.query(Static) if not isinstance(w, CollapsibleTitle))
            assert "more characters not shown" in body
            assert body.count("z") <= MAX_CHARS
            await pilot.press("x")
            assert app.pings == 2
    finally:
        reader.gate.set()


async def test_a_late_result_for_an_older_selection_is_dropped(session: Path) -> None:
    tree, _ = load_session(session)
    reader = GatedReader(session, tree, {"a1"})
    app = Host()
    try:
        async with app.run_test(size=(100, 40)) as pilot:
            view = app.query_one(EntryView)
            view.show(tree.by_id["a1"], tree, reader)
            await until(pilot, reader.waiting.is_set, "the first read")
            view.show(tree.by_id["u1"], tree, reader)
            await until(pilot, lambda: not view.loading, "the second entry")
            reader.gate.set()
            await app.workers.wait_for_complete()
            await pilot.pause()
            text = pane_text(view)
            assert "id u1" in text and "please read" in text and "I will read" not in text
    finally:
        reader.gate.set()


async def test_a_line_that_changed_under_pitree(session: Path) -> None:
    tree, reader = loaded(session)
    node = tree.by_id["a1"]
    data = bytearray(session.read_bytes())
    data[node.offset : node.offset + 8] = b"\x1b]52;c;x"  # the same length: offsets stay valid
    session.write_bytes(bytes(data))
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(EntryView)
        view.show(node, tree, reader)
        await until(pilot, lambda: not view.loading, "the error")
        assert "no longer parses" in pane_text(view)
        await pilot.press("r")
        await until(pilot, lambda: not view.loading, "the raw line")
        text = pane_text(view)
        assert "does not parse as JSON" in text and "␛]52;c;x" in text


# ---- the token counter -------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
def test_chunked_count_equals_whole_count(seed: int) -> None:
    rng = random.Random(seed)
    pieces = ["foo", " bar", "\n", "\n\n", "  \n", "\t", "x=1;", "é", "🙂", " ", "\n  ", "\r\n", "'s", "123"]
    text = "".join(rng.choice(pieces) for _ in range(TOKEN_CHUNK))
    assert len(text) > 2 * TOKEN_CHUNK
    assert count_tokens(text) == count_text(text)


def test_count_stops_when_cancelled() -> None:
    calls = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 2

    assert count_tokens("word\n" * (TOKEN_CHUNK * 2), cancelled) is None
    assert count_tokens("") == 0
