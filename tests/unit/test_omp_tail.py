"""The tailer and oh-my-pi's title slot: rewritten in place, it is neither a truncation nor a rewrite of the
session; the poll hands the new slot over and the builder's tree takes the new name without a reload."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from pitree.session.dialect_omp import title_slot_of
from pitree.store.session_file import load_session_fast
from pitree.store.tail import SLOT, Tailer

from tests.omp_files import assistant, rewrite_slot, title_slot, user, write_omp

pytestmark = pytest.mark.writes_session  # the tests stand in for oh-my-pi rewriting its slot


def _session(tmp_path: Path, n: int = 1) -> Path:
    return write_omp(tmp_path / "s.jsonl", [user("u1", None), assistant("a1", "u1")][:n], title="First")


def test_slot_rewrite_is_no_reset_and_is_reported_once(tmp_path: Path) -> None:
    path = _session(tmp_path)
    tailer = Tailer(path)
    tailer.read_initial()
    size = path.stat().st_size
    rewrite_slot(path, "Second")
    assert path.stat().st_size == size
    event = tailer.poll()
    assert event.kind == "unchanged" and len(event.slot) == SLOT
    slot = title_slot_of(event.slot)
    assert slot is not None and slot["title"] == "Second"
    again = tailer.poll()
    assert again.kind == "unchanged" and again.slot == b""


def test_slot_rewrite_with_an_append_in_one_poll(tmp_path: Path) -> None:
    path = _session(tmp_path)
    tailer = Tailer(path)
    first = tailer.read_initial()
    rewrite_slot(path, "Renamed")
    line = orjson.dumps(assistant("a1", "u1")) + b"\n"
    with open(path, "ab") as fh:
        fh.write(line)
    event = tailer.poll()
    assert event.kind == "append" and event.data == line and event.offset == first.end
    assert title_slot_of(event.slot)["title"] == "Renamed"  # type: ignore[index]


def test_resumed_tailer_knows_the_slot(tmp_path: Path) -> None:
    """`Tailer(path, offset)` after a load (what the explorer does): the fingerprint near the slot skips it."""
    path = write_omp(tmp_path / "s.jsonl", [], title="Only")  # slot + header: the fingerprint overlaps the slot
    tree, builder = load_session_fast(path, save_cache=False)
    tailer = Tailer(path, offset=builder.size)
    rewrite_slot(path, "Later")
    event = tailer.poll()
    assert event.kind == "unchanged" and event.slot
    slot = title_slot_of(event.slot)
    assert slot is not None
    tree.set_title_slot(slot)
    assert tree.name == "Later"


def test_a_changed_header_or_a_broken_slot_is_still_a_rewrite(tmp_path: Path) -> None:
    path = _session(tmp_path)
    tailer = Tailer(path)
    tailer.read_initial()
    data = bytearray(path.read_bytes())
    data[SLOT + 2] ^= 1  # inside the header line
    path.write_bytes(bytes(data))
    assert tailer.poll().kind == "reset"
    path = _session(tmp_path)
    tailer = Tailer(path)
    tailer.read_initial()
    with open(path, "r+b") as fh:
        fh.write(b"x" * 10)
    assert tailer.poll().kind == "reset"


def test_a_pi_file_starting_like_a_slot_is_not_one(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    short = title_slot("x")[:-10].rstrip(b" }") + b'"}\n'
    path.write_bytes(short + b'{"type":"session","id":"s"}\n')
    tailer = Tailer(path)
    tailer.read_initial()
    with open(path, "r+b") as fh:
        fh.write(b'{"type":"titlE"')
    assert tailer.poll().kind == "reset"
