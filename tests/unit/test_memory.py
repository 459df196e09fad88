"""A big load gives the memory it freed back to the system (`pitree.memory`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pitree import memory
from pitree.session.gcpause import BIG
from pitree.store import session_file

from tests.sessions import chain, to_bytes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_malloc_trim_is_found_and_runs() -> None:
    assert memory._malloc_trim() is not None
    assert memory.return_freed_memory() in (True, False)


def test_a_big_load_returns_what_it_freed_and_a_small_one_does_not_bother(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PITREE_NO_CACHE", "1")
    calls: list[int] = []
    monkeypatch.setattr(session_file, "return_freed_memory", lambda: calls.append(1) or True)
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_bytes(to_bytes(chain(10)))
    entries = chain(BIG // 2000 + 10)
    for e in entries:
        e["message"]["content"][0]["text"] = "x" * 2000
    big.write_bytes(to_bytes(entries))
    assert big.stat().st_size > BIG
    session_file.load_session_fast(small)
    assert calls == []
    tree, _ = session_file.load_session_fast(big)
    assert calls == [1] and len(tree.nodes) == len(entries)
