"""The tree cache never shows what a file no longer holds: after any run of appends, torn lines (a writer killed
mid-line) and their ends, bytes changed in place (the file the same size, or grown after), truncations and
replacements, a session loaded through the cache is the tree a plain parse of the file gives, every time."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from unittest import mock

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pitree.store import parse_child, tree_cache
from pitree.store.session_file import load_session_fast, load_session_progressive

from tests.hostile.test_properties import SETTINGS, entry, session_bytes
from tests.sessions import chain, to_bytes
from tests.unit.test_tree_cache import signature

OPS = ("append", "torn", "finish", "flip", "flip_and_grow", "truncate", "replace")


@st.composite
def long_session(draw: st.DrawFn) -> bytes:
    """A session of tens of kilobytes (more than samples of it would cover) ending in random entries."""
    base = to_bytes(chain(draw(st.integers(60, 200))))
    return base + b"".join(orjson.dumps(e) + b"\n" for e in draw(st.lists(entry(), max_size=10)))


def _flip(data: bytearray, at: int) -> None:
    """Change one letter or digit of `data`, the `at`-th found from a place `at` picks (nothing when none)."""
    places = [i for i, b in enumerate(data) if chr(b).isalnum()]
    if places:
        i = places[at % len(places)]
        data[i] = ord("Z") if data[i] != ord("Z") else ord("Y")


def _step(path: Path, op: str, at: int, lines: list[bytes], torn: list[bytes]) -> None:
    data = bytearray(path.read_bytes())
    if op == "append" or (op == "finish" and not torn):
        with open(path, "ab") as fh:
            fh.write(b"".join(lines))
    elif op == "torn" and not torn:
        line = lines[at % len(lines)]
        with open(path, "ab") as fh:
            fh.write(line[: len(line) // 2])
        torn.append(line[len(line) // 2 :])
    elif op == "finish":
        with open(path, "ab") as fh:
            fh.write(torn.pop())
    elif op in ("flip", "flip_and_grow"):
        _flip(data, at)
        with open(path, "r+b") as fh:  # in place: the same file, its size unchanged
            fh.write(data)
        if op == "flip_and_grow":
            with open(path, "ab") as fh:
                fh.write(b"".join(lines))
    elif op == "truncate":
        ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
        os.truncate(path, ends[at % len(ends)] if ends else 0)
        torn.clear()
    elif op == "replace":
        _flip(data, at)
        tmp = path.with_suffix(".new")
        tmp.write_bytes(data)
        os.replace(tmp, path)


@pytest.mark.writes_session  # the test is the other writer: it appends, tears, rewrites and truncates
@SETTINGS
@given(
    st.one_of(session_bytes(garbage=False), long_session()),
    st.lists(entry(), min_size=1, max_size=4),
    st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 1 << 16)), min_size=1, max_size=8),
)
def test_a_load_through_the_cache_is_the_file_as_it_is_now(
    data: bytes, extra: list[dict[str, object]], ops: list[tuple[str, int]]
) -> None:
    lines = [orjson.dumps(e) + b"\n" for e in extra]
    with (
        tempfile.TemporaryDirectory() as folder,
        mock.patch.dict(os.environ, {"PITREE_CACHE_DIR": str(Path(folder) / "cache")}),
        mock.patch.object(tree_cache, "MIN_BYTES", 1),
        mock.patch.object(parse_child, "MIN_BYTES", 1),  # cold loads fork: the child's bytes are summed too
        mock.patch.object(parse_child, "CHUNK", 512),
    ):
        path = Path(folder) / "s.jsonl"
        path.write_bytes(data)
        torn: list[bytes] = []
        load_session_fast(path)
        for op, at in ops:
            _step(path, op, at, lines, torn)
            through_cache, builder = load_session_fast(path)
            parsed, plain = load_session_progressive(path)
            assert signature(through_cache) == signature(parsed), op
            assert (builder.size, builder.next_line) == (plain.size, plain.next_line), op
