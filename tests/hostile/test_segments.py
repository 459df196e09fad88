"""A segment (`pitree.session.segment`: what the parse child sends and the tree cache keeps) read back is the
tree it came from, for hostile sessions: split anywhere after the header as a parallel load splits them, and
cut into segments of any size as the tree cache writes them."""

from __future__ import annotations

import marshal

from hypothesis import assume, given
from hypothesis import strategies as st
from pitree.session.load import SessionBuilder
from pitree.store import tree_cache

from tests.hostile.test_properties import SETTINGS, session_bytes
from tests.unit.test_tree_cache import signature


def _through_marshal(frame: tuple[object, ...]) -> tuple[object, ...]:
    return marshal.loads(marshal.dumps(frame, tree_cache.SEGMENT_MARSHAL))  # type: ignore[no-any-return]


@SETTINGS
@given(session_bytes(), st.data(), st.booleans())
def test_the_back_part_sent_as_a_segment_is_the_tree_parsed_whole(
    data: bytes, draw: st.DataObject, texts_apart: bool
) -> None:
    end = data.rfind(b"\n") + 1  # a parse child reads complete lines only
    first = data.find(b"\n") + 1
    assume(0 < first < end)
    whole = SessionBuilder(texts_apart)
    whole.feed(data[:end], final=False)
    front = SessionBuilder(texts_apart)
    front.feed(data[:first], final=False)
    assume(not front._migrate_v1 and front.size == first)  # as `parse_child.fork_child` requires
    cut = draw.draw(st.sampled_from([i + 1 for i in range(first - 1, end) if data[i] == 0x0A]))
    front.feed(data[first:cut], final=False)
    back = front.continuation(cut)
    frame = _through_marshal((back.parse_segment(data[cut:end]), *back.segment_tail(cut)))
    front.adopt_segment(*frame)  # type: ignore[arg-type]
    for tree in (front.tree, whole.tree):  # the end of a load: the notes in file order, however it was read
        tree.finish_orphans()
    assert signature(front.tree) == signature(whole.tree) and front.tree.dialect == whole.tree.dialect
    assert (front.size, front.next_line) == (whole.size, whole.next_line)


@SETTINGS
@given(session_bytes(), st.integers(1, 9), st.booleans())
def test_a_tree_cut_into_segments_of_any_size_reads_back_the_same(data: bytes, rows: int, texts_apart: bool) -> None:
    whole = SessionBuilder(texts_apart)
    whole.feed(data, final=False)
    assume(whole.tree.header is not None)
    tree_cache_rows = tree_cache.SEGMENT_ROWS
    try:
        tree_cache.SEGMENT_ROWS = rows
        blobs = tree_cache.segments(whole)
    finally:
        tree_cache.SEGMENT_ROWS = tree_cache_rows
    back = SessionBuilder(texts_apart)
    back.restore_header(whole.tree.header, whole.tree.version)
    back.size = whole.size - sum(marshal.loads(b)[4] for b in blobs)  # the header's bytes: not in a segment
    for blob in blobs:
        back.adopt_segment(*marshal.loads(blob))
    back.tree.problems = list(dict.fromkeys(back.tree.problems))  # as `tree_cache.read_cache` does
    assert signature(back.tree) == signature(whole.tree) and back.tree.dialect == whole.tree.dialect
