"""The live tail checks every byte it read now and then (`LiveSession._verify_prefix`): a change in place that
the tailer's look at the head and the end cannot see reloads the file; appends and oh-my-pi's title slot
rewritten in place never do; checks wait `CHECK_GAP` after each other and a burst of changes makes one more."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import weakref
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.session.layout import FILTERS
from pitree.store.session_file import load_session_progressive
from pitree.widgets import live as live_module
from pitree.widgets.entry_view import EntryView
from pitree.widgets.live import LiveSession
from pitree.widgets.loading_pane import LoadingPane
from textual.message import Message

from tests.omp_files import assistant as omp_assistant
from tests.omp_files import rewrite_slot, write_omp
from tests.omp_files import user as omp_user
from tests.sessions import chain, to_bytes, user
from tests.ui.test_app import append, cursor, make_app, until

pytestmark = pytest.mark.writes_session  # the tests change the file in place, as another tool would


def posted(messages: list[Message], kind: type[Message]) -> list[Message]:
    return list({id(m): m for m in messages if isinstance(m, kind)}.values())


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, float, Any]]:
    """No wait between checks; each check's (start, end, verdict) recorded."""
    monkeypatch.setattr(live_module, "CHECK_GAP", 0.0)
    made: list[tuple[float, float, Any]] = []
    real = live_module.check_prefix

    def spy(*args: Any) -> Any:
        start = time.monotonic()
        verdict = real(*args)
        made.append((start, time.monotonic(), verdict))
        return verdict

    monkeypatch.setattr(live_module, "check_prefix", spy)
    return made


@contextlib.asynccontextmanager
async def explorer(path: Path) -> AsyncIterator[tuple[Any, Any, list[Message]]]:
    """The explorer on `path`, its tail started (not watching: the tests call `live.check()`), and what it posts."""
    app = make_app(path)
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.live is not None)
        yield app, pilot, messages


async def test_a_change_in_place_in_the_middle_reloads(
    tmp_path: Path, checks: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(30)))
    held_at_load: list[Any] = []  # what the explorer still held of the tree left when the file was read again
    real_load = LoadingPane.load

    def load(pane: LoadingPane, *args: Any) -> Any:
        held_at_load.append(pane.app.explorer._context_size)  # type: ignore[attr-defined]
        return real_load(pane, *args)

    monkeypatch.setattr(LoadingPane, "load", load)
    async with explorer(path) as (app, pilot, messages):
        app.explorer.tree_view.select_id("e0000020")
        data = bytearray(path.read_bytes())
        at = data.index(b'"text":"a15"') + 9
        data[at] = ord("z")  # same size, far from the head and from the end: the tailer sees nothing
        with open(path, "r+b") as fh:
            fh.write(data)
        old_tree = app.explorer.stree
        await until(pilot, lambda: not explorer_busy(app))  # its workers done: the tree left can be released
        await until(pilot, lambda: app.explorer._context_size is not None)
        old_leaf, old_search = old_tree.leaf, weakref.ref(old_tree._search)
        await app.explorer.live.check()
        await until(pilot, lambda: bool(posted(messages, LiveSession.FileRewritten)))
        (rewritten,) = posted(messages, LiveSession.FileRewritten)
        assert isinstance(rewritten, LiveSession.FileRewritten) and "changed in place" in rewritten.why
        assert [verdict for *_, verdict in checks] == [False]
        # read again as a session is opened (the loading pane: progress, cancel, both cores, the tree cache)
        await until(pilot, lambda: bool(posted(messages, LoadingPane.Loaded)))
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.stree is not old_tree)
        assert app.explorer.stree.get("e0000015").text.endswith("az5")
        assert cursor(app) == "e0000020"  # the selection kept by id
        entry = app.query_one(EntryView)  # and shown again in the entry pane, from the new tree
        await until(pilot, lambda: entry.node is not None and entry.node.id == "e0000020")
        assert entry.node is app.explorer.stree.get("e0000020")
        assert app.explorer.status_bar.status.file_state == rewritten.why  # said once the tree is shown
        assert app.explorer.live is not rewritten.live
        assert old_tree.nodes == [] and old_tree.by_id == {}  # released before the file was read again
        # nothing of it kept through the load: an entry of it still alive (here, held by this test) keeps no
        # columns (its class refers to them), its search index (a cycle with the tree) is gone, and the
        # explorer's context size (which holds its leaf) was dropped with it
        assert len(type(old_leaf)._at.line) == 0 and len(type(old_leaf)._at.texts) == 0
        assert old_search() is None
        assert held_at_load == [None, None]  # at the first open, and when the file was read again


async def test_a_view_over_the_explorer_keeps_the_tree_it_shows(tmp_path: Path, checks: list) -> None:
    """A reload under another view (here the help) reads the file again but leaves the old tree whole: the
    view may still read it."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(30)))
    async with explorer(path) as (app, pilot, messages):
        old_tree = app.explorer.stree
        await until(pilot, lambda: not explorer_busy(app))
        await pilot.press("question_mark")
        await until(pilot, lambda: app.screen is not app.explorer.screen)
        data = bytearray(path.read_bytes())
        data[data.index(b'"text":"a15"') + 9] = ord("z")
        with open(path, "r+b") as fh:
            fh.write(data)
        await app.explorer.live.check()
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.stree is not old_tree)
        assert len(old_tree.nodes) == 30 and old_tree.get("e0000015") is not None
        assert app.explorer.stree.get("e0000015").text.endswith("az5")


def explorer_busy(app: Any) -> bool:
    """Still preparing the tree's other filters (after its first screen), or another worker of the explorer's
    running but the tail's: the tree left is then not released."""
    prepared = len(app.explorer.tree_view._layouts) == len(FILTERS)
    return not prepared or app.explorer.tree_workers_running()


async def test_a_watched_file_changed_in_place_releases_the_tree_left(tmp_path: Path, checks: list) -> None:
    """As `pitree FILE` runs: the tail's worker watching the file. It is stopped as the file is read again and
    never reads the tree off the event loop, so the tree left is released all the same (it was not, and both
    trees were in memory through the load and the process stayed ~50% bigger after it at 100k entries)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(30)))
    async with explorer(path) as (app, pilot, messages):
        live = app.explorer.live
        live.start()
        await until(pilot, lambda: live.worker is not None and live.worker.is_running)
        old_tree = app.explorer.stree
        await until(pilot, lambda: not explorer_busy(app))
        data = bytearray(path.read_bytes())
        data[data.index(b'"text":"a15"') + 9] = ord("z")
        with open(path, "r+b") as fh:
            fh.write(data)
        await live.check()  # the watcher may see it first: reported once either way
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.stree is not old_tree)
        assert len(posted(messages, LiveSession.FileRewritten)) == 1
        assert old_tree.nodes == [] and old_tree.by_id == {}
        assert app.explorer.stree.get("e0000015").text.endswith("az5")


async def test_appends_never_reload(tmp_path: Path, checks: list) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(10)))
    async with explorer(path) as (app, pilot, messages):
        live = app.explorer.live
        for k in range(3):
            append(path, user(f"n{k}", "e0000009" if k == 0 else f"n{k - 1}", f"more {k}"))
            await live.check()
            await until(pilot, lambda: live._verify is not None and live._verify.done())
        assert [verdict for *_, verdict in checks] == [True, True, True]
        assert not posted(messages, LiveSession.FileRewritten)
        assert app.explorer.stree.leaf.id == "n2"


async def test_an_omp_title_rename_is_no_rewrite(tmp_path: Path, checks: list) -> None:
    entries = [omp_user("u1", None), omp_assistant("a1", "u1")]
    path = write_omp(tmp_path / "s.jsonl", entries, title="First")
    async with explorer(path) as (app, pilot, messages):
        live = app.explorer.live
        tree = app.explorer.stree
        rewrite_slot(path, "Second")
        with open(path, "ab") as fh:
            fh.write(orjson.dumps(omp_assistant("a2", "a1")) + b"\n")
        await live.check()
        await until(pilot, lambda: live._verify is not None and live._verify.done())
        assert [verdict for *_, verdict in checks] == [True]  # the rest checked, the slot left to the tailer
        assert not posted(messages, LiveSession.FileRewritten)
        assert app.explorer.stree is tree and tree.name == "Second" and tree.leaf.id == "a2"


class Target:
    def __init__(self) -> None:
        self.messages: list[Message] = []

    def post_message(self, message: Message) -> bool:
        self.messages.append(message)
        return True


async def test_checks_wait_their_turn(tmp_path: Path, checks: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first check waits `CHECK_GAP` from the load; changes before it starts are its own; a change while it
    reads makes one more, `CHECK_GAP` after it ends."""
    gap = 0.3
    monkeypatch.setattr(live_module, "CHECK_GAP", gap)
    reading, go = threading.Event(), threading.Event()
    spy = live_module.check_prefix

    def held(*args: Any) -> Any:
        reading.set()
        go.wait(10)  # the first check is still reading when the next change comes
        return spy(*args)

    monkeypatch.setattr(live_module, "check_prefix", held)
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(10)))
    _, builder = load_session_progressive(path)
    made = time.monotonic()
    live = LiveSession(Target(), path, builder)  # type: ignore[arg-type]
    try:
        for k in range(3):  # a burst before the check starts: one check
            append(path, user(f"n{k}", "e0000009" if k == 0 else f"n{k - 1}", f"more {k}"))
            await live.check()
        await asyncio.to_thread(reading.wait, 10)
        append(path, user("n3", "n2", "while it reads"))
        await live.check()
        go.set()
        await asyncio.wait_for(live._verify, 10)  # type: ignore[arg-type]
        assert [verdict for *_, verdict in checks] == [True, True]
        (start1, end1, _), (start2, _, _) = checks
        assert start1 - made >= gap and start2 - end1 >= gap
        assert live.builder is builder and builder.tree.leaf.id == "n3"
    finally:
        live.stop()


async def test_the_watchers_periodic_look_reads_nothing(
    tmp_path: Path, checks: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher looks now and then with no change seen (an empty set, for file systems whose events can be
    missed): the tail polls, but the bytes read are checked only after a change it reported."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(10)))
    _, builder = load_session_progressive(path)

    async def watch(path: Path, stop_event: Any = None) -> Any:
        for _ in range(3):
            yield set()
            await asyncio.sleep(0.05)
        yield {"modified"}

    monkeypatch.setattr(live_module, "watch_file", watch)
    live = LiveSession(Target(), path, builder)  # type: ignore[arg-type]
    try:
        await live._run()
        await asyncio.wait_for(live._verify, 10)  # type: ignore[arg-type]
        assert [verdict for *_, verdict in checks] == [True]
    finally:
        live.stop()


async def test_the_next_check_waits_for_the_processor_time_spent(
    tmp_path: Path, checks: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check that mostly waited (for the disk, or for the interpreter beside a busy main thread) does not push
    the next one `CHECK_SHARE` times its wall time away: only its processor time counts."""
    monkeypatch.setattr(live_module, "CHECK_SHARE", 20)
    spy = live_module.check_prefix

    def waiting(*args: Any) -> Any:
        time.sleep(0.3)  # waiting, not working: 20 times this would be 6 s
        return spy(*args)

    monkeypatch.setattr(live_module, "check_prefix", waiting)
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(10)))
    _, builder = load_session_progressive(path)
    live = LiveSession(Target(), path, builder)  # type: ignore[arg-type]
    try:
        await live.check()
        await asyncio.wait_for(live._verify, 10)  # type: ignore[arg-type]
        assert live._next_verify - time.monotonic() < 1.0
    finally:
        live.stop()
