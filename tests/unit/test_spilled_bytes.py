"""`SpilledBytes` (the tree's packed usage out of memory but for its last chunk) reads back what was written,
across chunks and after cuts into chunks already spilled; `Columns` reads usage through it the same way."""

from __future__ import annotations

import random

import pytest
from pitree.session import spilled_bytes
from pitree.session.entries import Columns, pack_usage
from pitree.session.spilled_bytes import SpilledBytes


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spilled_bytes, "CHUNK", 8)
    monkeypatch.setattr(spilled_bytes, "CACHED", 2)


def test_every_range_reads_what_was_written_across_chunks_and_cuts() -> None:
    rng = random.Random(7)
    store, same = SpilledBytes(), bytearray()
    for step in range(300):
        if step % 37 == 36:  # a cut, often back into a chunk already spilled
            size = rng.randrange(len(same) + 1)
            store.truncate(size)
            del same[size:]
        else:
            piece = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 20)))
            store.extend(piece)
            same += piece
        assert len(store) == len(same)
        assert len(store._tail) < spilled_bytes.CHUNK  # in memory: only what does not fill a chunk
        for _ in range(5):
            a = rng.randrange(len(same) + 1)
            b = rng.randrange(a, len(same) + 1)
            assert store.read(a, b) == bytes(same[a:b])
    assert store.read(0, len(same)) == bytes(same) and store.read(5, 5) == b""
    assert store.read(len(same) - 3, len(same) + 100) == bytes(same[-3:])  # a slice: what there is
    assert len(store._cache) <= spilled_bytes.CACHED


def test_columns_usage_through_spilled_chunks() -> None:
    at = Columns()
    wanted = {}
    for i in range(60):
        at.put(i, i + 1, i * 10, 9, 0.0)
        if i % 3:
            numbers = (i, i + 1, i + 2, i + 3, 4 * i + 6, i / 10)
            at.set_usage(i, pack_usage(numbers))
            wanted[i] = numbers
    assert len(at.usage_blob._keys) > 10  # most of it spilled
    assert dict(at.usages(60)) == wanted
    assert dict(at.usages(31)) == {i: u for i, u in wanted.items() if i < 31}
    assert all(at.usage_numbers(i) == wanted.get(i) for i in range(60))
    at.cut(20)  # back into what was spilled: entry 20 on goes
    assert dict(at.usages(20)) == {i: u for i, u in wanted.items() if i < 20} and at.usage_of(19) is not None
    at.put(20, 21, 200, 9, 0.0)
    at.set_usage(20, pack_usage((1, 1, 1, 1, 4, 0)))
    assert at.usage_numbers(20) == (1, 1, 1, 1, 4, 0) and at.usage_numbers(19) == wanted[19]
