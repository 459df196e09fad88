"""The collector pauses: counted across threads, and nothing dropped meanwhile is ever frozen for good."""

from __future__ import annotations

import gc
import sys
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from pitree.session.gcpause import BIG, Freezer, LoadPause, gc_paused, release_tree
from pitree.session.load import load_bytes
from pitree.store import tree_cache
from pitree.store.session_file import load_session_fast

from tests.sessions import chain, to_bytes, user, write_session


class Cyclic:
    """Freed only by the cyclic collector (as a session tree is: nodes and their parents refer to each other)."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    gc.unfreeze()
    gc.enable()
    yield
    gc.unfreeze()
    gc.enable()


def in_thread(entered: threading.Event, leave: threading.Event, big: bool) -> threading.Thread:
    def run() -> None:
        with gc_paused(big=big):
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=run)
    thread.start()
    assert entered.wait(10)
    return thread


def test_collection_comes_back_when_the_last_pause_ends_not_the_first() -> None:
    entered, leave = threading.Event(), threading.Event()
    thread = in_thread(entered, leave, big=False)
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the worker's pause still runs
    leave.set()
    thread.join()
    assert gc.isenabled()


def test_a_big_build_in_a_thread_freezes_nothing_the_main_thread_dropped() -> None:
    entered, leave = threading.Event(), threading.Event()
    thread = in_thread(entered, leave, big=True)
    dropped = Cyclic()
    ref = weakref.ref(dropped)
    del dropped  # garbage made while the worker's build has collection off
    frozen = gc.get_freeze_count()
    leave.set()
    thread.join()
    assert gc.get_freeze_count() == frozen
    gc.collect()
    assert ref() is None


def test_a_big_build_on_the_main_thread_freezes_what_it_made() -> None:
    with gc_paused(big=True):
        made = [Cyclic() for _ in range(100)]
    assert gc.get_freeze_count() >= len(made)


def test_a_big_build_on_the_main_thread_does_not_freeze_while_a_worker_builds() -> None:
    entered, leave = threading.Event(), threading.Event()
    thread = in_thread(entered, leave, big=False)
    with gc_paused(big=True):
        pass
    assert gc.get_freeze_count() == 0
    leave.set()
    thread.join()


def test_the_freezer_waits_until_the_tree_left_is_gone() -> None:
    freezer = Freezer()
    old = Cyclic()
    ref = weakref.ref(old)
    gc.freeze()  # `old` was the tree shown, kept out of collections
    held_by_a_worker = old
    freezer.leaving(old)
    del old
    assert gc.get_freeze_count() == 0  # leaving unfreezes
    assert freezer.freeze() is False  # still held: freezing now would keep it for good
    assert gc.get_freeze_count() == 0
    del held_by_a_worker
    assert freezer.freeze() is True
    assert ref() is None
    assert gc.get_freeze_count() > 0


def test_the_freezer_freezes_at_once_when_nothing_was_left() -> None:
    freezer = Freezer()
    freezer.leaving(None)
    assert freezer.freeze() is True


def test_freezing_without_a_collection_only_when_nothing_was_left() -> None:
    first = Freezer()
    assert first.freeze(collect=False) is True and gc.get_freeze_count() > 0
    gc.unfreeze()
    after_a_switch = Freezer()
    old = Cyclic()
    after_a_switch.leaving(old)
    del old
    assert after_a_switch.freeze(collect=False) is False  # the tree left may still be garbage: collect first
    assert gc.get_freeze_count() == 0
    assert after_a_switch.freeze() is True


def test_a_load_pause_outlasts_every_phase_and_ends_once_from_any_thread() -> None:
    pause = LoadPause()
    with gc_paused(big=True):  # a phase of the load ends: collection must stay off
        pass
    assert not gc.isenabled() and gc.get_freeze_count() == 0
    released = threading.Thread(target=pause.release)  # the UI thread ends what the load worker began
    released.start()
    released.join()
    assert gc.isenabled() and not pause.held
    other = LoadPause()
    pause.release()  # a second release must not end another load's pause
    assert not gc.isenabled()
    other.release()
    assert gc.isenabled()


def _big_session(tmp_path: Path) -> Path:
    """A session above `BIG` and the tree cache's minimum, so every phase counts as a big build."""
    text = "word " * 600
    entries = [user(f"u{i:06d}", f"u{i - 1:06d}" if i else None, f"{i} {text}", t=i) for i in range(2000)]
    path = write_session(tmp_path, entries, name="big.jsonl")
    assert path.stat().st_size > max(BIG, tree_cache.MIN_BYTES)
    return path


@pytest.mark.parametrize("cached", [False, True], ids=["cold", "from the tree cache"])
def test_a_whole_load_collects_once_before_it_and_never_between_its_phases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cached: bool
) -> None:
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    path = _big_session(tmp_path)
    if cached:
        load_session_fast(path)
        assert tree_cache.has_cache(path)
        gc.unfreeze()
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        tree, _ = load_session_fast(path)
    finally:
        gc.callbacks.remove(seen)
    assert len(tree.nodes) == 2000
    # With a pause per phase, each big phase collected again before it began (the objects the last phase
    # made were still young: the walk covered the tree built so far), and collection ran between them.
    assert len(collections) <= 1


def test_a_released_tree_lets_its_entries_go_without_a_collection() -> None:
    """`release_tree`: an entry and its parent refer to each other; once unlinked, dropping the tree frees the
    entries at once, with the collector off (a load holds it off while the next tree is read)."""
    tree = load_bytes(to_bytes(chain(50)))
    leaf = tree.nodes[-1]
    kept = leaf.parent
    assert kept is not None and kept.children == (leaf,)
    count = sys.getrefcount(kept)
    was = gc.isenabled()
    gc.disable()
    try:
        search = weakref.ref(tree._search)
        release_tree(tree)
        assert tree.nodes == [] and tree.by_id == {} and tree.roots == [] and tree.calls == {}
        # the columns emptied in place (an entry that outlives the tree reaches them through its class) and the
        # search index, in a cycle with the tree, gone although the tree is still held
        assert type(leaf)._at is tree.at and len(tree.at.line) == 0 and len(tree.at.texts) == 0
        assert search() is None
        assert leaf.parent is None and kept.children == () and kept.parent is None
        del leaf  # held now by this test alone: its parent's link to it went with the release
        assert sys.getrefcount(kept) < count
    finally:
        if was:
            gc.enable()
