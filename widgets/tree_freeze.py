"""`TreeFreezer`: keeps the explorer's loaded tree out of the collector's walks (`pitree.session.gcpause.Freezer`),
trying again each second while a worker may still hold the tree that was left before it."""

from __future__ import annotations

from pitree.session.gcpause import Freezer
from textual.timer import Timer
from textual.widget import Widget


class TreeFreezer:
    """The freezing of one explorer's trees; `owner` runs the retry timer."""

    def __init__(self, owner: Widget) -> None:
        self.owner = owner
        self.freezer = Freezer()
        self._timer: Timer | None = None

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
