"""The content-block walkers: what each yields for strings, lists with odd items and values of any type."""

from __future__ import annotations

from typing import Any

import pytest
from pitree.session.content import blocks, each_block, text_of, tool_calls

CALL = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}
MIXED: list[Any] = [
    {"type": "text", "text": "a"},
    "loose string",
    {"type": "thinking", "thinking": "t"},
    CALL,
    None,
    {"text": "no type"},
    {"type": "text", "text": 7},
    {"type": "image", "data": "QUJD", "mimeType": "image/png"},
]


@pytest.mark.parametrize("content", ["just text", None, 3, {"type": "text", "text": "x"}, []])
def test_no_blocks_outside_a_list(content: Any) -> None:
    assert list(blocks(content)) == [] and list(each_block(content)) == [] and list(tool_calls(content)) == []


def test_blocks_skip_what_is_not_an_object_and_keep_order() -> None:
    assert [t for t, _ in blocks(MIXED)] == ["text", "thinking", "toolCall", None, "text", "image"]
    assert all(isinstance(b, dict) for _, b in blocks(MIXED))


def test_each_block_keeps_every_item() -> None:
    got = list(each_block(MIXED))
    assert [t for t, _ in got] == ["text", None, "thinking", "toolCall", None, None, "text", "image"]
    assert [b for _, b in got] == MIXED


def test_tool_calls() -> None:
    assert list(tool_calls(MIXED)) == [CALL]


@pytest.mark.parametrize(
    ("content", "joiner", "only_strings", "expected"),
    [
        ("as is", "\n", False, "as is"),
        (None, "\n", False, ""),
        (42, "\n", False, ""),
        (MIXED, "\n", False, "a\n7"),  # a non-string text is read as JavaScript's String() would
        (MIXED, "", True, "a"),
        ([{"type": "text", "text": "x"}, {"type": "text", "text": "y"}], " ", False, "x y"),
    ],
)
def test_text_of(content: Any, joiner: str, only_strings: bool, expected: str) -> None:
    assert text_of(content, joiner, only_strings=only_strings) == expected
