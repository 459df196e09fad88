"""Pausing Python's cyclic garbage collector while building many small objects.

Loading 100,000 entries creates several hundred thousand containers; each generation-2 collection then
walks all of them, which made loading and layout 2-3x slower. Nothing built here forms reference cycles
that must be collected promptly, so collection simply waits until the build is done.

The collector is process-wide while builds run in threads (the explorer loads in a worker while another
lays out filters, the browser indexes in the background), so pauses are counted: collection comes back
when the last one ends, not when the first does. Freezing (`gc.freeze`) also acts on every thread's
objects, so it only happens on the main thread with no other pause running; otherwise garbage another
thread dropped meanwhile (a session the user just left) would be frozen with the build and never freed.
"""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pitree.memory import return_freed_memory
from pitree.session.search_index import SearchIndex

if TYPE_CHECKING:
    from pitree.session.tree import SessionTree

BIG = 4 << 20  # bytes of input above which a build counts as big (see `gc_paused`)

_lock = threading.Lock()
_pauses = 0  # builds inside `gc_paused` now, in any thread
_was_enabled = False  # whether collection was on when the first of them started


def _pause() -> None:
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1


def _resume(freeze: bool) -> None:
    """End one pause; the last one gives collection back, after freezing if `freeze` and it is safe."""
    global _pauses
    with _lock:
        _pauses -= 1
        if _pauses == 0 and _was_enabled:
            if freeze and threading.current_thread() is threading.main_thread():
                gc.freeze()
            gc.enable()


@contextmanager
def gc_paused(big: bool = False) -> Iterator[None]:
    """No cyclic collection inside; with `big` (a whole session being built), its objects are frozen after.

    Objects made while collection is off are all young: the first collections after it would walk every
    one of them three times over (generation 0, 1, then 2), about a second at 100,000 entries. A big build
    collects what is garbage before it starts (the heap is small then) and freezes what it made, so those
    walks never happen; `let_collections_in()` gives them back before the tree is dropped. Only a build on
    the main thread, with no other build running, freezes (see the module's docstring); the explorer,
    which loads in a worker, freezes with `Freezer` once the tree has arrived.
    """
    if big and gc.isenabled() and threading.current_thread() is threading.main_thread():
        gc.collect()
    _pause()
    try:
        yield
    finally:
        _resume(freeze=big)


class LoadPause:
    """One pause of collection over a whole load, from its first read until the caller's first screen is drawn:
    it may start in a load worker and end on the UI thread, hence an object rather than a `with` block.

    With a pause per phase (read, adopt the child's frames, each tree-cache segment), collection came back
    between phases and the collector walked the growing tree again each time: generation-2 collections of
    0.3 s to 1.3 s each, about 5 s in all, while a 1,000,000-entry session loaded from its tree cache.
    `release` is idempotent, so every path out of a load can call it."""

    def __init__(self) -> None:
        self._held = True
        _pause()

    def release(self, freeze: bool = False) -> None:
        with _lock:
            held, self._held = self._held, False
        if held:
            _resume(freeze)

    @property
    def held(self) -> bool:
        return self._held


def keep_out_of_collections() -> None:
    """Move every object alive now (a freshly loaded tree) out of the collector's reach (`gc.freeze`).

    A loaded session is a few hundred thousand long-lived containers; without this, every later
    generation-2 collection (started by the layout, the JSON rows, a redraw) walks all of them again:
    0.8 s of `pitree tree --json` at 100,000 entries, and pauses in the explorer. Call
    `let_collections_in()` before dropping such a tree, so that it can be freed. Garbage is collected
    first: what is frozen is never collected, so a tree dropped a moment ago must not be frozen with the rest.
    """
    gc.collect()
    gc.freeze()


def let_collections_in() -> None:
    """Undo `keep_out_of_collections` (before a frozen tree is replaced)."""
    gc.unfreeze()


def release_tree(tree: SessionTree) -> None:
    """Let a tree's entries and columns go at once, the tree left empty: another replaces it. An entry and its
    parent refer to each other, and so do the tree and its search index, so a tree dropped waits for a
    collection, which the next load holds off: the two trees were in memory together (`bench/bench_reload.py`).
    What still refers to it in a cycle (a finished worker's arguments) is collected here, and the heap freed is
    given back to the system (`return_freed_memory`): left in the process, fragmented, it made the next load's
    peak higher than a fresh one's. Its owner makes sure nothing else still reads it."""
    for node in tree.nodes:
        node.parent = node._kids = None
    tree.nodes, tree.by_id, tree.roots, tree.calls, tree._waiting = [], {}, [], {}, {}
    tree.at.clear()  # in place: the tree's node class refers to it, and an entry may outlive the tree
    tree.memo, tree._search = {}, SearchIndex(tree)
    tree.labels, tree.label_times, tree.skipped, tree.problems = {}, {}, [], []
    tree._dropped, tree._orphans_reported = set(), set()
    tree.generation += 1
    gc.collect()
    return_freed_memory()


class Freezer:
    """Keeps one long-lived object graph (the session shown) frozen, and never freezes one that was left.

    `leaving(old)` unfreezes before `old` is dropped; `freeze()` then freezes what is alive, but only once
    every object left is really gone: a worker thread still finishing with the old tree (laying out its
    filters, say) would otherwise get it frozen and kept for good. Until then it answers False, and the
    caller tries again later; staying unfrozen only costs collection time.
    """

    def __init__(self) -> None:
        self._left: list[weakref.ref[object]] = []

    def leaving(self, old: object | None) -> None:
        let_collections_in()
        if old is not None:
            self._left.append(weakref.ref(old))

    def freeze(self, collect: bool = True) -> bool:
        """Collect, then freeze everything alive if nothing left behind survived; False if something did.

        With `collect=False` it freezes at once when nothing was ever left behind (the first session: only
        small garbage can be about, from starting up), skipping a collection that walks the whole new tree
        (half a second at 100,000 entries); when something was left, it does nothing and answers False."""
        if not collect and not self._left:
            gc.freeze()
            return True
        if not collect:
            return False
        gc.collect()
        self._left = [ref for ref in self._left if ref() is not None]
        if self._left:
            return False
        gc.freeze()
        return True
