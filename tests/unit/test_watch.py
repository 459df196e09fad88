"""`store.watch.watch_file`: appends, replaced files, a folder made late or removed, polling and shutdown.

A `Recorder` runs `watch_file` in a task, polls a `Tailer` on every batch (as the app does) and lets a
test wait, with a deadline, until a batch or a tail event it expects has come. `poll_fallback` is off
unless a test is about it, so what arrives was caused by a file system event.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import watchfiles
from pitree.store.tail import Tailer
from pitree.store.watch import watch_file

DEADLINE = 5.0


class Recorder:
    def __init__(self, path: Path, **kw: Any) -> None:
        self.path = path
        self.batches: list[set[str]] = []
        self.tail: list[tuple[str, bytes]] = []  # (kind, data); a reload is ("reload", what was read)
        self.tailer = Tailer(path)
        chunk = self.tailer.read_initial()
        self.tail.append(("reload", chunk.data))
        self.stop = asyncio.Event()
        self._changed = asyncio.Event()
        kw.setdefault("poll_fallback", None)
        self.task = asyncio.create_task(self._run(kw))

    async def _run(self, kw: dict[str, Any]) -> None:
        async for batch in watch_file(self.path, stop_event=self.stop, **kw):
            self.batches.append(batch)
            event = self.tailer.poll()
            if event.kind in ("reset", "created"):
                self.tail.append(("reload", self.tailer.read_initial().data))
            elif event.kind != "unchanged":
                self.tail.append((event.kind, event.data))
            self._changed.set()

    async def _until(self, found: Callable[[], int | None], what: str) -> int:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DEADLINE
        while True:
            if self.task.done():
                self.task.result()  # a crash in the watcher surfaces here
                pytest.fail(f"watch_file ended while waiting for {what}")
            hit = found()
            if hit is not None:
                return hit
            self._changed.clear()
            left = deadline - loop.time()
            if left <= 0:
                pytest.fail(f"no {what} within {DEADLINE} s; batches={self.batches} tail={self.tail}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    async def batch(self, pred: Callable[[set[str]], bool], start: int = 0, what: str = "batch") -> int:
        """Index of the first batch at or after `start` that satisfies `pred`."""
        return await self._until(
            lambda: next((i for i in range(start, len(self.batches)) if pred(self.batches[i])), None), what
        )

    async def ready(self) -> int:
        return await self.batch(lambda b: b == set(), what="ready batch")

    async def tailed(self, kind: str, data: bytes, start: int = 0) -> int:
        """Index of the first tail record (kind, data) at or after `start`."""
        return await self._until(
            lambda: next((i for i in range(start, len(self.tail)) if self.tail[i] == (kind, data)), None),
            f"tail {kind} {data!r}",
        )

    async def close(self) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, DEADLINE)


@contextlib.asynccontextmanager
async def recording(path: Path, **kw: Any) -> AsyncIterator[Recorder]:
    rec = Recorder(path, **kw)
    try:
        yield rec
    finally:
        if not rec.task.done():
            await rec.close()


@pytest.fixture
def watched_roots(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The folders handed to watchfiles.awatch, in order, recorded once each watch is live."""
    roots: list[str] = []
    real = watchfiles.awatch

    def spy(*paths: Any, **kw: Any) -> Any:
        async def gen() -> Any:
            # The real awatch sets up its OS watch in this same step, before it first awaits.
            roots.append(str(paths[0]))
            async with contextlib.aclosing(real(*paths, **kw)) as inner:
                async for changes in inner:
                    yield changes

        return gen()

    monkeypatch.setattr(watchfiles, "awatch", spy)
    yield roots


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


async def _until(cond: Callable[[], bool], what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE
    while not cond():
        if loop.time() > deadline:
            pytest.fail(f"no {what} within {DEADLINE} s")
        await asyncio.sleep(0.005)


async def test_append_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"h\n")
    async with recording(path) as rec:
        start = await rec.ready()
        _append(path, b"a\n")
        await rec.batch(lambda b: "modified" in b, start + 1, "modified batch")
        await rec.tailed("append", b"a\n")
        _append(path, b"b\n")
        await rec.tailed("append", b"b\n")


async def test_torn_line_waits_for_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"h\n")
    async with recording(path) as rec:
        await rec.ready()
        _append(path, b'{"x"')
        await rec.tailed("waiting", b"")
        _append(path, b":1}\n")
        await rec.tailed("append", b'{"x":1}\n')


async def test_other_files_in_the_folder_are_filtered_out(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"h\n")
    other = tmp_path / "other.jsonl"
    async with recording(path) as rec:
        start = await rec.ready()
        for i in range(5):
            _append(other, b"%d\n" % i)
        _append(path, b"a\n")
        first = await rec.batch(lambda b: True, start + 1, "batch after ready")
        assert "modified" in rec.batches[first]  # no empty batch for the other file came first


async def test_burst_is_coalesced_and_nothing_is_lost(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"h\n")
    lines = [b'{"i":%d}\n' % i for i in range(200)]
    async with recording(path) as rec:
        start = await rec.ready()
        for line in lines:
            _append(path, line)
        expected = b"".join(lines)
        await rec._until(
            lambda: 1 if b"".join(d for k, d in rec.tail if k == "append") == expected else None, "all lines"
        )
        assert len(rec.batches) - start - 1 < len(lines) // 2


async def test_replaced_file_is_still_watched(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"old\n")
    async with recording(path) as rec:
        await rec.ready()
        tmp = tmp_path / "s.jsonl.tmp"
        tmp.write_bytes(b"new\n")
        os.replace(tmp, path)
        mark = await rec.tailed("reload", b"new\n")
        _append(path, b"after\n")
        await rec.tailed("append", b"after\n", mark + 1)
        tmp.write_bytes(b"newer\n")
        os.replace(tmp, path)
        await rec.tailed("reload", b"newer\n", mark + 1)


async def test_deleted_and_recreated_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"h\n")
    async with recording(path) as rec:
        start = await rec.ready()
        path.unlink()
        await rec.batch(lambda b: "deleted" in b, start + 1, "deleted batch")
        await rec.tailed("missing", b"")
        path.write_bytes(b"again\n")
        await rec.tailed("reload", b"again\n", 1)


async def test_file_created_later(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    async with recording(path) as rec:
        await rec.ready()
        path.write_bytes(b"h\nu\n")
        await rec.tailed("reload", b"h\nu\n", 1)


async def test_folder_created_later(tmp_path: Path, watched_roots: list[str]) -> None:
    folder = tmp_path / "a" / "b"
    path = folder / "s.jsonl"
    async with recording(path) as rec:
        await _until(lambda: watched_roots == [str(tmp_path)], "watch on the nearest existing ancestor")
        (tmp_path / "a").mkdir()
        await _until(lambda: watched_roots[-1:] == [str(tmp_path / "a")], "watch one level down")
        folder.mkdir()
        await rec.ready()
        assert watched_roots[-1] == str(folder)
        path.write_bytes(b"h\n")
        await rec.tailed("reload", b"h\n", 1)
        _append(path, b"a\n")
        await rec.tailed("append", b"a\n")


async def test_folder_made_at_once_with_the_file(tmp_path: Path) -> None:
    """mkdir -p and the first write right away: whichever the watch sees first, the file is read."""
    path = tmp_path / "a" / "b" / "s.jsonl"
    async with recording(path) as rec:
        path.parent.mkdir(parents=True)
        path.write_bytes(b"h\n")
        await rec.tailed("reload", b"h\n", 1)


@pytest.mark.parametrize("how", ["rmtree", "rmdir-without-the-file", "renamed-away"])
async def test_folder_removed_and_made_again(tmp_path: Path, watched_roots: list[str], how: str) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "s.jsonl"
    if how != "rmdir-without-the-file":
        path.write_bytes(b"h\n")
    async with recording(path) as rec:
        start = await rec.ready()
        if how == "renamed-away":
            folder.rename(tmp_path / "elsewhere")
        else:
            shutil.rmtree(folder)
        await rec.batch(lambda b: "deleted" in b, start + 1, "deleted batch")
        await _until(lambda: watched_roots[-1] == str(tmp_path), "waiting on the parent again")
        folder.mkdir()
        path.write_bytes(b"back\n")
        await rec.tailed("reload", b"back\n", 1)
        _append(path, b"more\n")
        await rec.tailed("append", b"more\n")


async def test_stop_event_ends_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"h\n")
    rec = Recorder(path)
    await rec.ready()
    rec.stop.set()
    await asyncio.wait_for(rec.task, DEADLINE)


@pytest.mark.parametrize("where", ["file", "missing folder"])
async def test_cancel_ends_it_quickly(tmp_path: Path, where: str) -> None:
    path = tmp_path / "s.jsonl" if where == "file" else tmp_path / "no" / "s.jsonl"
    started = asyncio.Event()

    async def consume() -> None:
        gen = watch_file(path, poll_fallback=None)
        started.set()
        async for _ in gen:
            pass

    task = asyncio.create_task(consume())
    await started.wait()
    await asyncio.sleep(0)  # let it get into its watch
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=0.5)  # well under the watch's own timeouts
    assert task in done and task.cancelled()


async def test_closing_it_right_after_the_ready_batch_is_quick(tmp_path: Path) -> None:
    """The watch thread is waiting (with no timeout) when the consumer leaves; closing must end it."""
    path = tmp_path / "s.jsonl"
    gen = watch_file(path, poll_fallback=None)
    assert await asyncio.wait_for(anext(gen), DEADLINE) == set()
    await asyncio.wait_for(gen.aclose(), 0.5)


async def test_poll_fallback_yields_when_quiet(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"h\n")
    async with recording(path, poll_fallback=0.05) as rec:
        start = await rec.ready()
        await rec.batch(lambda b: b == set(), start + 3, "three quiet batches")


@pytest.mark.parametrize("how", ["force_polling", "environment"])
async def test_polling_sees_every_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watched_roots: list[str], how: str
) -> None:
    """Several appends within one second: each is seen (watchfiles' own poller compares whole seconds)."""
    kw: dict[str, Any] = {}
    if how == "force_polling":
        kw["force_polling"] = True
    else:
        monkeypatch.setenv("WATCHFILES_FORCE_POLLING", "1")
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"h\n")
    async with recording(path, **kw) as rec:
        await rec.ready()
        for i in range(5):
            line = b"%d\n" % i
            _append(path, line)
            await rec.tailed("append", line)
        path.unlink()
        await rec.tailed("missing", b"")
        path.write_bytes(b"again\n")
        await rec.tailed("reload", b"again\n", 1)
    assert watched_roots == []


async def test_refused_watch_falls_back_to_polling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: Any, **_k: Any) -> Any:
        async def gen() -> Any:
            raise OSError(28, "OS file watch limit reached")
            yield  # pragma: no cover

        return gen()

    monkeypatch.setattr(watchfiles, "awatch", refuse)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"h\n")
    async with recording(path) as rec:
        await rec.ready()
        _append(path, b"a\n")
        await rec.tailed("append", b"a\n")
