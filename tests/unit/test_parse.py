"""Splitting session bytes into lines: what is parsed, what is kept with a note, what is skipped and why."""

from __future__ import annotations

import orjson
import pytest
from pitree.session.load import load_bytes
from pitree.session.parse import BOM, has_bom, iter_lines, parse_line

from tests.sessions import header, to_bytes, user

OBJ = orjson.dumps(user("u1", None, "hello"))


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"not json", "not valid JSON"),
        (b'{"type": ', "not valid JSON"),
        (b"[1, 2]", "an array, not an object"),
        (b"42", "a number, not an object"),
        (b'"text"', "a string, not an object"),
        (b"null", "null, not an object"),
        (b"true", "a boolean, not an object"),
        (b"\xff\xfe not json", "not valid JSON"),
    ],
)
def test_parse_line_rejects(raw: bytes, reason: str) -> None:
    obj, why = parse_line(raw)
    assert obj is None and why is not None and reason in why


def test_parse_line_accepts_object_and_repairs_utf8() -> None:
    assert parse_line(OBJ) == (orjson.loads(OBJ), None)
    obj, note = parse_line(b'{"type":"message","text":"caf\xe9"}')
    assert obj == {"type": "message", "text": "caf\ufffd"}
    assert note is not None and "U+FFFD" in note


def lines_of(data: bytes, **kw: object) -> list[tuple[int, int, int, dict | None, str | None]]:
    return list(iter_lines(data, **kw))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # (line number, object parsed?, note/reason substring or None)
        (OBJ + b"\n", [(1, True, None)]),
        (OBJ + b"\n\n" + OBJ + b"\n", [(1, True, None), (2, False, "blank line"), (3, True, None)]),
        (b"   \n", [(1, False, "blank line")]),
        (OBJ + b"\r\n", [(1, True, "CRLF")]),
        (b"\r\n", [(1, False, "blank line")]),
        (b"x\n" + OBJ + b"\n", [(1, False, "not valid JSON"), (2, True, None)]),
        (OBJ, [(1, True, "no newline")]),  # Pi reads a last line without a newline
        (OBJ + b"\n" + OBJ[:-5], [(1, True, None), (2, False, "torn last line")]),
        (b"[1]\n", [(1, False, "an array")]),
    ],
)
def test_iter_lines_table(data: bytes, expected: list[tuple[int, bool, str | None]]) -> None:
    got = lines_of(data)
    assert [(ln, obj is not None) for ln, _, _, obj, _ in got] == [(ln, ok) for ln, ok, _ in expected]
    for (_, _, _, _, note), (_, _, want) in zip(got, expected, strict=True):
        if want is None:
            assert note is None
        else:
            assert note is not None and want in note


def test_offsets_and_lengths_point_at_the_json() -> None:
    data = OBJ + b"\r\n" + b"\n" + b"junk\n" + OBJ + b"\n" + OBJ
    for _, offset, length, obj, _ in lines_of(data):
        if obj is not None:
            assert orjson.loads(data[offset : offset + length]) == obj
    starts = [offset for _, offset, _, _, _ in lines_of(data)]
    assert starts == [0, len(OBJ) + 2, len(OBJ) + 3, len(OBJ) + 8, 2 * len(OBJ) + 9]


def test_bom_is_stepped_over_and_reported() -> None:
    data = BOM + to_bytes([user("u1", None)])
    assert has_bom(data) and not has_bom(data[3:])
    first = lines_of(data)[0]
    assert first[1] == 3 and first[3] is not None and first[3]["type"] == "session"
    tree = load_bytes(data)
    assert tree.header is not None and any("byte-order mark" in p.message for p in tree.problems)


def test_not_final_holds_back_the_partial_line_and_counts_from_the_base() -> None:
    data = OBJ + b"\n" + OBJ[:10]
    got = lines_of(data, base_offset=100, base_line=7, final=False)
    assert [(ln, off) for ln, off, _, _, _ in got] == [(7, 100)]


def test_load_keeps_noted_lines_and_skips_the_rest() -> None:
    h = orjson.dumps(header())
    body = [
        h + b"\n",
        orjson.dumps(user("u1", None)) + b"\r\n",  # 2: kept, CRLF
        b"\n",  # 3: blank
        b"{oops\n",  # 4: not JSON
        b"[1,2]\n",  # 5: an array
        h + b"\n",  # 6: another header
        orjson.dumps(user("u2", "u1", "caf")).replace(b"caf", b"caf\xe9") + b"\n",  # 7: kept, U+FFFD
        orjson.dumps(user("u3", "u2")),  # 8: kept, no newline
    ]
    tree = load_bytes(b"".join(body))
    assert [n.id for n in tree.nodes] == ["u1", "u2", "u3"]
    assert [n.line for n in tree.nodes] == [2, 7, 8]
    assert [s.line for s in tree.skipped] == [3, 4, 5, 6]
    assert "another session header" in tree.skipped[-1].reason
    notes = {p.line: p.message for p in tree.problems}
    assert "CRLF" in notes[2] and "U+FFFD" in notes[7] and "no newline" in notes[8]
    assert tree.get("u2").text == "user: caf\ufffd"
    assert 1 + tree.entry_count + len(tree.skipped) == len(body)


def test_torn_last_line_is_skipped_not_fatal() -> None:
    data = to_bytes([user("u1", None)]) + orjson.dumps(user("u2", "u1"))[:-3]
    tree = load_bytes(data)
    assert [n.id for n in tree.nodes] == ["u1"] and tree.leaf is not None and tree.leaf.id == "u1"
    assert tree.skipped[0].line == 3 and tree.skipped[0].reason.startswith("torn last line")
