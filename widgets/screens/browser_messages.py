"""The messages the sessions browser's workers post (`BrowserScreen.Refreshed`, ...), and the index refresh's
listener that posts them. Their handlers are named for the screen (`on_browser_screen_progress`, ...)."""

from __future__ import annotations

from collections.abc import Callable

from pitree.store.session_index import RefreshStats, SearchHit
from textual.message import Message


class Refreshed(Message, namespace="browser_screen"):
    """Posted by the index refresh when it is over: the index is up to date, or `error` says why not."""

    def __init__(self, stats: RefreshStats, error: str | None = None) -> None:
        self.stats, self.error = stats, error
        super().__init__()


class Progress(Message, namespace="browser_screen"):
    """Posted by the index worker as files are read."""

    def __init__(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        super().__init__()

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Progress)


class Written(Message, namespace="browser_screen"):
    """Posted by the index worker each time another batch of sessions is in the index (rows to list)."""

    def __init__(self, count: int) -> None:
        self.count = count
        super().__init__()

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Written)


class Found(Message, namespace="browser_screen"):
    """Posted by the search worker with its hits (or an error for a bad query)."""

    def __init__(self, query: str, hits: list[SearchHit], error: str | None) -> None:
        self.query, self.hits, self.error = query, hits, error
        super().__init__()


class Poster:
    """An `IndexRefresh` listener posting the screen's messages (from the refresh's thread or process relay)."""

    def __init__(self, post: Callable[[Message], object]) -> None:
        self.post = post

    def progress(self, done: int, total: int) -> None:
        self.post(Progress(done, total))

    def written(self, count: int) -> None:
        self.post(Written(count))

    def finished(self, stats: RefreshStats, error: str | None) -> None:
        self.post(Refreshed(stats, error))
