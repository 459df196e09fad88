"""Row-text helpers (Pi's formatToolCall, extractContent, normalize) and terminal safety (make_safe)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pitree.session.text import (
    as_str,
    extract_content,
    format_tool_call,
    has_text_content,
    js_string,
    make_safe,
    normalize,
    one_line,
)


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("read", {"path": "src/a.py"}, "[read: src/a.py]"),
        ("read", {"file_path": "src/b.py"}, "[read: src/b.py]"),
        ("read", {"path": "", "file_path": "c.py"}, "[read: c.py]"),  # `a || b`: an empty path falls through
        ("read", {"path": "a.py", "offset": 10, "limit": 5}, "[read: a.py:10-14]"),
        ("read", {"path": "a.py", "offset": 10}, "[read: a.py:10]"),
        ("read", {"path": "a.py", "limit": 20}, "[read: a.py:1-20]"),
        ("read", {"path": "a.py", "offset": 0, "limit": 1}, "[read: a.py:0]"),  # an end of 0 is falsy in JS
        ("read", {"path": "a.py", "offset": None}, "[read: a.py:1]"),  # null is not undefined
        ("read", {}, "[read: ]"),
        ("read", {"path": 5}, "[read: 5]"),
        ("write", {"path": "w.py", "content": "..."}, "[write: w.py]"),
        ("edit", {"file_path": "e.py"}, "[edit: e.py]"),
        ("bash", {"command": "ls -la"}, "[bash: ls -la]"),
        ("bash", {"command": "echo a\n\techo b"}, "[bash: echo a  echo b]"),
        ("bash", {"command": "x" * 50}, "[bash: " + "x" * 50 + "]"),
        ("bash", {"command": "x" * 51}, "[bash: " + "x" * 50 + "...]"),
        ("bash", {"command": "  " + "y" * 49}, "[bash: " + "y" * 49 + "...]"),  # Pi measures the raw command
        ("bash", {}, "[bash: ]"),
        ("grep", {"pattern": "TODO", "path": "src"}, "[grep: /TODO/ in src]"),
        ("grep", {"pattern": "TODO"}, "[grep: /TODO/ in .]"),
        ("find", {"pattern": "*.py"}, "[find: *.py in .]"),
        ("ls", {}, "[ls: .]"),
        ("ls", {"path": "docs"}, "[ls: docs]"),
        ("mcp_search", {"q": "x"}, '[mcp_search: {"q":"x"}]'),
        ("mcp_search", {"q": "x" * 40}, '[mcp_search: {"q":"' + "x" * 34 + "...]"),
        ("custom", "not a dict", "[custom: {}]"),
        (None, {}, "[null: {}]"),
    ],
)
def test_format_tool_call(name: Any, args: Any, expected: str) -> None:
    assert format_tool_call(name, args) == expected


def test_format_tool_call_shortens_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/dev")
    assert format_tool_call("read", {"path": "/home/dev/x.py"}) == "[read: ~/x.py]"
    assert format_tool_call("ls", {"path": "/home/devious"}) == "[ls: ~ious]"  # Pi's plain startsWith
    assert format_tool_call("grep", {"pattern": "p", "path": "/other"}) == "[grep: /p/ in /other]"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("plain", "plain"),
        (
            [{"type": "text", "text": "a"}, {"type": "image", "data": "..."}, {"type": "text", "text": "b"}],
            "ab",
        ),
        ([{"type": "text", "text": "x" * 150}, {"type": "text", "text": "y" * 150}], "x" * 150 + "y" * 50),
        ("z" * 300, "z" * 200),
        (None, ""),
        (7, ""),
        ([None, "str", {"type": "text"}], ""),
    ],
)
def test_extract_content(content: Any, expected: str) -> None:
    assert extract_content(content) == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("x", True),
        ("  \n", False),
        ([{"type": "text", "text": " "}], False),
        ([{"type": "thinking", "thinking": "t"}, {"type": "text", "text": "a"}], True),
        (None, False),
        ([], False),
    ],
)
def test_has_text_content(content: Any, expected: bool) -> None:
    assert has_text_content(content) is expected


def test_normalize_and_js_string() -> None:
    assert normalize("  a\nb\tc  \n") == "a b c"
    assert [js_string(v) for v in ("s", None, True, False, 3, 3.0, 2.5, [1, None, "x"], {"a": 1})] == [
        "s",
        "null",
        "true",
        "false",
        "3",
        "3",
        "2.5",
        "1,,x",
        "[object Object]",
    ]
    assert as_str(None) == "" and as_str({"a": [1]}) == '{"a":[1]}' and as_str("t") == "t"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred\x1b[0m", "␛[31mred␛[0m"),  # CSI (SGR)
        ("\x1b[2J\x1b[H", "␛[2J␛[H"),  # clear screen, cursor home
        ("\x1b]52;c;aGVsbG8=\x07", "␛]52;c;aGVsbG8=␇"),  # OSC 52: write to the clipboard
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "␛]8;;http://x␛\\link␛]8;;␛\\"),  # OSC 8 hyperlink
        ("\x1bP+q544e\x1b\\", "␛P+q544e␛\\"),  # DCS
        ("a\x9b31mb", "a<U+009B>31mb"),  # C1 CSI, one byte
        ("\x9d52;c;x\x9c", "<U+009D>52;c;x<U+009C>"),  # C1 OSC ... ST
        ("\x85next", "<U+0085>next"),  # C1 NEL
        ("abc\u202edcba", "abc<U+202E>dcba"),  # right-to-left override
        ("\u2066iso\u2069 \u200f", "<U+2066>iso<U+2069> <U+200F>"),  # bidi isolates, RLM
        ("zero\u200bwidth\u200c\u200d\u2060", "zero<U+200B>width<U+200C><U+200D><U+2060>"),
        ("\ufeffbom", "<U+FEFF>bom"),
        ("line\u2028sep\u2029", "line<U+2028>sep<U+2029>"),
        ("nul\x00bel\x07bs\x08del\x7f", "nul␀bel␇bs␈del␡"),
        ("cr\rlf", "cr␍lf"),
        ("keep\nnew\tlines", "keep\nnew\tlines"),
        ("plain ascii [bold]not markup[/bold]", "plain ascii [bold]not markup[/bold]"),
        ("unicode ok: é 中文 😀 °C", "unicode ok: é 中文 😀 °C"),
    ],
)
def test_make_safe(raw: str, shown: str) -> None:
    out = make_safe(raw)
    assert out == shown
    assert not any(0x80 <= ord(c) <= 0x9F or ord(c) < 0x20 and c not in "\n\t" or c == "\x7f" for c in out)


def test_make_safe_one_line_shows_newlines_and_tabs() -> None:
    assert make_safe("a\nb\tc", keep_newlines=False) == "a␊b␉c"
    text = "no controls at all"
    assert make_safe(text) is text  # the fast path returns the same object


@pytest.mark.parametrize(
    ("value", "limit", "expected"),
    [
        ("plain.jsonl", None, "plain.jsonl"),
        (Path("/tmp/a b.jsonl"), None, "/tmp/a b.jsonl"),
        ("evil\x1b]52;c;x\x07.jsonl", None, repr("evil\x1b]52;c;x\x07.jsonl")),
        ("two\nlines", None, repr("two\nlines")),
        ("x" * 100, 10, "x" * 9 + "…"),
        ("short", 10, "short"),
    ],
)
def test_one_line(value: str | Path, limit: int | None, expected: str) -> None:
    assert one_line(value, limit) == expected
