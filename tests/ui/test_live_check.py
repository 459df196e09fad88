"""The live tail checks every byte it read now and then (`LiveSession._verify_prefix`): a change in place that
the tailer's look at the head and the end cannot see reloads the file; appends and oh-my-pi's title slot
rewritten in place never do; checks wait `CHECK_GAP` after each other and a burst of changes makes one more."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.store.session_file import load_session_progressive
from pitree.widgets import live as live_module
from pitree.widgets.live import LiveSession
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


async def test_a_change_in_place_in_the_middle_reloads(tmp_path: Path, checks: list) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(30)))
    async with explorer(path) as (app, pilot, messages):
        app.explorer.tree_view.select_id("e0000020")
        data = bytearray(path.read_bytes())
        at = data.index(b'"text":"a15"') + 9
        data[at] = ord("z")  # same size, far from the head and from the end: the tailer sees nothing
        with open(path, "r+b") as fh:
            fh.write(data)
        await app.explorer.live.check()
        await until(pilot, lambda: bool(posted(messages, LiveSession.FileRewritten)))
        (rewritten,) = posted(messages, LiveSession.FileRewritten)
        assert isinstance(rewritten, LiveSession.FileRewritten) and "changed in place" in rewritten.why
        states = posted(messages, LiveSession.FileStateChanged)  # the status bar says so while it reads
        assert [(m.state, m.notice) for m in states] == [(f"{rewritten.why}: reading it again", False)]
        assert messages.index(states[0]) < messages.index(rewritten)
        assert rewritten.tree.get("e0000015").text.endswith("az5")
        assert [verdict for *_, verdict in checks] == [False]
        await until(pilot, lambda: app.explorer.stree is rewritten.tree)
        assert cursor(app) == "e0000020"  # the selection kept by id


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


async def test_a_reload_says_how_far_it_has_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rewrite read again shows its progress in the status bar (no notices), then the tree replaces the old."""
    monkeypatch.setattr(live_module, "RELOAD_PROGRESS_EVERY", 0.0)
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(10)))
    _, builder = load_session_progressive(path)
    target = Target()
    live = LiveSession(target, path, builder)  # type: ignore[arg-type]
    try:
        # another session now (its header's id is in the bytes the tailer looks at), read in chunks of 1 MB
        path.write_bytes(to_bytes(chain(15000)).replace(b'"id":"11111111', b'"id":"99999999', 1))
        assert path.stat().st_size > 3 << 20
        builder_before = live.builder
        await live.check()  # the head changed: the tailer says so, and the file is read again
        states = [m for m in target.messages if isinstance(m, LiveSession.FileStateChanged)]
        assert all(not m.notice and m.state.startswith("the file was rewritten") for m in states)
        assert states[0].state.endswith("reading it again")
        shares = [int(m.state.rsplit("(", 1)[1].rstrip("%)")) for m in states[1:]]
        assert len(shares) >= 3 and shares == sorted(shares) and shares[-1] == 100
        (rewritten,) = [m for m in target.messages if isinstance(m, LiveSession.FileRewritten)]
        assert live.builder is rewritten.builder is not builder_before and rewritten.tree.entry_count == 15000
    finally:
        live.stop()
