"""`TreeFreezer`: keeps the explorer's loaded tree out of the collector's walks (`pitree.session.gcpause.Freezer`),
trying again each second while a worker may still hold the tree that was left before it, and holds collection
off from a load's start to its first screen (`LoadPause`)."""

from __future__ import annotations

from pitree.session.gcpause import Freezer, LoadPause
from textual.timer import Timer
from textual.widget import Widget


class TreeFreezer:
    """The freezing of one explorer's trees; `owner` runs the retry timer."""

    def __init__(self, owner: Widget) -> None:
        self.owner = owner
        self.freezer = Freezer()
        self._timer: Timer | None = None
        self._pause: LoadPause | None = None

    def pause_collection(self) -> LoadPause:
        """No cyclic collection from now until `end_pause`: between a load's phases the collector walked the
        tree built so far again and again. Opening another session, a failed load, the first screen and
        leaving the explorer each end it; the load worker ends it too if it dies."""
        self.end_pause()
        self._pause = LoadPause()
        return self._pause

    def end_pause(self) -> None:
        if self._pause is not None:
            self._pause.release()
            self._pause = None

    def leaving(self, tree: object | None) -> None:
        """`tree` is left (another is being opened): it must be freed, never frozen again."""
        self.freezer.leaving(tree)

    def freeze_now(self) -> bool:
        """Freeze at once, without a collection first (the one session named on the command line)."""
        return self.freezer.freeze(collect=False)

    def freeze(self, tries: int = 5) -> None:
        """Freeze once the tree left before has been freed: again each second, `tries` times, then stay
        unfrozen (only collection time is lost, never memory)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if not self.freezer.freeze() and tries > 0:
            self._timer = self.owner.set_timer(1.0, lambda: self.freeze(tries - 1))
