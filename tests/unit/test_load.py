"""Loading: header and versions, Pi's v1/v2 migrations done in memory, stable v1 ids, firstKeptEntryIndex,
incremental feeding and the store's readers."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.session.entries import SYNTHETIC_ID
from pitree.session.load import SessionBuilder, load_bytes, migrate_entry
from pitree.store.session_file import (
    EntryReader,
    LoadCancelled,
    SessionFileError,
    load_session,
    load_session_progressive,
)

from tests.sessions import assistant, chain, entry, header, message, to_bytes, user, write_session


def v1_entries() -> list[dict[str, Any]]:
    return [
        user(None, text="one"),
        assistant(None, text="two"),
        message(None, None, "hookMessage", customType="ext", content="hook", display=True),
        user(None, text="three"),
        assistant(None, text="four"),
    ]


@pytest.mark.parametrize(
    ("version", "expected"),
    [(3, 3.0), (2, 2.0), (1, 1.0), (None, 1.0), ("3", 3.0)],
)
def test_version_from_header(version: Any, expected: float) -> None:
    head = header(version)
    tree = load_bytes(to_bytes([user("u1", None)], head=head))
    assert tree.version == expected


def test_unparseable_version_migrates_nothing() -> None:
    # JavaScript compares NaN false both ways, so Pi neither migrates nor rejects such a file.
    tree = load_bytes(to_bytes([user("u1", None)], head=header("abc")))
    assert tree.version != tree.version and tree.get("u1") is not None


def test_v3_keeps_ids_and_hook_message_role() -> None:
    tree = load_bytes(to_bytes([user("u1", None), message("h1", "u1", "hookMessage", content="x")], version=3))
    assert [n.id for n in tree.nodes] == ["u1", "h1"]
    assert tree.get("h1").role == "hookMessage"
    assert not any(n.flags & SYNTHETIC_ID for n in tree.nodes)


def test_v2_renames_hook_message_to_custom_and_keeps_ids() -> None:
    tree = load_bytes(to_bytes([user("u1", None), message("h1", "u1", "hookMessage", content="x")], version=2))
    assert tree.get("h1").role == "custom" and tree.get("h1").text == "[custom]"
    assert [n.parent_id for n in tree.nodes] == [None, "u1"]


def test_v1_is_one_chain_with_synthetic_ids() -> None:
    tree = load_bytes(to_bytes(v1_entries(), version=None))
    ids = [n.id for n in tree.nodes]
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids) and len(set(ids)) == len(ids)
    assert [n.parent_id for n in tree.nodes] == [None, *ids[:-1]]
    assert [n.id for n in tree.roots] == ids[:1]
    assert [n.id for n in tree.active_path()] == ids
    assert all(n.flags & SYNTHETIC_ID for n in tree.nodes)
    assert tree.nodes[2].role == "custom"  # v1 also goes through the v2 -> v3 rename


def test_v1_ids_are_stable_across_reloads_and_depend_on_the_session() -> None:
    data = to_bytes(v1_entries(), version=None)
    first = [n.id for n in load_bytes(data).nodes]
    assert [n.id for n in load_bytes(data).nodes] == first
    other = to_bytes(v1_entries(), head=header(None, id="another-session"))
    assert [n.id for n in load_bytes(other).nodes] != first
    # Appending keeps the ids of what was there: they depend on the ordinal, not the file's length.
    longer = load_bytes(data + orjson.dumps(user(None, text="five")) + b"\n")
    assert [n.id for n in longer.nodes][: len(first)] == first


def test_v1_ids_do_not_depend_on_how_the_bytes_were_fed() -> None:
    data = to_bytes(v1_entries(), version=None)
    whole = [n.id for n in load_bytes(data).nodes]
    builder = SessionBuilder()
    cut = data.index(b"\n", len(data) // 2) + 1
    builder.feed(data[:cut], final=False)
    builder.feed(data[cut:], final=True)
    assert [n.id for n in builder.tree.nodes] == whole


def v1_with_compaction(index: Any, skipped_line: bool = False) -> bytes:
    # Pi's index counts the parsed objects, header = 0; lines it skips do not count.
    rows: list[bytes] = [orjson.dumps(header(None))]
    rows.append(orjson.dumps(user(None, text="zero")))  # 1
    if skipped_line:
        rows.append(b"this line is not JSON")
    rows.append(orjson.dumps(assistant(None, text="one")))  # 2
    rows.append(orjson.dumps(user(None, text="two")))  # 3
    comp = entry("compaction", None, summary="S", tokensBefore=100)
    if index is not ...:
        comp["firstKeptEntryIndex"] = index
    rows.append(orjson.dumps(comp))  # 4
    rows.append(orjson.dumps(user(None, text="after")))  # 5
    return b"\n".join(rows) + b"\n"


@pytest.mark.parametrize(
    ("index", "skipped", "kept"),
    [
        (2, False, 1),  # entries[2] is the assistant: nodes[1]
        (2, True, 1),  # a skipped line does not shift Pi's index
        (1, False, 0),
        (3, False, 2),
        (4, False, 3),  # the compaction itself (Pi has given it an id by then)
        (0, False, None),  # the header: no entry
        (5, False, None),  # after the compaction: Pi has not given it an id yet, so nothing
        (99, False, None),
        (-1, False, None),
        (2.5, False, None),
        ("2", False, None),
        (..., False, None),
    ],
)
def test_v1_first_kept_entry_index(index: Any, skipped: bool, kept: int | None) -> None:
    tree = load_bytes(v1_with_compaction(index, skipped))
    comp = next(n for n in tree.nodes if n.type == "compaction")
    want = tree.nodes[kept].id if kept is not None else None
    assert comp.meta is not None and comp.meta["firstKeptEntryId"] == want


def test_v1_extra_header_counts_in_the_index() -> None:
    rows = [
        header(None),
        user(None, text="zero"),
        header(None),
        user(None, text="two"),
        entry("compaction", None, summary="S", tokensBefore=1, firstKeptEntryIndex=3),
    ]
    tree = load_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    comp = tree.nodes[-1]
    assert comp.meta["firstKeptEntryId"] == tree.nodes[1].id  # type: ignore[index]
    assert any("another session header" in s.reason for s in tree.skipped)


def test_migrate_entry_gives_pis_v3_form() -> None:
    data = v1_with_compaction(2)
    tree = load_bytes(data)
    comp = next(n for n in tree.nodes if n.type == "compaction")
    raw = orjson.loads(data.splitlines()[comp.line - 1])
    out = migrate_entry(raw, comp, tree)
    assert out["id"] == comp.id and out["parentId"] == comp.parent_id
    assert out["firstKeptEntryId"] == tree.nodes[1].id and "firstKeptEntryIndex" not in out
    assert "id" not in raw  # the original dict is not changed
    hook = message("h", None, "hookMessage", content="x")
    v2 = load_bytes(to_bytes([hook], version=2))
    assert migrate_entry(hook, v2.nodes[0], v2)["message"]["role"] == "custom"
    assert hook["message"]["role"] == "hookMessage"


def test_header_kept_with_extra_keys() -> None:
    head = header(2, provider="anthropic", modelId="claude", thinkingLevel="high", branchedFrom="/x.jsonl")
    tree = load_bytes(to_bytes([user("u1", None)], head=head))
    assert tree.header == head


@pytest.mark.parametrize(
    ("first", "has_ids", "version"),
    [
        (user("u1", None), True, 3),  # an entry where the header should be
        ({"type": "session", "id": 7}, False, 1),  # a header without a string id
    ],
)
def test_missing_header_is_reported(first: dict[str, Any], has_ids: bool, version: int) -> None:
    data = orjson.dumps(first) + b"\n" + orjson.dumps(user("u2", "u1")) + b"\n"
    tree = load_bytes(data)
    assert tree.header is None and tree.version == version
    assert any("no session header" in p.message for p in tree.problems)


def test_entries_without_usable_ids_or_parents() -> None:
    bad_id = {**user("x", None), "id": 5}
    no_id = {k: v for k, v in user("x", None).items() if k != "id"}
    bad_parent = {**user("p", None), "parentId": 12}
    tree = load_bytes(to_bytes([bad_id, no_id, bad_parent]))
    assert [n.id for n in tree.nodes] == ["~L2", "~L3", "p"]
    assert tree.get("p").parent is None
    messages = [p.message for p in tree.problems]
    assert sum("no usable id" in m for m in messages) == 2 and any("parentId is" in m for m in messages)


def test_incremental_feed_matches_one_shot(tmp_path: Path) -> None:
    entries = chain(30)
    data = to_bytes(entries)
    builder = SessionBuilder()
    pos = 0
    step = 97  # cuts lines in the middle: only complete lines are taken until the final feed
    while pos < len(data):
        chunk = data[builder.size : pos + step]
        builder.feed(chunk, final=False)
        pos += step
    builder.feed(data[builder.size :], final=True)
    assert builder.size == len(data)
    one = load_bytes(data)
    assert [n.id for n in builder.tree.nodes] == [n.id for n in one.nodes]
    assert [n.offset for n in builder.tree.nodes] == [n.offset for n in one.nodes]


def test_progressive_load_matches_and_can_be_cancelled(tmp_path: Path) -> None:
    path = write_session(tmp_path, chain(50))
    seen: list[tuple[int, int]] = []
    tree, builder = load_session_progressive(path, progress=lambda d, t: seen.append((d, t)), chunk_size=500)
    whole, _ = load_session(path)
    assert [n.id for n in tree.nodes] == [n.id for n in whole.nodes]
    assert seen and seen[-1][0] == path.stat().st_size and builder.size == path.stat().st_size
    with pytest.raises(LoadCancelled):
        load_session_progressive(path, cancelled=lambda: True)


def test_progressive_load_leaves_a_torn_line_for_the_tailer(tmp_path: Path) -> None:
    path = write_session(tmp_path, chain(3), raw_tail=b'{"type":"mess')
    tree, builder = load_session_progressive(path, chunk_size=64)
    assert tree.entry_count == 3 and builder.size == path.stat().st_size - len(b'{"type":"mess')


def test_entry_reader_rereads_migrated_entries(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_bytes(v1_with_compaction(3))
    tree, _ = load_session(path)
    reader = EntryReader(path, tree)
    entries = reader.entries(tree.nodes)
    assert [e["id"] for e in entries] == [n.id for n in tree.nodes]
    assert reader.entry(tree.nodes[0])["message"]["content"][0]["text"] == "zero"
    assert reader.raw(tree.nodes[0]).startswith(b'{"type":"message"')
    path.write_bytes(b"x" * path.stat().st_size)  # the file changed under the reader
    with pytest.raises(SessionFileError, match="no longer parses"):
        reader.entry(tree.nodes[1])


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_store_errors_are_one_line(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "nope.jsonl" if kind == "missing" else tmp_path
    with pytest.raises(SessionFileError) as info:
        load_session(path)
    assert "\n" not in str(info.value) and ("no such file" in str(info.value) or "directory" in str(info.value))


def test_loading_never_changes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    data = v1_with_compaction(2)
    path.write_bytes(data)
    load_session(path)
    load_session_progressive(path)
    assert path.read_bytes() == data


@pytest.mark.parametrize(
    "values",
    [
        (1200, 340, 52000, 0, 53540, 0.0123),
        (0, 0, 0, 0, 0, 0),
        (1.5, 2.25, 0.0, -0.0, 3.75, 1e-9),
        (-7, 2**53, -(2**53), 1, 2, 3),
        (2**53 + 1, 0, 0, 0, 0, 0.5),  # past a double's exact ints
        (10**30, 1, 2, 3, 4, 5.0),
    ],
)
def test_usage_is_packed_and_read_back_exactly(values: tuple) -> None:
    from pitree.session.entries import Columns, Node, node_class, pack_usage, unpack_usage

    node = Node()
    with pytest.raises(ValueError):  # an entry not placed in columns has nowhere to keep it
        node.usage = values
    at = Columns()
    at.put(0, 1, 0, 10, 0.0)
    node = node_class(at)()
    node.usage = values
    back = node.usage
    assert back == values and [type(v) for v in back] == [type(v) for v in values]  # ints stay ints
    assert [math.copysign(1, v) for v in back] == [math.copysign(1, v) for v in values]  # and -0.0 stays
    packed = pack_usage(values)
    assert type(packed) is bytes and len(packed) < 80 and unpack_usage(packed) == values
    node.usage = None
    assert node.usage is None


def test_an_assistant_usage_survives_the_load_as_the_file_has_it() -> None:
    usage = {"input": 10, "output": 2.5, "cacheRead": "x", "totalTokens": 12, "cost": {"total": 0}}
    tree = load_bytes(to_bytes([assistant("a1", None, "hi", usage=usage)]))
    got = tree.get("a1").usage
    assert got == (10, 2.5, 0.0, 0.0, 12, 0) and [type(v) for v in got] == [int, float, float, float, int, int]
    assert (got.input, got.output, got.cache_read, got.cache_write) == (10, 2.5, 0.0, 0.0)
    assert (got.total_tokens, got.cost, got.tokens) == (12, 0, 12.5)
