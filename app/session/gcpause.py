"""Pausing Python's cyclic garbage collector while building many small objects.

Loading 100,000 entries creates several hundred thousand containers; each generation-2 collection then
walks all of them, which made loading and layout 2-3x slower. Nothing built here forms reference cycles
that must be collected promptly, so collection simply waits until the build is done.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

BIG = 4 << 20  # bytes of input above which a build counts as big (see `gc_paused`)


@contextmanager
def gc_paused(big: bool = False) -> Iterator[None]:
    """No cyclic collection inside; with `big` (a whole session being built), its objects are frozen after.

    Objects made while collection is off are all young: the first collections after it would walk every
    one of them three times over (generation 0, 1, then 2), about a second at 100,000 entries. A big build
    collects what is garbage before it starts (the heap is small then) and freezes what it made, so those
    walks never happen; `let_collections_in()` gives them back before the tree is dropped.
    """
    was_enabled = gc.isenabled()
    if big and was_enabled:
        gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if big:
                gc.freeze()
            gc.enable()


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
