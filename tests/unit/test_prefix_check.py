"""`check_prefix` against the spans a parse computes (`SessionBuilder.spans`), and oh-my-pi's title slot as a
span of its own, which the tree cache and the live tail leave unchecked (omp rewrites it in place)."""

from __future__ import annotations

import threading
import zlib
from pathlib import Path

import orjson
import pytest
from pitree.session.load import SessionBuilder
from pitree.store import tree_cache
from pitree.store.prefix_check import check_prefix
from pitree.store.session_file import load_session_fast, load_session_progressive

from tests.omp_files import assistant, rewrite_slot, title_slot, user, write_omp
from tests.sessions import chain, to_bytes

pytestmark = pytest.mark.writes_session  # the tests change copies in place, as a tool would


def _spans(path: Path, chunk: int = 0) -> list[tuple[int, int]]:
    builder = SessionBuilder()
    data = path.read_bytes()
    step = chunk or len(data)
    for pos in range(step, len(data) + step, step):
        builder.feed(data[builder.size : pos], final=False)  # the lines it finished: a cut line comes again
    assert builder.spans is not None
    return builder.spans


def test_same_bytes_changed_bytes_fewer_bytes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(50)))
    spans = _spans(path, chunk=997)  # fed in pieces: one span all the same, the CRC carried on
    assert len(spans) == 1 and spans[0] == (path.stat().st_size, zlib.crc32(path.read_bytes()))
    assert check_prefix(path, spans) is True
    assert check_prefix(path, spans, block_size=64) is True  # the span read in many blocks
    with open(path, "ab") as fh:
        fh.write(b'{"grown": 1}\n')
    assert check_prefix(path, spans) is True  # only the bytes read are checked
    data = bytearray(path.read_bytes())
    data[data.index(b'"text":"a25"') + 9] = ord("b")  # a letter of an entry's text, in place: same size
    path.write_bytes(bytes(data))
    assert check_prefix(path, spans, block_size=64) is False
    path.write_bytes(to_bytes(chain(50))[:-10])
    assert check_prefix(path, spans) is False  # shorter than what was read


def test_no_file_or_stopped_cannot_tell(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(5)))
    spans = _spans(path)
    stop = threading.Event()
    stop.set()
    assert check_prefix(path, spans, stop) is None
    path.unlink()
    assert check_prefix(path, spans) is None


def test_omp_title_slot_is_a_span_of_its_own(tmp_path: Path) -> None:
    path = write_omp(tmp_path / "s.jsonl", [user("u1", None), assistant("a1", "u1")], title="First")
    spans = _spans(path)
    assert spans[0] == (256, zlib.crc32(title_slot("First")))
    assert spans[-1][0] == path.stat().st_size and len(spans) == 2
    rewrite_slot(path, "Second")
    assert check_prefix(path, spans) is False  # the slot is checked when asked
    assert check_prefix(path, spans, first=1) is True  # and left out when not
    data = bytearray(path.read_bytes())
    data[data.index(b'"u1"') + 1] = ord("x")
    path.write_bytes(bytes(data))
    assert check_prefix(path, spans, first=1) is False


def test_tree_cache_survives_a_title_change_and_sees_a_change_after_the_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    entries = [user("u1", None)] + [assistant(f"a{i}", "u1" if i == 1 else f"a{i - 1}") for i in range(1, 40)]
    path = write_omp(tmp_path / "s.jsonl", entries, title="First")
    load_session_fast(path)
    rewrite_slot(path, "Second")
    with open(path, "ab") as fh:
        fh.write(orjson.dumps(assistant("a40", "a39")) + b"\n")
    hit = tree_cache.read_cache(path)
    assert hit is not None  # the slot changed in place: read again, not a reason to parse it all
    assert hit[0].tree.name == "Second"
    tree, _ = load_session_fast(path)
    fresh, _ = load_session_progressive(path)
    assert tree.name == fresh.name == "Second" and [n.id for n in tree.nodes] == [n.id for n in fresh.nodes]
    data = bytearray(path.read_bytes())
    data[data.index(b'"a20"') + 2] = ord("9")  # an id after the slot, same size
    path.write_bytes(bytes(data))
    with open(path, "ab") as fh:
        fh.write(orjson.dumps(assistant("a41", "a40")) + b"\n")
    assert tree_cache.read_cache(path) is None
    again, _ = load_session_fast(path)
    assert "a90" in again.by_id and "a20" not in again.by_id
