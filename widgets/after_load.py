"""`AfterLoadMixin`: what the first screen of a session need not wait for — the context size in the status
bar, freezing the loaded tree out of collections, and the other filters' layouts and the search index."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pitree.session.gcpause import Freezer, LoadPause
from pitree.session.tree import SessionTree
from pitree.summary.tokens import load_encoder
from pitree.widgets.explorer_base import ExplorerBase
from textual import work
from textual.timer import Timer


class AfterLoadMixin(ExplorerBase):
    """Part of `PitreeApp` (see `app.py`): the state it reads is the app's."""

    exact_tokens: bool
    _freezer: Freezer
    _freeze_timer: Timer | None
    _load_pause: LoadPause | None

    if TYPE_CHECKING:  # the app's own

        def _update_status(self, grown: list | None = None, context: bool = True) -> None: ...

    def pause_collection_until_first_screen(self) -> None:
        """No cyclic collection from a load's start to its first screen (`LoadPause`): between the load's
        phases the collector walked the tree built so far again and again (seconds at 1,000,000 entries).
        Opening another session, a failed load, the first screen and leaving the app each end it."""
        self.end_collection_pause()
        self._load_pause = LoadPause()

    def end_collection_pause(self) -> None:
        if self._load_pause is not None:
            self._load_pause.release()
            self._load_pause = None

    def on_unmount(self) -> None:
        self.end_collection_pause()

    def _after_first_screen(self, tree: SessionTree, frozen: bool) -> None:
        """What the first screen of a session need not wait for: the context size in the status bar, the
        other filters' layouts and, after a session was left, collecting it and freezing the new tree.
        Collection comes back here, once the tree is frozen (or found not freezable yet)."""
        if tree is not self.stree:
            return  # another session was opened meanwhile; its own load does this
        try:
            self._update_status()
            if not frozen:
                self._freeze_tree()
        finally:
            self.end_collection_pause()
        self.prewarm_layouts()

    def _freeze_tree(self, tries: int = 5) -> None:
        """Freeze the loaded tree (fewer collector walks), once the tree left before it has been freed.

        A worker may still be finishing with the old tree: try again each second, `tries` times, then stay
        unfrozen (only collection time is lost, never memory)."""
        if self._freeze_timer is not None:
            self._freeze_timer.stop()
            self._freeze_timer = None
        if not self._freezer.freeze() and tries > 0:
            self._freeze_timer = self.set_timer(1.0, lambda: self._freeze_tree(tries - 1))

    @work(thread=True, exclusive=True, group="prewarm", description="Preparing filters", exit_on_error=False)
    def prewarm_layouts(self) -> None:
        # The token encoder first (the entry pane asks for it right away): the ~12 MB dict its build holds for
        # a moment is then reused by the layouts and the search index, not added to them (peak ~8 MB lower).
        if self.exact_tokens:
            load_encoder()
        self.tree_view.prewarm()
        if self.stree is not None:
            self.stree.search_index.update()  # so the first search is as fast as the next
