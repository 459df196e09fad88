"""A writer process appends as Pi does (one write per entry, 200 entries/s, in bursts) while pitree tails the
file (a LiveSession driven by the real watcher, and the TUI) and `pitree branch` / `pitree label` append
from other processes. At the end every line parses, nothing is interleaved, and the tail has every entry.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.session.load import load_bytes
from pitree.store.session_file import load_session_progressive
from pitree.store.watch import watch_file
from pitree.widgets import live as live_module
from pitree.widgets.app import PitreeApp
from pitree.widgets.live import LiveSession

from tests.hostile.helpers import until
from tests.sessions import chain, to_bytes

WRITER = Path(__file__).with_name("writer.py")
COUNT, RATE, BURST, PAUSE = 500, 200.0, 100, 0.25  # ~3.75 s: bursts at 200/s with pauses between, as Pi writes

pytestmark = pytest.mark.writes_session  # the writer stands in for Pi; the test checks the bytes itself


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "live.jsonl"
    path.write_bytes(to_bytes(chain(20)))
    return path


def start_writer(path: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(path), str(COUNT), str(RATE), "e0000019", "w", str(BURST), str(PAUSE)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


@dataclass
class Appenders:
    """`pitree branch` and `pitree label` run again and again from another thread while the writer writes."""

    path: Path
    stop: threading.Event = field(default_factory=threading.Event)
    results: list[tuple[list[str], int, bytes, bytes]] = field(default_factory=list)
    thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        n = 0
        while not self.stop.is_set():
            if n % 2 == 0:
                args = ["branch", str(self.path), "--to", "e0000005", "--summary", "none", "--yes", "--json"]
            else:
                args = ["label", str(self.path), "e0000003", f"L{n}", "--yes", "--json"]
            out = subprocess.run([sys.executable, "-m", "pitree.cli.main", *args], capture_output=True, timeout=60)
            self.results.append((args, out.returncode, out.stdout, out.stderr))
            n += 1

    def finish(self) -> list[str]:
        """Stop, and check every attempt either appended one entry or refused cleanly; the ids appended."""
        self.stop.set()
        assert self.thread is not None
        self.thread.join(timeout=120)
        assert self.results, "no pitree command ran while the writer wrote"
        appended = []
        for args, code, out, err in self.results:
            if code == 0:
                appended.append(orjson.loads(out)["appended"]["id"])
            else:
                errors = [ln for ln in err.decode().splitlines() if not ln.startswith("pitree: warning: ")]
                assert code == 1 and len(errors) == 1 and errors[0].startswith("pitree: error: "), (args, errors)
                message = errors[0]
                assert "changed on disk" in message or "another pitree is writing" in message, message
        return appended


def check_file(path: Path, appended: list[str]) -> dict[str, Any]:
    """Every line is one whole JSON object; the writer's chain and pitree's entries are all there once."""
    data = path.read_bytes()
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    objects = [orjson.loads(line) for line in lines]  # an interleaved or torn line would not parse
    assert all(isinstance(o, dict) for o in objects)
    assert len(objects) == 1 + 20 + COUNT + len(appended)
    ids = [o["id"] for o in objects[1:]]
    assert len(ids) == len(set(ids))
    writer = [o for o in objects if o["id"].startswith("w")]
    assert [o["id"] for o in writer] == [f"w{i:07d}" for i in range(COUNT)]  # in order, none lost
    assert [o["parentId"] for o in writer] == ["e0000019"] + [f"w{i:07d}" for i in range(COUNT - 1)]
    assert set(appended) <= set(ids)
    tree = load_bytes(data)
    assert not tree.skipped and tree.entry_count == len(objects) - 1
    return {"tree": tree, "ids": ids}


class FakeTarget:
    """What LiveSession posts to the explorer, recorded."""

    def __init__(self) -> None:
        self.added: list[str] = []
        self.states: list[str] = []
        self.reloads: list[str] = []

    def post_message(self, message: Any) -> bool:
        if isinstance(message, LiveSession.EntriesAppended):
            self.added.extend(n.id for n in message.added)
        elif isinstance(message, LiveSession.FileStateChanged):
            self.states.append(message.state)
        elif isinstance(message, LiveSession.FileRewritten):
            self.reloads.append(message.why)
        return True


async def wait_until(condition: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def test_live_session_keeps_up_with_a_writer_and_pitree_appends(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the bytes read checked again and again while they are written after: never a false rewrite
    monkeypatch.setattr(live_module, "CHECK_GAP", 0.02)
    checked: list[Any] = []
    real = live_module.check_prefix
    monkeypatch.setattr(live_module, "check_prefix", lambda *a: checked.append(real(*a)) or checked[-1])
    tree, builder = load_session_progressive(session)
    app = FakeTarget()
    live = LiveSession(app, session, builder)  # type: ignore[arg-type]

    async def follow() -> None:
        await live.check()
        async for _ in watch_file(session, stop_event=live.stop_event):
            await live.check()

    task = asyncio.create_task(follow())
    writer = start_writer(session)
    appenders = Appenders(session)
    appenders.start()
    await asyncio.to_thread(writer.wait, 60)
    appended = appenders.finish()
    expected = check_file(session, appended)
    try:
        await wait_until(lambda: live.builder is not None and live.builder.tree.entry_count == len(expected["ids"]))
    finally:
        live.stop_event.set()
        await asyncio.wait_for(task, 10)
        live.stop()
    assert writer.returncode == 0
    assert not app.reloads and not app.states  # appends only: never mistaken for a rewrite
    assert len(checked) >= 3 and all(verdict is True for verdict in checked)
    assert [n.id for n in live.builder.tree.nodes] == expected["ids"]
    assert app.added == expected["ids"][20:]  # each entry reported once, in file order
    assert live.builder.size == session.stat().st_size


async def test_tui_keeps_up_with_a_writer_and_pitree_appends(session: Path) -> None:
    app = PitreeApp(session, watch=True, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None and app.explorer.live is not None)
        writer = start_writer(session)
        appenders = Appenders(session)
        appenders.start()
        await until(pilot, lambda: writer.poll() is not None, timeout=60)
        appended = appenders.finish()
        expected = check_file(session, appended)
        await until(pilot, lambda: app.explorer.stree.entry_count == len(expected["ids"]), timeout=30)
        shown = app.explorer.stree
        assert [n.id for n in shown.nodes] == expected["ids"]
        final = expected["tree"]
        assert {n.id: n.parent_id for n in shown.nodes} == {n.id: n.parent_id for n in final.nodes}
        assert shown.leaf.id == final.leaf.id and shown.labels == final.labels
        await until(pilot, lambda: app.explorer.tree_view.cursor_node is not None)
        # It followed the leaf all the way (the row of the leaf, or of its nearest shown ancestor when the
        # filter hides a pitree.jump marker or a label).
        assert app.explorer.tree_view.cursor_node is app.explorer.tree_view.leaf_row_node() and app.explorer.following
