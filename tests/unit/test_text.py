"""Pi's row texts for tool calls, and making session text safe for a terminal."""

from __future__ import annotations

import pytest

from pitree.session.text import format_tool_call, make_safe


@pytest.mark.parametrize(
    ("name", "args", "text"),
    [
        ("read", {"path": "/a/b.py"}, "[read: /a/b.py]"),
        ("read", {"path": "/a/b.py", "offset": 10}, "[read: /a/b.py:10]"),
        ("read", {"path": "/a/b.py", "offset": 10, "limit": 20}, "[read: /a/b.py:10-29]"),
        ("read", {"file_path": "x"}, "[read: x]"),
        ("write", {"path": "w"}, "[write: w]"),
        ("edit", {"path": "e"}, "[edit: e]"),
        ("bash", {"command": "ls\n-la"}, "[bash: ls -la]"),
        ("bash", {"command": "x" * 60}, "[bash: " + "x" * 50 + "...]"),
        ("grep", {"pattern": "foo"}, "[grep: /foo/ in .]"),
        ("find", {"pattern": "*.py", "path": "src"}, "[find: *.py in src]"),
        ("ls", {}, "[ls: .]"),
        ("custom_tool", {"a": 1}, '[custom_tool: {"a":1}]'),
        ("custom_tool", {"a": "y" * 50}, '[custom_tool: {"a":"' + "y" * 34 + "...]"),
        ("read", "not a dict", "[read: ]"),
    ],
)
def test_format_tool_call(name: str, args: object, text: str) -> None:
    assert format_tool_call(name, args) == text


def test_home_is_shortened(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/me")
    assert format_tool_call("read", {"path": "/home/me/x.py"}) == "[read: ~/x.py]"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred", "␛[31mred"),
        ("\x1b]52;c;aGVsbG8=\x07", "␛]52;c;aGVsbG8=␇"),
        ("\x1bPq#0\x1b\\", "␛Pq#0␛\\"),
        ("a\x9bb", "a<U+009B>b"),
        ("\u202eevil", "<U+202E>evil"),
        ("zero\u200bwidth", "zero<U+200B>width"),
        ("nul\x00", "nul␀"),
        ("cr\r", "cr␍"),
        ("[bold]x[/bold]", "[bold]x[/bold]"),
        ("tab\tnew\nline", "tab\tnew\nline"),
    ],
)
def test_make_safe(raw: str, shown: str) -> None:
    assert make_safe(raw) == shown
    assert "\x1b" not in make_safe(raw, keep_newlines=False)
    assert "\n" not in make_safe(raw, keep_newlines=False)
