"""Watching a session file for changes: the only module that imports watchfiles.

It watches the file's folder, not the file: a watch on the file alone dies when Pi replaces it. If the
folder does not exist yet, it watches the nearest existing ancestor until the folder appears.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import watchfiles


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return candidate
    return Path("/")


async def watch_file(
    path: Path,
    stop_event: asyncio.Event | None = None,
    debounce_ms: int = 20,
    step_ms: int = 10,
    force_polling: bool | None = None,
) -> AsyncIterator[set[str]]:
    """Yield once per batch of changes that concern `path` (change kinds as strings).

    `debounce_ms`/`step_ms` are small so that an append shows within a few tens of milliseconds, while
    a burst of appends still arrives as one batch.
    """
    path = path.absolute()
    stop = stop_event or asyncio.Event()
    target = str(path)
    while not stop.is_set():
        folder = path.parent
        if not folder.is_dir():
            ancestor = _nearest_existing(folder)
            async for _ in watchfiles.awatch(
                ancestor,
                stop_event=stop,
                debounce=debounce_ms,
                step=step_ms,
                recursive=True,
                force_polling=force_polling,
                rust_timeout=1000,
                yield_on_timeout=True,
            ):
                if folder.is_dir():
                    break
            if folder.is_dir():
                yield {"added"}
            continue
        async for changes in watchfiles.awatch(
            folder,
            stop_event=stop,
            debounce=debounce_ms,
            step=step_ms,
            recursive=False,
            force_polling=force_polling,
            watch_filter=lambda _change, p: p == target,
            rust_timeout=1000,
            yield_on_timeout=True,
        ):
            if changes:
                yield {change.name for change, _ in changes}
            if not folder.is_dir():
                yield {"deleted"}
                break
