"""Row texts kept apart from the entries (`RowTexts`, `Columns.take_texts`) read back exactly what was put."""

from __future__ import annotations

import json
import marshal
import threading
from pathlib import Path

import pytest
from pitree.session.row_texts import BLOCK, RowTexts
from pitree.session.search_index import entry_text
from pitree.store import parse_child, tree_cache
from pitree.store.session_file import load_session, load_session_fast

from tests.sessions import assistant, header, tool_result, user
from tests.unit.test_tree_cache import signature

ODD = ["", "plain", "é accents", "emoji 😀", "lone \ud800 surrogate", "two\nlines", "tab\there", "x" * 3000]


def _text(i: int) -> str:
    return f"{ODD[i % len(ODD)]} #{i}"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))


def test_texts_read_back_from_every_block() -> None:
    texts = RowTexts()
    n = 2 * BLOCK + 123
    for i in range(0, 1000):
        texts.put(i, _text(i))
    texts.extend(1000, [_text(i) for i in range(1000, n)])  # over two block ends at once
    assert len(texts) == n
    assert [texts.get(i) for i in range(n)] == [_text(i) for i in range(n)]
    assert [texts.get(i) for i in reversed(range(n))] == [_text(i) for i in reversed(range(n))]
    assert texts.range(BLOCK - 5, 2 * BLOCK + 7) == [_text(i) for i in range(BLOCK - 5, 2 * BLOCK + 7)]
    assert texts.range(3, 3) == []
    assert len(texts._open) < BLOCK and texts._spill is not None and texts._spill.on_disk > 0  # not in memory


def test_cut_goes_back_into_a_full_block_and_pads_forward() -> None:
    texts = RowTexts()
    texts.extend(0, [_text(i) for i in range(2 * BLOCK + 10)])
    texts.put(BLOCK + 3, "new")  # back into the second, full block
    assert len(texts) == BLOCK + 4
    assert texts.get(BLOCK + 3) == "new" and texts.get(BLOCK + 2) == _text(BLOCK + 2) and texts.get(0) == _text(0)
    texts.extend(BLOCK + 4, [_text(i) for i in range(BLOCK + 4, 3 * BLOCK)])
    assert texts.get(2 * BLOCK + 1) == _text(2 * BLOCK + 1) and texts.get(BLOCK + 3) == "new"
    texts.put(3 * BLOCK + 2, "after a gap")  # entries never put read as empty
    assert [texts.get(i) for i in range(3 * BLOCK, 3 * BLOCK + 3)] == ["", "", "after a gap"]
    texts.cut(5)
    assert len(texts) == 5 and texts.range(0, 5) == [_text(i) for i in range(5)]


def test_a_worker_reads_while_texts_are_put() -> None:
    texts = RowTexts()
    n = 6 * BLOCK
    wrong: list[tuple[int, str]] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            count = len(texts)
            for i in range(max(0, count - 3000), count, 7):
                got = texts.get(i)
                if got != _text(i):
                    wrong.append((i, got))

    worker = threading.Thread(target=read)
    worker.start()
    try:
        for i in range(n):
            texts.put(i, _text(i))
    finally:
        done.set()
        worker.join()
    assert wrong == []


def _session(path: Path, turns: int) -> None:
    """A session with branches, turns of 0, 1 and 2 tool calls, a call id used twice (in one turn and in two
    turns), a call id that is not a string and results whose call is unknown or comes later."""
    entries = [header(), user("u0", None, "start")]
    parent = "u0"
    for i in range(turns):
        calls: tuple[tuple, ...] = ()
        if i % 3 == 1:
            calls = ((f"c{i}", "bash", {"command": f"ls {_text(i)}"}),)
        elif i % 3 == 2:
            calls = ((f"c{i}", "read", {"path": f"/p/{i}"}), (f"c{i}b", "grep", {"pattern": "é"}))
        if i == 50:
            calls = (("dup", "bash", {"command": "first"}), ("dup", "bash", {"command": "second"}))
        if i == 80:
            calls = (("dup", "bash", {"command": "third, a later turn"}), (7, "bash", {"command": "id 7"}))
        entries.append(assistant(f"a{i}", parent, _text(i), t=2 * i + 2, calls=calls))
        parent = f"a{i}"
        for call_id, _name, _args in calls:
            if isinstance(call_id, str):
                entries.append(tool_result(f"r{i}{call_id}", parent, call_id, t=2 * i + 3))
                parent = f"r{i}{call_id}"
        if i % 500 == 0:  # a branch back to the start
            entries.append(user(f"b{i}", "u0", f"branch {_text(i)}", t=2 * i + 3))
    entries.append(tool_result("early", parent, "c" + str(turns + 1), t=10**6))  # its call comes next
    entries.append(assistant("late", "early", "", t=10**6 + 1, calls=((f"c{turns + 1}", "bash", {"command": "x"}),)))
    entries.append(tool_result("unknown", "late", "nowhere", t=10**6 + 2))
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))  # escapes the lone surrogate, as Pi may


def _shown(tree) -> list:  # type: ignore[no-untyped-def]
    return [(tree.row_text(n), tree.context_text(n), entry_text(tree, n), n.text, n.calls) for n in tree.nodes]


def test_a_tree_with_its_texts_apart_reads_as_one_with_them_on_its_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    _session(path, 3 * BLOCK)
    on_entries, _ = load_session_fast(path, final=True, texts_apart=False, save_cache=False)
    apart, _ = load_session_fast(path, final=True, save_cache=False)
    assert len(apart.nodes) > 2 * BLOCK
    assert signature(apart) == signature(on_entries)
    assert _shown(apart) == _shown(on_entries)
    fed, _ = load_session(path)  # one `feed` of the whole file
    assert _shown(fed) == _shown(on_entries)
    assert on_entries.call_text("dup") == "[bash: third, a later turn]" == apart.call_text("dup")
    assert apart.row_text(apart.get("early")) == "[bash: x]"  # a call later in the file still names its result
    assert all(n._text is None for n in apart.nodes) and apart.at.texts._spill.on_disk > 0
    # in two processes, cached, and read again from that cache: the same tree each way
    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    for texts_apart in (True, False, True):
        again, _ = load_session_fast(path, final=True, texts_apart=texts_apart)
        assert signature(again) == signature(on_entries)
        assert _shown(again) == _shown(on_entries)
    assert tree_cache.read_cache(path) is not None
    (cached,) = (tmp_path / "cache").glob("*.tree")
    blob = cached.read_bytes()
    lengths = marshal.loads(blob[len(blob) - 8 - int.from_bytes(blob[-8:], "little") : -8])[-1]
    front = marshal.loads(blob[len(tree_cache.MAGIC) : len(tree_cache.MAGIC) + lengths[0]])
    assert len(front[0][0]) == tree_cache.SEGMENT_ROWS and front[3:5] == (0, 0)  # the front part in pieces
