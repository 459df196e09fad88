"""Loading a big file in two processes gives exactly the tree a single pass gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from pitree.store import session_file
from pitree.store.session_file import load_session_fast, load_session_progressive

from tests.sessions import chain, to_bytes, user
from tests.unit.test_tree_cache import signature


@pytest.mark.parametrize("tail", [b"", b"not json\n", b'{"type":"message","id":"torn"'])
def test_two_halves_equal_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: bytes) -> None:
    monkeypatch.setenv("PITREE_NO_CACHE", "1")
    monkeypatch.setattr(session_file, "PARALLEL_MIN_BYTES", 1)
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


def test_a_parallel_load_caches_both_halves_without_a_second_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import marshal

    from pitree.store import tree_cache

    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(session_file, "PARALLEL_MIN_BYTES", 1)
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
    real_node_rows = tree_cache.node_rows
    monkeypatch.setattr(tree_cache, "node_rows", lambda nodes: calls.append(len(nodes)) or real_node_rows(nodes))
    cold, _ = load_session_fast(path)
    assert len(calls) == 1 and calls[0] < len(cold.nodes)  # only the front half was marshalled again
    (cache_file,) = (tmp_path / "cache").iterdir()
    blob = cache_file.read_bytes()
    trailer = marshal.loads(blob[len(blob) - 8 - int.from_bytes(blob[-8:], "little") : -8])
    assert len(trailer[-1]) == 2  # two segments: the front half and the child's payload
    assert tree_cache.load_cached(path) is not None
    warm, warm_builder = load_session_fast(path)
    slow, slow_builder = load_session_progressive(path)
    assert signature(warm) == signature(slow) == signature(cold)
    assert (warm_builder.size, warm_builder.next_line) == (slow_builder.size, slow_builder.next_line)


def _two_half_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from pitree.store import tree_cache

    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(session_file, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(300)))
    return path


def test_a_failed_child_falls_back_and_still_caches_the_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitree.store import tree_cache

    path = _two_half_session(tmp_path, monkeypatch)

    def broken(*args: object, **kwargs: object) -> bytes:
        raise MemoryError("the child ran out")

    monkeypatch.setattr(session_file, "_parse_back_half", broken)  # the forked child inherits it
    tree, _ = load_session_fast(path)
    assert signature(tree) == signature(load_session_progressive(path)[0])
    assert [p.name for p in (tmp_path / "cache").iterdir() if ".tmp" in p.name] == []
    assert tree_cache.load_cached(path) is not None


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
    assert tree_cache.load_cached(path) is None
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
    monkeypatch.setattr(session_file, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(session_file, "CHUNK", 4096)  # the child's frames: a few dozen lines each
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
    monkeypatch.setattr(session_file, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(session_file, "CHUNK", 4096)
    path = _framed_session(tmp_path)
    real = session_file._parse_back_half

    def dies(path: Path, builder: object, split: int, size: int, send: object) -> None:
        sent: list[int] = []

        def send_two(frame: bytes) -> None:
            if len(sent) == 2:
                session_file.os._exit(3)  # killed mid-stream: two frames went out, no end frame
            sent.append(1)
            send(frame)  # type: ignore[operator]

        real(path, builder, split, size, send_two)  # type: ignore[arg-type]

    monkeypatch.setattr(session_file, "_parse_back_half", dies)  # the forked child inherits it
    tree, _ = load_session_fast(path)
    assert signature(tree) == signature(load_session_progressive(path)[0])
