"""The collector pauses: counted across threads, and nothing dropped meanwhile is ever frozen for good."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest
from pitree.session.gcpause import Freezer, gc_paused


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
