"""`watch_file`: an async stream of "the session file may have changed" batches; the only watchfiles import.

It watches the file's folder, not the file: a watch on the file alone dies when Pi replaces the file, and
cannot exist before the file does. A folder that does not exist yet is waited for by watching the nearest
existing ancestor, one level at a time; a folder removed while watched is waited for again.

What changed is for `Tailer.poll` to find out; this only says when to look, and says it soon: watchfiles
reports a change after one to two `step`s of its Rust loop (10 ms here, against its 50 ms default), and a
burst of appends to one file collapses into one batch per two steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import stat
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from pathlib import Path

import watchfiles
from watchfiles.main import FileChange

STEP_MS = 10
"""How often watchfiles' Rust loop looks at what the OS reported; a change is yielded 1-2 steps later."""

POLL_DELAY_MS = 50
"""Stat interval when polling instead of OS events (forced, WSL, no inotify); WATCHFILES_POLL_DELAY_MS wins"""

WAIT_TIMEOUT_MS = 1000
"""While waiting for a folder to appear, look again at least this often in case an event was missed."""

# One batch from `_watch_dir`: None when the watch is in place, an empty set when the timeout passed
# quietly, otherwise the (change kind, path) pairs the filter let through.
_Batch = set[tuple[str, str]] | None


def _ident(folder: Path) -> tuple[int, int] | None:
    """Which directory is at `folder` now (None if none): a folder removed and made again is a new one."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return (st.st_ino, st.st_dev) if stat.S_ISDIR(st.st_mode) else None


def _spellings(folder: Path, name: str | None = None) -> set[str]:
    """`folder` (or `folder/name`) as given and with symlinks resolved: macOS reports resolved paths."""
    real = os.path.realpath(folder)
    if name is None:
        return {str(folder), real}
    return {str(folder / name), os.path.join(real, name)}


async def _next(changes: AsyncIterator[set[FileChange]]) -> set[FileChange] | None:
    try:
        return await anext(changes)
    except StopAsyncIteration:
        return None


def _stopped(stop_event: asyncio.Event | None) -> bool:
    return stop_event is not None and stop_event.is_set()


async def _pause(stop_event: asyncio.Event | None, seconds: float) -> None:
    if stop_event is None:
        await asyncio.sleep(seconds)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop_event.wait(), seconds)


async def _watch_dir(
    root: Path,
    accept: Callable[[str], bool],
    stop_event: asyncio.Event | None,
    *,
    debounce_ms: int,
    timeout_ms: int,
) -> AsyncGenerator[_Batch, None]:
    """Batches of changes directly inside `root`; ends when `stop_event` is set. Raises what awatch raises."""
    # awatch waits in a worker thread, looking at its stop event every step. Its next batch is awaited
    # as a separate task (shielded), so that however we leave (stop, cancel, close, or a switch right
    # after the ready batch) we can set a private stop event and wait the ~10 ms for that thread to end,
    # rather than leave it blocked until its timeout (none when poll_fallback is off).
    local = asyncio.Event()
    follower: asyncio.Task[bool] | None = None
    if stop_event is not None:
        follower = asyncio.ensure_future(stop_event.wait())
        follower.add_done_callback(lambda _f: local.set())
    changes = watchfiles.awatch(
        root,
        watch_filter=lambda _change, p: accept(p),
        debounce=max(debounce_ms, 1),
        step=max(1, min(STEP_MS, debounce_ms)),
        stop_event=local,
        rust_timeout=timeout_ms,
        yield_on_timeout=timeout_ms > 0,
        recursive=False,
        force_polling=False,  # see _poll_file
    )
    pending = asyncio.ensure_future(_next(changes))
    try:
        # awatch registers the OS watch synchronously on its first step, before its first await; once
        # that step ran, anything that happens is seen, so the caller may look at the file now.
        await asyncio.sleep(0)
        if not pending.done():
            yield None
        while True:
            batch = await asyncio.shield(pending)
            if batch is None:
                return
            yield {(change.name, p) for change, p in batch}
            pending = asyncio.ensure_future(_next(changes))
    finally:
        local.set()
        if follower is not None:
            follower.cancel()
        if not pending.done():
            await asyncio.wait([pending])
        if not pending.cancelled():
            pending.exception()  # retrieved, so asyncio does not log it as never retrieved
        with contextlib.suppress(Exception):
            await changes.aclose()


async def _wait_for_dir(folder: Path, stop_event: asyncio.Event | None) -> None:
    """Return once `folder` is a directory (or `stop_event` is set)."""
    while not _stopped(stop_event) and _ident(folder) is None:
        ancestor = next((p for p in folder.parents if _ident(p) is not None), Path(folder.anchor))
        child = ancestor / folder.relative_to(ancestor).parts[0]
        ancestor_ident = _ident(ancestor)
        names = _spellings(ancestor, child.name) | _spellings(ancestor)
        watch = _watch_dir(ancestor, names.__contains__, stop_event, debounce_ms=STEP_MS, timeout_ms=WAIT_TIMEOUT_MS)
        try:
            async with contextlib.aclosing(watch) as batches:
                async for _batch in batches:
                    if _ident(child) is not None or _ident(ancestor) != ancestor_ident:
                        break  # one level closer (or the ancestor went): choose what to watch again
        except (OSError, RuntimeError):
            # An ancestor we may not watch (permissions, OS watch limits): look again now and then.
            await _pause(stop_event, WAIT_TIMEOUT_MS / 1000)


def _polling_wanted(force_polling: bool | None) -> bool:
    """watchfiles' rule for `force_polling=None`: the WATCHFILES_FORCE_POLLING variable, else only on WSL."""
    if force_polling is not None:
        return force_polling
    env = os.getenv("WATCHFILES_FORCE_POLLING")
    if env:
        return env.lower() not in {"false", "disable", "disabled"}
    uname = platform.uname()
    return "microsoft-standard" in uname.release.lower() and uname.system.lower() == "linux"


def _poll_delay() -> float:
    env = os.getenv("WATCHFILES_POLL_DELAY_MS")
    return (int(env) if env and env.isdecimal() else POLL_DELAY_MS) / 1000


def _file_state(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns)


async def _poll_file(path: Path, stop_event: asyncio.Event | None) -> AsyncGenerator[set[str], None]:
    """Polling without OS events: stat the file itself every few tens of milliseconds.

    Not watchfiles' PollWatcher: it compares modification times in whole seconds, so a second append
    within the same second goes unseen (watchfiles 1.3). A stat of one path also needs
    no folder to exist, and costs less than rescanning a folder of sessions.
    """
    delay = _poll_delay()
    last = _file_state(path)
    yield set()
    while True:
        await _pause(stop_event, delay)
        if _stopped(stop_event):
            return
        now = _file_state(path)
        if now == last:
            continue
        if now is None:
            kinds = {"deleted"}
        elif last is None or now[:2] != last[:2]:
            kinds = {"added"}
        else:
            kinds = {"modified"}
        last = now
        yield kinds


async def watch_file(
    path: Path,
    stop_event: asyncio.Event | None = None,
    debounce_ms: int = 10,
    poll_fallback: float | None = 1.0,
    force_polling: bool | None = None,
) -> AsyncGenerator[set[str], None]:
    """Yield a set of change kinds ("added", "modified", "deleted") whenever `path` may have changed.

    An empty set means "nothing specific seen, look anyway": it comes once each time a watch is put in
    place (at the start, when the folder appears or comes back), so nothing that happened before the
    watch existed is missed, and after each `poll_fallback` seconds without events (None or 0: never),
    for file systems whose events can be missed. A batch gathers changes until a 10 ms step passes with
    no new kind of change, for at most `debounce_ms`: a burst of appends comes as a few batches, each
    about 20 ms after its first append. A folder removed while watched yields {"deleted"} and is waited
    for again. Ends when `stop_event` is set; cancelling the consuming task ends it within about 10 ms.

    `force_polling` means what it means to watchfiles (None: poll only on WSL or when
    WATCHFILES_FORCE_POLLING says so), but the polling is done here, by stat-ing the file every 50 ms
    (see `_poll_file`). Polling is also what happens if the OS refuses a watch (e.g. inotify limits).
    """
    path = Path(os.path.abspath(path))
    folder = path.parent
    timeout_ms = round(poll_fallback * 1000) if poll_fallback and poll_fallback > 0 else 0
    polling = _polling_wanted(force_polling)
    while not polling and not _stopped(stop_event):
        ident = _ident(folder)
        if ident is None:
            await _wait_for_dir(folder, stop_event)
            continue
        targets = _spellings(folder, path.name)
        wanted = targets | _spellings(folder)  # the folder itself too, to hear of its removal
        watch = _watch_dir(folder, wanted.__contains__, stop_event, debounce_ms=debounce_ms, timeout_ms=timeout_ms)
        try:
            async with contextlib.aclosing(watch) as batches:
                async for batch in batches:
                    if batch is None:
                        yield set()
                        continue
                    kinds = {kind for kind, p in batch if p in targets}
                    now = _ident(folder)
                    if now != ident:
                        yield (kinds | {"deleted"}) if now is None else kinds
                        break
                    if kinds or not batch:
                        yield kinds
        except (OSError, RuntimeError):
            if _ident(folder) != ident:
                continue  # the folder went while the watch was being set up
            polling = True
    if polling and not _stopped(stop_event):
        async with contextlib.aclosing(_poll_file(path, stop_event)) as polled:
            async for kinds in polled:
                yield kinds


async def watch_sessions(
    root: Path, stop_event: asyncio.Event | None = None, debounce_ms: int = 300, poll_fallback: float = 5.0
) -> AsyncGenerator[None, None]:
    """Yield whenever a session file under `root` (or one level down) may have been added, changed or removed.

    For the sessions browser: one batch per burst (`debounce_ms`), plus one every `poll_fallback` seconds
    without events, since events can be missed. A missing `root` is waited for. Ends with `stop_event`.
    """
    root = Path(os.path.abspath(root))

    def wanted(path: str) -> bool:
        return path.endswith(".jsonl") or os.path.dirname(path) in roots

    roots = _spellings(root)
    while not _stopped(stop_event):
        ident = _ident(root)
        if ident is None:
            await _wait_for_dir(root, stop_event)
            yield None
            continue
        try:
            async for changes in watchfiles.awatch(
                root,
                watch_filter=lambda _change, path: wanted(path),
                stop_event=stop_event,
                debounce=debounce_ms,
                step=50,
                rust_timeout=round(poll_fallback * 1000),
                yield_on_timeout=True,
                recursive=True,
            ):
                yield None
                if _ident(root) != ident:
                    break
                del changes
        except (OSError, RuntimeError):
            await _pause(stop_event, poll_fallback)
            yield None
