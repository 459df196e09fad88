"""Giving memory back to the system: a process that loaded a big session should not keep what the load freed.

glibc's malloc keeps the large blocks a load frees (the parse's 1 MB frames, grown lists and arrays) in its
heap, counted against the process, once it has raised its mapping threshold past them: at 1,000,000 entries,
~45-50 MB after the load. `malloc_trim(3)` hands the free pages back (3 ms there). Fixing the threshold instead
(mallopt) made the load 11% slower: every large block became a fresh mapping. Elsewhere than glibc, nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here, not at start-up: only a big load needs it

    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own C library
    except (OSError, AttributeError):  # musl and others: no malloc_trim
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim  # type: ignore[no-any-return]


def return_freed_memory() -> bool:
    """Give the memory malloc holds free back to the system (glibc only); whether any was."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
