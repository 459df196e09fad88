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
