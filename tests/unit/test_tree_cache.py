"""The parsed-tree cache: a hit gives the same tree as a parse, growth reuses the prefix, changes miss."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from pitree.store import prefix_check, tree_cache
from pitree.store.session_file import load_session_fast, load_session_progressive

from tests.sessions import assistant, chain, to_bytes, user


def signature(tree) -> list:  # type: ignore[no-untyped-def]
    return [
        (
            n.id,
            n.parent_id,
            n.line,
            n.offset,
            n.length,
            n.type,
            n.role,
            n.text,
            n.flags,
            n.est,
            n.usage,
            n.model,
            n.meta,
            n.calls,
            n.call_id,
            repr(n.ts),  # nan (no usable timestamp) never equals itself; its repr does
            n.parent.id if n.parent else None,
        )
        for n in tree.nodes
    ] + [[(s.line, s.reason) for s in tree.skipped], tree.problems, tree.labels, tree.name, tree.header]


@pytest.fixture
def big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        to_bytes(chain(300))
        + b"garbage\n"
        + to_bytes([user("dup", "e0000299"), user("dup", "e0000001")], with_header=False)
    )
    return path


def test_hit_equals_parse(big: Path) -> None:
    first, _ = load_session_fast(big)
    assert list((big.parent / "cache").iterdir())  # saved
    assert tree_cache.read_cache(big) is not None
    again, builder = load_session_fast(big)
    fresh, fresh_builder = load_session_progressive(big)
    assert signature(again) == signature(fresh) == signature(first)
    assert (builder.size, builder.next_line) == (fresh_builder.size, fresh_builder.next_line)


def test_growth_reuses_prefix_and_parses_the_rest(big: Path) -> None:
    load_session_fast(big)
    with open(big, "ab") as fh:
        fh.write(orjson.dumps(assistant("new1", "dup", "appended")) + b"\n")
    tree, _ = load_session_fast(big)
    assert tree.leaf.id == "new1" and signature(tree) == signature(load_session_progressive(big)[0])


@pytest.mark.parametrize("change", ["rewrite_same_size", "shrink", "replace"])
def test_changed_file_misses(big: Path, change: str) -> None:
    load_session_fast(big)
    data = big.read_bytes()
    if change == "rewrite_same_size":
        big.write_bytes(data.replace(b'"u0"', b'"U0"'))
    elif change == "shrink":
        big.write_bytes(data[: data.index(b"\n", len(data) // 2) + 1])
    else:
        tmp = big.with_suffix(".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, big)
    assert tree_cache.read_cache(big) is None
    assert signature(load_session_fast(big)[0]) == signature(load_session_progressive(big)[0])


@pytest.mark.writes_session  # the test changes the session in place, as another writer would
def test_a_byte_changed_anywhere_misses_even_when_the_file_grew_after(big: Path) -> None:
    """The cache checks every byte it was made from (the CRC-32s the parse computed), not samples of them: one
    letter changed in place far from any sample, then a line appended, is a miss, not the old text shown."""
    load_session_fast(big)
    data = bytearray(big.read_bytes())
    size = len(data)
    sampled = {size * i // tree_cache.SAMPLES + k for i in range(tree_cache.SAMPLES) for k in range(256)}
    texts = [i + 8 for i in range(size) if data[i : i + 10] == b'"text":"a1' and data[i + 12] == ord('"')]  # a1NN
    at = next(i for i in texts if not sampled & set(range(i, i + 4)))  # one between two of the old samples
    number = data[at + 1 : at + 4].decode()
    data[at] = ord("Z")
    with open(big, "r+b") as fh:  # in place: same file, same size, then grown
        fh.write(data)
    with open(big, "ab") as fh:
        fh.write(orjson.dumps(assistant("new1", "dup", "appended")) + b"\n")
    assert tree_cache.read_cache(big) is None
    tree, _ = load_session_fast(big)
    assert tree.by_id[f"e0000{number}"].text == f"assistant: Z{number}"
    assert signature(tree) == signature(load_session_progressive(big)[0])


@pytest.mark.writes_session  # the test appends, as Pi would
def test_a_grown_file_reuses_the_cache_and_checks_every_cached_byte(big: Path) -> None:
    load_session_fast(big)
    with open(big, "ab") as fh:
        fh.write(orjson.dumps(assistant("new1", "dup", "appended")) + b"\n")
    read: list[int] = []
    real = prefix_check.zlib.crc32
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(prefix_check.zlib, "crc32", lambda data, crc=0: read.append(len(data)) or real(data, crc))
        hit = tree_cache.read_cache(big)
    assert hit is not None
    builder = hit[0]
    assert sum(read) == builder.size < big.stat().st_size
    assert builder.spans is not None and builder.spans[-1][0] == builder.size


@pytest.mark.writes_session  # the test appends, as Pi would
def test_a_cache_read_on_from_is_extended_once_enough_was_appended(big: Path) -> None:
    """A session that keeps growing is parsed from where its cache ends: a reopen that read on from the cache by
    enough writes it again (its segments copied, the new entries added), with the new lines' notes in place."""
    load_session_fast(big)
    hit = tree_cache.read_cache(big)
    assert hit is not None
    held = hit[0]
    extra = [assistant(f"x{i}", "dup" if i == 0 else f"x{i - 1}", "more " * 40) for i in range(40)]
    with open(big, "ab") as fh:  # more than 1/64 of what the cache held, with a skip and a renamed id among them
        fh.write(to_bytes(extra[:20], with_header=False) + b"not json\n" + orjson.dumps(user("", "x19")) + b"\n")
        fh.write(to_bytes(extra[20:], with_header=False))
    assert big.stat().st_size - held.size >= held.size // tree_cache.EXTEND_SHARE
    grown, _ = load_session_fast(big)  # read on from the cache, then writes it again
    hit = tree_cache.read_cache(big)
    assert hit is not None
    again = hit[0]
    assert again.size == big.stat().st_size  # nothing is left to parse at the next open
    fresh = load_session_progressive(big)[0]
    assert signature(again.tree) == signature(grown) == signature(fresh)
    assert any(s.reason for s in again.tree.skipped if s.line > held.next_line - 1)
    third, builder = load_session_fast(big)
    assert signature(third) == signature(fresh) and builder.size == big.stat().st_size


@pytest.mark.writes_session  # the test appends, as Pi would
def test_a_cache_another_pitree_wrote_meanwhile_is_not_extended_from(big: Path) -> None:
    load_session_fast(big)
    hit = tree_cache.read_cache(big)
    assert hit is not None
    builder, held = hit
    with open(big, "ab") as fh:
        fh.write(to_bytes([user(f"y{i}", "dup", "z" * 200) for i in range(60)], with_header=False))
    from pitree.store.session_file import _feed_lines

    _feed_lines(big, builder)
    cache_file = held.target
    written = cache_file.read_bytes() + b"another writer's"
    cache_file.write_bytes(written)  # a cache written since this one was read: not this one's to copy
    tree_cache.extend(big, builder, held)
    assert cache_file.read_bytes() == written


@pytest.mark.writes_session  # the test appends, as Pi would
def test_a_small_append_leaves_the_cache_as_it_was(big: Path) -> None:
    load_session_fast(big)
    cache_file = next((big.parent / "cache").glob("*.tree"))
    before = cache_file.stat()
    with open(big, "ab") as fh:
        fh.write(orjson.dumps(assistant("new1", "dup", "appended")) + b"\n")
    load_session_fast(big)
    after = cache_file.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_disabled_and_corrupt_cache(big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_session_fast(big)
    for f in (big.parent / "cache").iterdir():
        f.write_bytes(b"not marshal")
    assert tree_cache.read_cache(big) is None
    monkeypatch.setenv("PITREE_NO_CACHE", "1")
    assert tree_cache.cache_dir() is None


def test_wrong_typed_fields_and_shared_models_survive_caching(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    entries = chain(40)
    odd = [
        {"provider": ["a", "list"], "model": {"an": "object"}},  # unhashable: not shared, kept as is
        {"provider": 7, "model": None},
        {"provider": "anthropic", "model": "claude"},
        {"provider": "anthropic", "model": "claude"},
    ]
    for i, fields in enumerate(odd):
        entry = assistant(f"odd{i}", entries[-1]["id"], "text")
        entry["message"].update(fields)
        entry["message"]["role"] = "assistant"
        entries.append(entry)
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(entries))
    load_session_fast(path)
    cached, _ = load_session_fast(path)
    assert tree_cache.read_cache(path) is not None
    parsed, _ = load_session_progressive(path)
    assert signature(cached) == signature(parsed)
    models = [cached.get(f"odd{i}").model for i in range(4)]
    assert models[0] == (["a", "list"], {"an": "object"}) and models[1] == (7, None)
    assert models[2] is models[3] and models[2] == parsed.get("odd2").model  # one pair a tree, as a parse makes


@pytest.mark.parametrize("old_format", [6, 7, 8])
def test_a_cache_of_another_format_is_a_miss(big: Path, monkeypatch: pytest.MonkeyPatch, old_format: int) -> None:
    """Format 6 held raw timestamps and usage tuples, 7 packed timestamps with usage tuples: their rows would
    give wrong times or fail to unpack, so such a cache is never read; the file is parsed again."""
    with monkeypatch.context() as old:
        old.setattr(tree_cache, "FORMAT", old_format)
        old.setattr(tree_cache, "MAGIC", b"pitree\x00" + bytes([old_format]))
        load_session_fast(big)
        assert tree_cache.read_cache(big) is not None  # readable by the code that wrote it
    assert tree_cache.read_cache(big) is None
    assert signature(load_session_fast(big)[0]) == signature(load_session_progressive(big)[0])
    assert tree_cache.read_cache(big) is not None  # written again in this format


def test_pi1_entries_survive_caching_and_the_parse_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pi 1.x facts in `meta` (system facts, context edits, checkpoints) and usage of every source go through
    the cache file and the child's marshalled rows unchanged."""
    import marshal

    from pitree.session.load import SessionBuilder, load_bytes

    from tests.sessions import entry, message

    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tree_cache, "MIN_BYTES", 1)
    entries = chain(20)
    tools = [{"name": "read", "parameters": {"type": "object"}}]
    entries += [
        message("s1", entries[-1]["id"], "system", content="", sections={"a": "A", "b": None}, toolsAdded=tools),
        entry(
            "context_edit", "e1", "s1", targetId="e0000001", replacement={"content": [{"type": "text", "text": "x"}]}
        ),
        entry("usage", "k1", "e1", kind="cache_warm", provider="p", model="m", usage={"cacheRead": 5}),
        entry(
            "compaction",
            "c1",
            "k1",
            summary="s",
            firstKeptEntryId="c1",
            tokensBefore=3,
            usage={"input": 1},
            systemMessage={"role": "system", "content": "", "sections": {"a": "A"}, "timestamp": 1},
        ),
    ]
    path = tmp_path / "s.jsonl"
    data = to_bytes(entries)
    path.write_bytes(data)
    load_session_fast(path)
    cached, _ = load_session_fast(path)
    assert tree_cache.read_cache(path) is not None
    parsed = load_bytes(data)
    assert signature(cached) == signature(parsed)
    assert parsed.get("c1").meta["checkpoint"][2] is not None  # type: ignore[union-attr]
    # the parse child's path: rows marshalled, then adopted after the front half
    cut = data.index(b"\n", len(data) // 2) + 1
    front = SessionBuilder()
    front.feed(data[:cut], final=False)
    back = front.continuation(cut)
    segment = marshal.loads(marshal.dumps(back.parse_segment(data[cut:]), 2))
    front.adopt_segment(segment, *back.segment_tail(cut))
    assert signature(front.tree) == signature(parsed)


def test_a_writer_that_died_leaves_no_file_behind_once_another_writes(big: Path) -> None:
    """A pitree killed while writing a cache (or a kept first screen) leaves `<key>.tmp<pid>`; the next writer in
    that folder removes it, unless its writer is still running."""
    import subprocess
    import sys

    folder = big.parent / "cache"
    folder.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        key = "0123456789abcdef" * 2
        orphan, running = folder / f"{key}.tmp{dead.stdout.strip()}", folder / f"{key}.tmp{alive.pid}"
        other = folder / "sessions.sqlite3.tmp1"  # not a name the cache writes: never touched
        for f in (orphan, running, other):
            f.write_bytes(b"x" * 1000)
        load_session_fast(big)
        assert not orphan.exists() and running.exists() and other.exists()
        assert tree_cache.read_cache(big) is not None  # the new cache was written all the same
    finally:
        alive.kill()
        alive.wait()
