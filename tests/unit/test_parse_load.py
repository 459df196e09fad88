"""Parsing lines and loading sessions: every line is an entry or a reported skip; versions and migration."""

from __future__ import annotations

import orjson
import pytest
from pitree.session.load import load_bytes
from pitree.session.parse import iter_lines

from tests.sessions import assistant, chain, entry, header, to_bytes, user

HEADER = header()
H = orjson.dumps(HEADER) + b"\n"


@pytest.mark.parametrize(
    ("raw", "entries", "skipped", "note"),
    [
        (b'{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"x"}}\n', 1, [], None),
        (b"\n", 0, ["blank line"], None),
        (b"   \n", 0, ["blank line"], None),
        (b"not json\n", 0, ["not valid JSON"], None),
        (b"[1,2]\n", 0, ["an array, not an object"], None),
        (b'"str"\n', 0, ["a string, not an object"], None),
        (b"42\n", 0, ["a number, not an object"], None),
        (b"null\n", 0, ["null, not an object"], None),
        (b'{"type":"message","id":"a","parentId":null}\r\n', 1, [], "CRLF"),
        (b'{"type":"message","id":"a","parentId":null,"x":"\xff\xfe"}\n', 1, [], "invalid UTF-8"),
        (b'{"type":"message","id":"a","parentId":null}', 1, [], "no newline"),  # complete last line: Pi reads it
        (b'{"type":"message","id":"a","par', 0, ["torn last line"], None),
        (b'{"type":"session","id":"again"}\n', 0, ["another session header"], None),
        (b'{"type":"message","id":"a","parentId":null,"x":"\x00"}\n', 0, ["not valid JSON"], None),
    ],
)
def test_line_cases(raw: bytes, entries: int, skipped: list[str], note: str | None) -> None:
    tree = load_bytes(H + raw)
    assert tree.entry_count == entries
    assert len(tree.skipped) == len(skipped)
    for s, want in zip(tree.skipped, skipped, strict=True):
        assert want in s.reason
        assert s.line == 2
    if note:
        assert any(note in p.message and p.line == 2 for p in tree.problems)


def test_offsets_point_at_each_line() -> None:
    data = to_bytes(chain(5)) + b"garbage\n" + to_bytes([user("zz", "e0000004")], with_header=False)
    tree = load_bytes(data)
    lines = data.split(b"\n")
    for node in tree.nodes:
        assert data[node.offset : node.offset + node.length] == lines[node.line - 1]
    assert [s.line for s in tree.skipped] == [7]


def test_every_line_accounted_for_with_crlf_and_bom() -> None:
    data = b"\xef\xbb\xbf" + H + b'{"type":"message","id":"a","parentId":null}\r\n\n' + b"oops\n"
    tree = load_bytes(data)
    assert tree.header is not None and tree.entry_count == 1 and len(tree.skipped) == 2
    assert any("byte-order mark" in p.message for p in tree.problems)


def test_iter_lines_incremental_offsets() -> None:
    data = b'{"a":1}\n{"b":2}\n'
    got = list(iter_lines(data, base_offset=100, base_line=7, final=False))
    assert [(ln, off, length) for ln, off, length, *_ in got] == [(7, 100, 7), (8, 108, 7)]
    assert list(iter_lines(b'{"a":1}\n{"b"', final=False))[-1][0] == 1  # torn tail held back


@pytest.mark.parametrize(
    ("header", "version_kind"),
    [
        ({**HEADER, "version": 3}, "tree"),
        ({**HEADER, "version": 2}, "tree"),
        ({k: v for k, v in HEADER.items() if k != "version"}, "chain"),
        ({**HEADER, "version": None}, "chain"),
        ({**HEADER, "version": 1}, "chain"),
    ],
)
def test_versions(header: dict, version_kind: str) -> None:
    entries = [user("aaaaaaaa", None), assistant("bbbbbbbb", None), user("cccccccc", "aaaaaaaa")]
    tree = load_bytes(to_bytes(entries, head=header))
    if version_kind == "tree":
        assert [n.id for n in tree.roots] == ["aaaaaaaa", "bbbbbbbb"]
    else:  # v1: ids and parents are ignored; one chain in file order with pitree's stable ids
        assert len(tree.roots) == 1
        path = tree.active_path()
        assert len(path) == 3 and all(len(n.id) == 8 for n in path)


def test_v1_ids_are_stable_and_first_kept_index_resolves() -> None:
    header = {k: v for k, v in HEADER.items() if k != "version"}
    lines = [
        {"type": "message", "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": "a"}},
        {"type": "message", "timestamp": "2026-01-01T00:00:01Z", "message": {"role": "assistant", "content": []}},
        {"type": "message", "timestamp": "2026-01-01T00:00:02Z", "message": {"role": "user", "content": "b"}},
        {
            "type": "compaction",
            "timestamp": "2026-01-01T00:00:03Z",
            "summary": "s",
            "firstKeptEntryIndex": 3,
            "tokensBefore": 1000,
        },
    ]
    data = to_bytes(lines, head=header)
    one, two = load_bytes(data), load_bytes(data)
    assert [n.id for n in one.nodes] == [n.id for n in two.nodes]
    comp = one.nodes[-1]
    assert comp.meta is not None and comp.meta["firstKeptEntryId"] == one.nodes[2].id  # index 3 = third entry


def test_v2_hookmessage_becomes_custom() -> None:
    e = {
        "type": "message",
        "id": "aaaaaaaa",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "hookMessage", "content": "x"},
    }
    tree = load_bytes(to_bytes([e], 2))
    assert tree.nodes[0].role == "custom"
    tree3 = load_bytes(to_bytes([e]))
    assert tree3.nodes[0].role == "hookMessage"


def test_no_header_is_reported() -> None:
    tree = load_bytes(to_bytes([user("aaaaaaaa", None)], with_header=False))
    assert tree.header is None and tree.entry_count == 1
    assert any("no session header" in p.message for p in tree.problems)


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": 5},
        {"role": "user", "content": {"a": 1}},
        {"role": "assistant", "content": "plain string"},
        {"role": "assistant", "content": [1, None, "x", {"type": "toolCall", "arguments": "str"}], "usage": "lots"},
        {"role": "toolResult", "content": None, "isError": "yes"},
        {"role": None},
        {"content": []},
        {"role": "bashExecution", "command": 5, "output": None, "exitCode": "1"},
        {"role": "weird-new-role", "content": []},
    ],
)
def test_wrong_types_never_raise(message: dict) -> None:
    e = {"type": "message", "id": "aaaaaaaa", "parentId": None, "timestamp": 12345, "message": message}
    tree = load_bytes(to_bytes([e, entry("label", "bbbbbbbb", "aaaaaaaa", label=7, targetId="aaaaaaaa")]))
    assert tree.entry_count == 2
    assert isinstance(tree.row_text(tree.nodes[0]), str)
    assert tree.labels == {"aaaaaaaa": "7"}


def test_message_not_an_object_and_unknown_type() -> None:
    tree = load_bytes(to_bytes([entry("message", "a", None, message=[1]), entry("brand_new", "b", "a")]))
    assert tree.nodes[0].text.startswith("[message:")
    assert tree.nodes[1].text == "[brand_new]"


def test_entry_without_id_gets_synthetic_id() -> None:
    tree = load_bytes(
        to_bytes(
            [
                {"type": "message", "parentId": None, "message": {"role": "user", "content": "x"}},
                {"type": "message", "id": 5, "parentId": None, "message": {"role": "user"}},
            ]
        )
    )
    assert [n.id for n in tree.nodes] == ["~L2", "~L3"]
    assert sum("no usable id" in p.message for p in tree.problems) == 2
