"""Loading a big file in two processes gives exactly the tree a single pass gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from pitree.store import parse_child, session_file
from pitree.store.session_file import load_session_fast, load_session_progressive

from tests.sessions import chain, to_bytes, user
from tests.unit.test_tree_cache import signature


@pytest.mark.parametrize("tail", [b"", b"not json\n", b'{"type":"message","id":"torn"'])
def test_two_halves_equal_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: bytes) -> None:
    monkeypatch.setenv("PITREE_NO_CACHE", "1")
    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    entries = chain(400)
    # Across the halves: a child before its parent, a duplicate id, an orphan, junk lines.
    entries.insert(10, user("late-kid", "late-parent"))
    entries.append(user("late-parent", "e0000399"))
    entries.append(user("e0000005", "e0000004", "duplicate"))
    entries.append(user("orphan", "nowhere"))
    path = tmp_path / "s.jsonl"
    data = to_bytes(entries)
    middle = data.index(b"\n", len(data) // 2) + 1
    path.write_bytes(data[:middle] + b"\n[1]\n" + data[middle:] + tail)
    forks: list[int] = []
    real_fork = session_file.os.fork
    monkeypatch.setattr(session_file.os, "fork", lambda: forks.append(1) or real_fork())
    fast, fast_builder = load_session_fast(path)
    assert forks == [1]  # the back half really was parsed by a child
    slow, slow_builder = load_session_progressive(path)
    assert signature(fast) == signature(slow)
    assert (fast_builder.size, fast_builder.next_line) == (slow_builder.size, slow_builder.next_line)
    assert fast.get("late-kid").parent.id == "late-parent"


@pytest.mark.parametrize("first", [b"not json\n", b"\n"])
def test_a_first_line_that_is_no_object_loads_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: bytes
) -> None:
    """The header (or its absence, and with it the version and v1's ids) is the first object: with none on line 1
    the child could not know how to read its part, so there is none; the "no header" note and the ids hold."""
    import orjson

    monkeypatch.setenv("PITREE_NO_CACHE", "1")
    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    entries = [
        {"type": "message", "timestamp": "2026-01-01T00:00:01.000Z", "message": {"role": "user", "content": f"m{i}"}}
        for i in range(300)
    ]  # no ids: a v1 file, whose ids pitree derives in order
    path = tmp_path / "s.jsonl"
    path.write_bytes(first + b"".join(orjson.dumps(e) + b"\n" for e in entries))
    forks: list[int] = []
    real_fork = session_file.os.fork
    monkeypatch.setattr(session_file.os, "fork", lambda: forks.append(1) or real_fork())
    fast, _ = load_session_fast(path)
    slow, _ = load_session_progressive(path)
    assert forks == [] and signature(fast) == signature(slow)
    assert any("no session header" in p.message for p in fast.problems) and fast.version == 1


def test_a_parallel_load_caches_both_halves_without_a_second_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import marshal
    import zlib

    from pitree.store import tree_cache

    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    entries = chain(400)
    entries.insert(10, user("late-kid", "late-parent"))
    entries.append(user("late-parent", "e0000399"))
    entries.append(user("e0000005", "e0000004", "duplicate"))
    path = tmp_path / "s.jsonl"
    data = to_bytes(entries)
    middle = data.index(b"\n", len(data) // 2) + 1
    path.write_bytes(data[:middle] + b"\n[1]\n" + data[middle:])
    calls: list[int] = []
    real_pack = tree_cache.segment_columns.pack
    monkeypatch.setattr(
        tree_cache.segment_columns, "pack", lambda nodes, *shift: calls.append(len(nodes)) or real_pack(nodes, *shift)
    )
    cold, _ = load_session_fast(path)
    assert len(calls) == 1 and calls[0] < len(cold.nodes)  # only the front half was packed again
    (cache_file,) = (tmp_path / "cache").iterdir()
    blob = cache_file.read_bytes()
    trailer = marshal.loads(blob[len(blob) - 8 - int.from_bytes(blob[-8:], "little") : -8])
    assert len(trailer[-1]) == 2  # two segments: the front half and the child's payload
    (front_end, front_crc), (back_end, back_crc) = trailer[3]  # the bytes each process read, as it summed them
    on_disk = path.read_bytes()
    assert back_end == len(on_disk) and front_crc == zlib.crc32(on_disk[:front_end])
    assert back_crc == zlib.crc32(on_disk[front_end:])
    assert tree_cache.read_cache(path) is not None
    warm, warm_builder = load_session_fast(path)
    slow, slow_builder = load_session_progressive(path)
    assert signature(warm) == signature(slow) == signature(cold)
    assert (warm_builder.size, warm_builder.next_line) == (slow_builder.size, slow_builder.next_line)


def _two_half_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from pitree.store import tree_cache

    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(300)))
    return path


def test_a_failed_child_falls_back_and_still_caches_the_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitree.store import tree_cache

    path = _two_half_session(tmp_path, monkeypatch)

    def broken(*args: object, **kwargs: object) -> bytes:
        raise MemoryError("the child ran out")

    monkeypatch.setattr(parse_child, "_parse_part", broken)  # the forked child inherits it
    tree, _ = load_session_fast(path)
    assert signature(tree) == signature(load_session_progressive(path)[0])
    assert [p.name for p in (tmp_path / "cache").iterdir() if ".tmp" in p.name] == []
    assert tree_cache.read_cache(path) is not None


def test_a_cancelled_load_leaves_no_cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _two_half_session(tmp_path, monkeypatch)
    with pytest.raises(session_file.LoadCancelled):
        load_session_fast(path, cancelled=lambda: True)
    assert not (tmp_path / "cache").exists() or list((tmp_path / "cache").iterdir()) == []


@pytest.mark.parametrize("cut", ["half", "trailer", "magic"])
def test_a_damaged_cache_file_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: str) -> None:
    from pitree.store import tree_cache

    path = _two_half_session(tmp_path, monkeypatch)
    load_session_fast(path)
    (cache_file,) = (tmp_path / "cache").iterdir()
    blob = cache_file.read_bytes()
    damaged = {"half": blob[: len(blob) // 2], "trailer": blob[:-3], "magic": b"x" + blob[1:]}[cut]
    cache_file.write_bytes(damaged)
    assert tree_cache.read_cache(path) is None
    assert signature(load_session_fast(path)[0]) == signature(load_session_progressive(path)[0])


def _framed_session(tmp_path: Path) -> Path:
    """A session whose back half the child sends in many frames, with lines that carry their line number:
    entries without an id (pitree names them `~L<line>`), junk, a CRLF line, a duplicate, an orphan."""
    entries = chain(600)
    for i in range(350, 600, 50):
        del entries[i]["id"]  # no usable id: named after its line, which must be the file's line
    entries.append(user("e0000005", "e0000004", "duplicate"))
    entries.append(user("orphan", "nowhere"))
    data = to_bytes(entries)
    lines = data.split(b"\n")
    lines.insert(500, b"not json")
    lines[520] = lines[520] + b"\r"
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))
    return path


def test_the_back_half_in_many_frames_equals_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitree.store import tree_cache

    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    monkeypatch.setattr(parse_child, "CHUNK", 4096)  # the child's frames: a few dozen lines each
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    path = _framed_session(tmp_path)
    cold, cold_builder = load_session_fast(path)
    slow, slow_builder = load_session_progressive(path)
    assert signature(cold) == signature(slow)
    assert (cold_builder.size, cold_builder.next_line) == (slow_builder.size, slow_builder.next_line)
    unnamed = [n for n in slow.nodes if n.id.startswith("~L")]
    assert len(unnamed) == 5 and all(n.id == f"~L{n.line}" for n in unnamed)
    assert sum("pitree calls it ~L" in p.message for p in cold.problems) == 5
    (cache_file,) = (tmp_path / "cache").iterdir()
    blob = cache_file.read_bytes()
    import marshal

    trailer = marshal.loads(blob[len(blob) - 8 - int.from_bytes(blob[-8:], "little") : -8])
    assert len(trailer[-1]) > 5  # the front half, then one segment per frame of the child
    warm, warm_builder = load_session_fast(path)
    assert signature(warm) == signature(slow)
    assert (warm_builder.size, warm_builder.next_line) == (slow_builder.size, slow_builder.next_line)


def test_a_child_that_dies_between_frames_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PITREE_NO_CACHE", "1")
    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    monkeypatch.setattr(parse_child, "CHUNK", 4096)
    path = _framed_session(tmp_path)
    real = parse_child._send
    sent: list[int] = []

    def send_two(fd: int, frame: bytes, parsed: int) -> None:
        if len(sent) == 2:
            parse_child.os._exit(3)  # killed mid-stream: two frames went out, no end frame
        sent.append(1)
        real(fd, frame, parsed)

    monkeypatch.setattr(parse_child, "_send", send_two)  # the forked child inherits it
    tree, _ = load_session_fast(path)
    assert signature(tree) == signature(load_session_progressive(path)[0])


# ---- the early fork (`pitree FILE` starts the child before it imports Textual) --------------------------------


@pytest.fixture
def early_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PITREE_NO_CACHE", "1")
    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    monkeypatch.setattr(parse_child, "CHUNK", 4096)
    monkeypatch.setattr(parse_child, "_early", None)
    return _framed_session(tmp_path)


def _counting_forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    forks: list[int] = []
    real_fork = parse_child.os.fork
    monkeypatch.setattr(parse_child.os, "fork", lambda: forks.append(1) or real_fork())
    return forks


def test_an_early_child_is_taken_over_by_the_load(early_session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    forks = _counting_forks(monkeypatch)
    parse_child.fork_early(early_session)
    child = parse_child._early
    assert child is not None and forks == [1]
    assert child.split < early_session.stat().st_size // 2  # the parent's share is the smaller one
    seen: list[tuple[int, int]] = []
    tree, builder = load_session_fast(early_session, progress=lambda done, total: seen.append((done, total)))
    assert forks == [1] and parse_child._early is None  # no second child: the early one did the back part
    slow, slow_builder = load_session_progressive(early_session)
    assert signature(tree) == signature(slow)
    assert (builder.size, builder.next_line) == (slow_builder.size, slow_builder.next_line)
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and seen[-1] == (slow_builder.size, slow_builder.size)


def test_lines_written_after_the_early_fork_are_left_for_the_tailer(
    early_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parse_child.fork_early(early_session)
    before = early_session.stat().st_size
    with open(early_session, "ab") as fh:
        fh.write(to_bytes([user("appended", "e0000599")]))
    tree, builder = load_session_fast(early_session)
    assert builder.size == before and tree.get("appended") is None  # the tail reads it next (from builder.size)
    tree, builder = load_session_fast(early_session, final=True)  # a one-shot read takes it at once
    assert tree.get("appended") is not None


def test_an_early_child_of_another_file_is_killed(early_session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parse_child.fork_early(early_session)
    child = parse_child._early
    assert child is not None
    other = early_session.with_name("other.jsonl")
    other.write_bytes(early_session.read_bytes())
    forks = _counting_forks(monkeypatch)
    tree, _ = load_session_fast(other)
    assert child._status is not None and forks == [1]  # ended and reaped; the load forked its own child
    assert signature(tree) == signature(load_session_progressive(other)[0])


def test_a_replaced_file_is_not_read_by_the_early_child(early_session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parse_child.fork_early(early_session)
    child = parse_child._early
    assert child is not None
    data = early_session.read_bytes()
    early_session.unlink()
    early_session.write_bytes(data[: len(data) * 3 // 4])  # a new file, shorter: Pi rewrote it
    forks = _counting_forks(monkeypatch)
    tree, _ = load_session_fast(early_session)
    assert child._status is not None and forks == [1]
    assert signature(tree) == signature(load_session_progressive(early_session)[0])


def test_no_early_child_when_a_tree_cache_exists_or_the_file_is_small(
    early_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pitree.store import tree_cache

    monkeypatch.delenv("PITREE_NO_CACHE")
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    load_session_fast(early_session)  # fills the cache
    forks = _counting_forks(monkeypatch)
    parse_child.fork_early(early_session)
    assert parse_child._early is None and forks == []
    monkeypatch.setattr(parse_child, "MIN_BYTES", early_session.stat().st_size + 1)
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "empty"))
    parse_child.fork_early(early_session)
    assert parse_child._early is None and forks == []
    parse_child.fork_early(tmp_path / "missing.jsonl")  # the load says what is wrong, not the early fork
    assert parse_child._early is None


def test_an_early_child_nobody_took_is_killed_at_exit(early_session: Path) -> None:
    parse_child.fork_early(early_session)
    child = parse_child._early
    assert child is not None
    parse_child._drop_early()  # what atexit runs
    assert parse_child._early is None and child._status is not None
    with pytest.raises(ChildProcessError):
        parse_child.os.waitpid(child.pid, 0)  # reaped: no zombie left


def test_a_cancelled_load_ends_the_early_child(early_session: Path) -> None:
    parse_child.fork_early(early_session)
    child = parse_child._early
    assert child is not None
    calls: list[int] = []

    def cancel_soon() -> bool:
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(session_file.LoadCancelled):
        load_session_fast(early_session, cancelled=cancel_soon)
    assert child._status is not None  # killed (or done) and reaped by the load, not left to exit


STAMPS = ["2026-03-28T20:22:19.572Z", "2026-03-28T22:22:19+02:00", "2026-03-28T20:22:19", 1774729339572, 1.5]
STAMPS += [None, "", "garbage", True, [1], {"a": 1}, "2026-13-01T00:00:00Z"]


def test_every_kind_of_timestamp_is_parsed_alike_in_the_child_the_parent_and_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Timestamps are parsed as entries load (one float each in `Positions.ts`): the parse child's rows,
    the parent's own and the tree cache's must all give `parse_timestamp` of the raw value."""
    from pitree.session.entries import parse_timestamp
    from pitree.store import tree_cache

    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    entries = chain(200)
    for i, entry in enumerate(entries):
        entry["timestamp"] = STAMPS[i % len(STAMPS)]
        if entry["timestamp"] is None:
            del entry["timestamp"]
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(entries))
    expected = [repr(parse_timestamp(e.get("timestamp"))) for e in entries]
    assert "nan" in expected and repr(1774729339572.0) in expected
    cold, _ = load_session_fast(path)  # the back part from a child, the front parsed here
    warm, _ = load_session_fast(path)  # from the cache
    slow, _ = load_session_progressive(path)
    for tree in (cold, warm, slow):
        assert [repr(n.ts) for n in tree.nodes] == expected
    assert signature(cold) == signature(warm) == signature(slow)


def test_positions_cut_pads_with_zeros_and_nan_times() -> None:
    from pitree.session.entries import Positions

    at = Positions()
    at.put(0, 1, 0, 10, 5.0)
    at.put(3, 4, 40, 10, 6.0)  # entries 1 and 2 were never put
    assert list(at.line) == [1, 0, 0, 4] and list(at.offset) == [0, 0, 0, 40]
    assert [repr(t) for t in at.ts] == ["5.0", "nan", "nan", "6.0"]
    at.put(1, 2, 10, 10, 7.0)  # back to 1: what was after it goes
    assert list(at.line) == [1, 2] and list(at.ts) == [5.0, 7.0]


def test_the_child_keeps_no_chunk_after_sending_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child parses with the collector off; each chunk's tree holds a cycle (its columns and their entry
    class), so without a collection of the youngest generation after each chunk every one stayed alive."""
    import gc
    import os

    from pitree.session.columns import Columns
    from pitree.session.load import SessionBuilder

    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(3000)))
    monkeypatch.setattr(parse_child, "CHUNK", 16 << 10)  # many chunks
    builder = SessionBuilder()
    with open(path, "rb") as fh:
        builder.feed(fh.readline(), final=False)
    size = path.stat().st_size
    sink = os.open(os.devnull, os.O_WRONLY)
    was = gc.isenabled()
    gc.disable()  # as in the child
    try:
        before = sum(type(o) is Columns for o in gc.get_objects())
        parse_child._parse_part(path, builder, builder.size, size, sink)
        after = sum(type(o) is Columns for o in gc.get_objects())
    finally:
        os.close(sink)
        if was:
            gc.enable()
    assert size > 30 * (16 << 10) and after - before <= 1


def test_the_sessions_index_does_not_freeze_the_trees_it_drops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A big file loaded for the sessions index (`load_full`, on the main thread) is dropped right after: frozen
    out of the collector it was never freed (a 30 MB session leaked ~17 MB a load)."""
    import gc

    from pitree.store import index_load

    monkeypatch.setenv("PITREE_NO_CACHE", "1")
    monkeypatch.setattr(session_file, "BIG", 1)  # every load counts as big
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(200)))
    st = path.stat()
    frozen = gc.get_freeze_count()
    loaded = index_load.load_full(str(path), (st.st_size, st.st_mtime_ns, st.st_ino), False)
    assert loaded.error is None and gc.get_freeze_count() == frozen
    load_session_fast(path, final=True)  # a one-shot command's load still freezes its tree
    assert gc.get_freeze_count() > frozen
    gc.unfreeze()


@pytest.mark.parametrize("marker_at", [100, 450])
def test_an_entry_only_oh_my_pi_writes_makes_the_rest_read_as_its_wherever_the_split_falls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker_at: int
) -> None:
    """A file whose header says nothing of oh-my-pi: an entry only it writes (here at entry 100, in the part the
    parent reads, or 450, in the child's) makes the entries after it read as oh-my-pi's (a `thinking_level_change`
    without a level is `[thinking: off]`, not `[thinking: null]`), in every frame after it and in the cache."""
    from pitree.session.load import load_bytes
    from pitree.store import tree_cache

    from tests.sessions import entry

    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    monkeypatch.setattr(parse_child, "CHUNK", 4096)  # the child's frames: a few dozen lines each
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    entries = chain(600)
    entries[marker_at]["type"], entries[marker_at]["serviceTier"] = "service_tier_change", "flex"
    entries[580] = entry("thinking_level_change", "e0000580", "e0000579", thinkingLevel=None)
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(entries))
    whole = load_bytes(path.read_bytes())
    assert whole.dialect == "omp" and whole.get("e0000580").text == "[thinking: off]"
    cold, _ = load_session_fast(path)
    warm, _ = load_session_fast(path)
    assert tree_cache.read_cache(path) is not None
    for tree in (cold, warm):
        assert tree.dialect == "omp" and signature(tree) == signature(whole)


def test_the_notes_come_in_file_order_however_the_file_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read whole, a file's notes on its lines came before those linking makes; read in two processes, the front
    part's came first: both now list them by line."""
    monkeypatch.setenv("PITREE_NO_CACHE", "1")
    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    entries = chain(400)
    entries.insert(20, user("e0000010", "e0000009", "a duplicate in the front part"))
    del entries[350]["id"]  # in the back part: no usable id, a note made as its line is read
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(entries))
    fast, _ = load_session_fast(path)
    slow, _ = load_session_progressive(path)
    assert [p.line for p in fast.problems] == sorted(p.line for p in fast.problems)
    assert "duplicate id" in fast.problems[0].message and "no usable id" in fast.problems[1].message
    assert fast.problems == slow.problems
