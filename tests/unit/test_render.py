"""pitree.widgets.render.entry: every entry type, wrong-typed fields, hostile text, folding and cutting huge fields."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pitree.session.tree import SessionTree
from pitree.store.session_file import load_session
from pitree.widgets.render import entry as render
from pitree.widgets.render.entry import (
    HEAD_CHARS,
    HEAD_LINES,
    MAX_CHARS,
    Fold,
    Part,
    entry_parts,
    image_placeholder,
    raw_parts,
    token_text,
)
from pitree.widgets.render.entry_header import header, relative_time, when
from pitree.widgets.render.lexers import call_path, lexer_for_path, lexer_for_text
from rich.console import Console
from rich.text import Text

from tests.sessions import assistant, entry, tool_result, user, write_session_file

# ---- helpers -----------------------------------------------------------------------------------------------


def plain(parts: list[Part] | Part, *, open_folds: bool = True, width: int = 100) -> str:
    """What the parts show, as plain text; a Fold is `[fold: title]` then (when open) its body."""
    console = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    for part in parts if isinstance(parts, list) else [parts]:
        if isinstance(part, Fold):
            console.print(Text(f"[fold: {part.title}") + (part.label or Text()) + Text("]"))
            if open_folds:
                for body in part.body:
                    console.print(body)
        else:
            console.print(part)
    return console.export_text()


def terminal_output(parts: list[Part]) -> str:
    """What would be written to a real terminal (colours on), folds opened."""
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=True, color_system="truecolor", legacy_windows=False)
    for part in parts:
        for piece in (*part.body, part.label or "") if isinstance(part, Fold) else (part,):
            console.print(piece)
    return out.getvalue()


def links(parts: list[Part]) -> list[str]:
    """Every hyperlink target a render would emit (OSC 8)."""
    console = Console(width=100, file=io.StringIO())
    found = []
    for part in parts:
        for piece in (*part.body, part.label or "") if isinstance(part, Fold) else (part,):
            found += [seg.style.link for seg in console.render(piece) if seg.style and seg.style.link]
    return found


def folds(parts: list[Part]) -> list[Fold]:
    return [p for p in parts if isinstance(p, Fold)]


def msg_entry(message: Any, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "e1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00Z",
        "message": message,
        **fields,
    }


# ---- entry types -------------------------------------------------------------------------------------------

ASSISTANT = msg_entry(
    {
        "role": "assistant",
        "provider": "anthropic",
        "model": "claude-x",
        "api": "messages",
        "content": [
            {"type": "text", "text": "# Plan\n\nUse **bold** and `code`.\n\n```python\nprint('hi')\n```"},
            {"type": "thinking", "thinking": "let me think about it"},
            {
                "type": "toolCall",
                "id": "call_1",
                "name": "read",
                "arguments": {"path": "src/a.py", "limit": 5},
            },
        ],
        "usage": {
            "input": 1200,
            "output": 34,
            "cacheRead": 5,
            "cacheWrite": 0,
            "totalTokens": 1239,
            "cost": {"total": 0.0123},
        },
        "stopReason": "toolUse",
        "errorMessage": "rate limited",
        "responseId": "resp_9",
    }
)

CASES: list[tuple[str, Any, list[str]]] = [
    (
        "assistant",
        ASSISTANT,
        [
            "Plan",
            "Use bold and code.",
            "print('hi')",
            "[fold: thinking (21 chars)]",
            "let me think about it",
            "tool call read  call_1",
            '"path": "src/a.py"',
            '"limit": 5',
            "error: rate limited",
            "input",
            "cacheRead",
            "totalTokens",
            "1,200",
            "1,239",
            "$0.0123",
            "api: messages",
            "responseId: resp_9",
        ],
    ),
    (
        "user string",
        msg_entry({"role": "user", "content": "plain *not markdown* text"}),
        ["plain *not markdown* text"],
    ),
    (
        "user blocks",
        msg_entry(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look at this"},
                    {"type": "image", "mimeType": "image/png", "data": "A" * 16800},
                ],
            }
        ),
        ["look at this", "[image: image/png, 12.3 KB]"],
    ),
    (
        "tool result",
        msg_entry(
            {
                "role": "toolResult",
                "toolCallId": "c9",
                "toolName": "bash",
                "isError": True,
                "content": [{"type": "text", "text": "command not found"}],
            }
        ),
        ["tool result bash", "ERROR", "toolCallId: c9", "command not found"],
    ),
    (
        "tool result with edit diff",
        msg_entry(
            {
                "role": "toolResult",
                "toolCallId": "c9",
                "toolName": "edit",
                "isError": False,
                "content": [{"type": "text", "text": "Successfully replaced text"}],
                "details": {"diff": "-old line\n+new line", "firstChangedLine": 3},
            }
        ),
        [
            "Successfully replaced text",
            "diff:",
            "-old line",
            "+new line",
            "[fold: details (JSON)]",
            '"firstChangedLine": 3',
        ],
    ),
    (
        "bash execution",
        msg_entry(
            {
                "role": "bashExecution",
                "command": "make test",
                "exitCode": 2,
                "output": "FAILED",
                "cancelled": True,
                "truncated": True,
            }
        ),
        ["$ make test", "exit code 2", "cancelled", "output truncated by Pi", "FAILED"],
    ),
    (
        "custom message role",
        msg_entry({"role": "custom", "customType": "note", "content": "from an extension", "display": True}),
        ["customType: note", "from an extension", "display: true"],
    ),
    (
        "unknown role",
        msg_entry({"role": "robot", "content": "beep", "volts": 5}),
        ["role not known to pitree: robot", "beep", "volts: 5"],
    ),
    (
        "compaction",
        entry(
            "compaction",
            "c1",
            None,
            summary="## Goal\nShip it",
            firstKeptEntryId="u1",
            tokensBefore=123456,
            fromHook=True,
            details={"readFiles": ["a.py", "b.py"], "modifiedFiles": ["c.py"]},
        ),
        [
            "tokensBefore: 123456",
            "firstKeptEntryId: u1",
            "extension",
            "Goal",
            "Ship it",
            "readFiles (2):",
            "a.py",
            "modifiedFiles (1):",
            "c.py",
        ],
    ),
    (
        "branch summary",
        entry(
            "branch_summary",
            "b1",
            None,
            fromId="a9",
            summary="We tried **X**.",
            details={"readFiles": [], "modifiedFiles": ["x.py"]},
        ),
        ["fromId: a9", "We tried X.", "modifiedFiles (1):", "x.py"],
    ),
    (
        "custom_message",
        entry(
            "custom_message",
            "m1",
            None,
            customType="todo",
            content=[{"type": "text", "text": "remember"}],
            display=False,
            details={"k": 1},
        ),
        ["customType: todo", "display: false", "remember", 'details: {"k":1}'],
    ),
    (
        "custom",
        entry("custom", "x1", None, customType="pitree.jump", data={"from": "a1", "to": "b2"}),
        ["customType: pitree.jump", 'data: {"from":"a1","to":"b2"}'],
    ),
    (
        "label",
        entry("label", "l1", None, targetId="a1", label="good point"),
        ["targetId: a1", "label: good point"],
    ),
    ("label cleared", entry("label", "l2", None, targetId="a1"), ["label: (cleared)"]),
    ("session_info", entry("session_info", "s1", None, name="refactor"), ["name: refactor"]),
    (
        "model_change",
        entry("model_change", "mc", None, provider="openai", modelId="gpt-5"),
        ["provider: openai", "modelId: gpt-5"],
    ),
    (
        "thinking_level_change",
        entry("thinking_level_change", "t1", None, thinkingLevel="high"),
        ["thinkingLevel: high"],
    ),
    (
        "unknown type",
        {"type": "future_thing", "id": "f1", "shiny": [1, 2], "text": "line1\nline2"},
        ["shiny: [1,2]", "text:", "line1", "line2"],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), CASES, ids=[c[0] for c in CASES])
def test_entry_types(name: str, obj: Any, expected: list[str]) -> None:
    text = plain(entry_parts(obj))
    for piece in expected:
        assert piece in text, f"{name}: {piece!r} not in\n{text}"


def test_thinking_is_a_collapsed_fold_and_image_data_never_shown() -> None:
    parts = entry_parts(ASSISTANT)
    (thinking,) = [f for f in folds(parts) if f.title.startswith("thinking")]
    assert thinking.collapsed
    assert "let me think" not in plain(parts, open_folds=False)
    image = msg_entry({"role": "user", "content": [{"type": "image", "mimeType": "image/png", "data": "QUJD" * 5000}]})
    assert "QUJD" not in plain(entry_parts(image))


@pytest.mark.parametrize(
    ("block", "shown"),
    [
        ({"data": "A" * 16800, "mimeType": "image/png"}, "[image: image/png, 12.3 KB]"),
        ({"data": "AAA=", "mimeType": "image/gif"}, "[image: image/gif, 0.0 KB]"),
        ({"data": "A" * 4_000_000, "mimeType": "image/jpeg"}, "[image: image/jpeg, 2.9 MB]"),
        ({"data": 42, "mimeType": "image/png"}, "[image: image/png, no data]"),
        ({"data": "AAAA"}, "[image: unknown type, 0.0 KB]"),
        ({"data": "AAAA", "mimeType": ["x"]}, '[image: ["x"], 0.0 KB]'),
    ],
)
def test_image_placeholder(block: dict[str, Any], shown: str) -> None:
    assert image_placeholder(block).plain == shown


# ---- wrong types never crash -------------------------------------------------------------------------------

WRONG: list[tuple[str, Any, str]] = [
    ("message is a list", msg_entry([1, 2]), "message is a list, not an object"),
    ("message missing", {"type": "message", "id": "x"}, "has no message"),
    ("content is a number", msg_entry({"role": "user", "content": 5}), "content is a int"),
    ("assistant content number", msg_entry({"role": "assistant", "content": 5.5}), "content is a float"),
    ("assistant content string", msg_entry({"role": "assistant", "content": "just **text**"}), "just text"),
    ("assistant no content", msg_entry({"role": "assistant"}), "(no content)"),
    (
        "blocks of odd types",
        msg_entry({"role": "assistant", "content": [7, None, "s", {"type": "video"}]}),
        "block video",
    ),
    (
        "text block not a string",
        msg_entry({"role": "user", "content": [{"type": "text", "text": {"a": 1}}]}),
        '{"a":1}',
    ),
    ("usage a string", msg_entry({"role": "assistant", "content": [], "usage": "lots"}), "usage: lots"),
    (
        "usage fields wrong",
        msg_entry({"role": "assistant", "content": [], "usage": {"input": "many", "output": None, "cost": "free"}}),
        "many",
    ),
    (
        "tool call args a string",
        msg_entry({"role": "assistant", "content": [{"type": "toolCall", "name": 3, "arguments": "{not json"}]}),
        "tool call 3",
    ),
    (
        "exit code a string",
        msg_entry({"role": "bashExecution", "command": ["ls"], "exitCode": "x", "output": 12}),
        "exit code x",
    ),
    ("role a number", msg_entry({"role": 12}), "role not known to pitree: 12"),
    (
        "tokensBefore a string",
        entry("compaction", "c", None, tokensBefore="many", summary=None, details="nope"),
        "tokensBefore: many",
    ),
    (
        "files not lists",
        entry("branch_summary", "b", None, summary=5, details={"readFiles": "a.py"}),
        "readFiles: a.py",
    ),
    ("label a number", entry("label", "l", None, targetId=5, label=9), "label: 9"),
    ("entry a list", [1, 2, 3], "this entry is a list"),
    ("empty entry", {}, "(no fields)"),
]


@pytest.mark.parametrize(("name", "obj", "expected"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_types_are_shown_not_fatal(name: str, obj: Any, expected: str) -> None:
    assert expected in plain(entry_parts(obj))


@pytest.mark.parametrize(
    ("obj", "shown", "hidden"),
    [
        (
            {"type": "custom", "id": 5, "parentId": ["p"], "timestamp": "yesterday"},
            ["id: 5", 'parentId: ["p"]', "timestamp: yesterday"],
            [],
        ),
        ({"type": "custom", "id": "a"}, ["timestamp: (missing)"], ["id:", "parentId:"]),
        (
            {"type": "custom", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:00Z"},
            [],
            ["id:", "parentId:", "timestamp:"],
        ),
    ],
)
def test_wrong_common_fields_are_shown(obj: Any, shown: list[str], hidden: list[str]) -> None:
    text = plain(entry_parts(obj))
    for piece in shown:
        assert piece in text
    for piece in hidden:
        assert piece not in text


def test_usage_numbers_are_formatted() -> None:
    usage = {"input": 1200.0, "output": 3.5, "cacheRead": True, "totalTokens": "x", "cost": {"total": 2}}
    text = plain(render.usage_table(usage))
    assert "1,200 " in text and "3.50" in text and "true" in text and "$2.0000" in text


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=5,
)
ROLES = [
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
    3,
]
FIELDS = [
    "content",
    "text",
    "thinking",
    "arguments",
    "usage",
    "summary",
    "details",
    "output",
    "exitCode",
    "toolName",
    "errorMessage",
    "stopReason",
    "data",
    "label",
    "fromId",
    "firstKeptEntryId",
    "customType",
]
TYPES = [
    "message",
    "compaction",
    "branch_summary",
    "custom_message",
    "custom",
    "label",
    "session_info",
    "model_change",
    "thinking_level_change",
    "other",
]


@st.composite
def entries(draw: st.DrawFn) -> dict[str, Any]:
    fields = draw(st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6))
    etype = draw(st.sampled_from(TYPES))
    if etype == "message":
        blocks = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"type": st.sampled_from(["text", "thinking", "toolCall", "image", "x"])},
                    optional={k: json_values for k in ("text", "thinking", "name", "arguments", "data", "mimeType")},
                ),
                max_size=3,
            )
        )
        message = {"role": draw(st.sampled_from(ROLES)), **fields}
        if draw(st.booleans()):
            message["content"] = blocks
        return msg_entry(draw(st.sampled_from([message, message, message, fields.get("content")])))
    return {"type": etype, **fields}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries())
def test_any_field_types_render(obj: dict[str, Any]) -> None:
    parts = entry_parts(obj)
    assert parts
    plain(parts)
    token_text(obj)


# ---- hostile text ------------------------------------------------------------------------------------------

HOSTILE = (
    "A\x1b]52;c;SGVsbG8=\x07B\x1b[2J\x9b31m\x9d8;;http://evil\x9cC\u202eD\u200bE\r\x08F"
    "[bold red]G[/] [link=http://evil.example]H[/link]"
)
VISIBLE = [
    "␛]52;c;SGVsbG8=␇",
    "␛[2J",
    "<U+009B>31m",
    "<U+009D>8;;http://evil<U+009C>",
    "<U+202E>",
    "<U+200B>",
    "␍␈",
    "[bold red]G[/]",
    "[link=http://evil.example]H[/link]",
]


def _hostile_entries() -> list[tuple[str, Any]]:
    h = HOSTILE
    return [
        ("user", msg_entry({"role": "user", "content": h})),
        ("assistant text", msg_entry({"role": "assistant", "content": [{"type": "text", "text": h}]})),
        ("thinking", msg_entry({"role": "assistant", "content": [{"type": "thinking", "thinking": h}]})),
        (
            "tool call",
            msg_entry(
                {
                    "role": "assistant",
                    "content": [{"type": "toolCall", "id": h, "name": h, "arguments": {h: h}}],
                }
            ),
        ),
        ("error message", msg_entry({"role": "assistant", "content": [], "errorMessage": h})),
        (
            "usage",
            msg_entry({"role": "assistant", "content": [], "usage": {"input": h, "cost": {"total": h}}}),
        ),
        (
            "tool result",
            msg_entry(
                {
                    "role": "toolResult",
                    "toolName": h,
                    "content": [{"type": "text", "text": h}],
                    "details": {"diff": h, h: h},
                }
            ),
        ),
        ("bash", msg_entry({"role": "bashExecution", "command": h, "output": h, "exitCode": h})),
        (
            "compaction",
            entry(
                "compaction",
                "c",
                None,
                summary=h,
                firstKeptEntryId=h,
                tokensBefore=h,
                details={"readFiles": [h], "modifiedFiles": [h]},
            ),
        ),
        ("branch summary", entry("branch_summary", "b", None, summary=h, fromId=h)),
        ("custom_message", entry("custom_message", "m", None, customType=h, content=h)),
        ("generic", {"type": h, h: h, "nested": {h: [h]}}),
        (
            "image mime",
            msg_entry({"role": "user", "content": [{"type": "image", "mimeType": h, "data": ""}]}),
        ),
    ]


@pytest.mark.parametrize(("name", "obj"), _hostile_entries(), ids=[h[0] for h in _hostile_entries()])
def test_hostile_text_is_shown_visibly_and_never_reaches_the_terminal(name: str, obj: Any) -> None:
    parts = entry_parts(obj)
    out = terminal_output(parts)
    for bad in ("\x1b]", "\x1b[2J", "\x07", "\x9b", "\x9d", "\x9c", "\u202e", "\u200b", "\r", "\x08"):
        assert bad not in out, f"{name}: {bad!r} reached the terminal"
    assert links(parts) == []
    text = plain(parts, width=500)
    assert "␛]52;c;SGVsbG8=␇" in text
    if name not in ("image mime", "usage"):
        assert "[bold red]G[/]" in text, f"{name}: markup was interpreted"


def test_hostile_text_is_literal_in_plain_output() -> None:
    text = plain(entry_parts(msg_entry({"role": "user", "content": HOSTILE})), width=400)
    for piece in VISIBLE:
        assert piece in text


@pytest.mark.parametrize(
    ("source", "absent", "present"),
    [
        ("[site](http://evil.example/x)", None, "site (http://evil.example/x)"),
        ("<http://evil.example>", None, "http://evil.example"),
        ("![pic](http://evil.example/p.png)", None, "pic"),
        ("a &#x202e; b &ZeroWidthSpace; c", "\u202e", "<U+202E>"),
        ("```[bold]x\ncode &#x1b; here\n```", "\x1b", "code"),
        ("[bold red]not markup[/]", None, "[bold red]not markup[/]"),
    ],
)
def test_markdown_cannot_inject(source: str, absent: str | None, present: str) -> None:
    parts = render.markdown(source)
    assert links(parts) == []
    out = terminal_output(parts)
    assert "\x1b]8" not in out
    if absent:
        assert absent not in out
    assert present in plain(parts)


# ---- folding and cutting -----------------------------------------------------------------------------------


def test_long_output_folds_after_forty_lines() -> None:
    text = "\n".join(f"row {i}" for i in range(100))
    parts = render.fold_text(text)
    shown = plain(parts, open_folds=False)
    assert f"row {HEAD_LINES - 1}" in shown and f"row {HEAD_LINES}" not in shown
    (fold,) = folds(parts)
    assert fold.title == f"… {100 - HEAD_LINES} more lines" and fold.collapsed
    assert "row 99" in plain(parts)


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("a\n" * 40, False),
        ("one line", False),
        ("x" * HEAD_CHARS, False),
        ("x" * (HEAD_CHARS + 1), True),
        ("\n".join(["y" * 1000] * 20), True),
        ("", False),
    ],
)
def test_fold_boundaries(text: str, folded: bool) -> None:
    assert bool(folds(render.fold_text(text))) is folded


def test_huge_field_is_cut_with_a_note() -> None:
    big = "z" * (MAX_CHARS + 12_345)
    parts = render.fold_text(big)
    shown = plain(parts, open_folds=False)
    assert len(shown) < HEAD_CHARS * 1.1
    everything = plain(parts)
    assert "… 12,345 more characters not shown" in everything
    assert everything.count("z") == MAX_CHARS


def test_huge_entry_parts_stay_small() -> None:
    big = "\n".join(f"line {i} " + "q" * 70 for i in range(100_000))  # ~8 MB
    obj = msg_entry({"role": "toolResult", "toolName": "read", "content": [{"type": "text", "text": big}]})
    parts = entry_parts(obj)
    unfolded = sum(len(p.plain) for p in parts if isinstance(p, Text))
    assert unfolded < HEAD_CHARS + 1000
    body = [b for f in folds(parts) for b in f.body if isinstance(b, Text)]
    assert sum(len(b.plain) for b in body) <= MAX_CHARS + 200
    assert any("more characters not shown" in b.plain for b in body)


def test_huge_markdown_keeps_the_rest_as_plain_text() -> None:
    text = "\n\n".join(f"paragraph **{i}**" for i in range(3000))
    parts = render.markdown(text)
    (fold,) = folds(parts)
    assert "plain text" in fold.title
    assert "paragraph **2999**" in plain(parts)  # the folded rest is literal, not rendered


def test_huge_json_is_cut_in_bytes() -> None:
    parts = render.json_view({"content": "w" * (MAX_CHARS * 2)})
    assert "more bytes not shown" in plain(parts)


# ---- raw lines ---------------------------------------------------------------------------------------------


def test_raw_line_pretty_printed() -> None:
    text = plain(raw_parts(b'{"type":"message","message":{"role":"user","content":"hi \\u001b[31m"}}'))
    assert '  "message": {' in text and '"role": "user"' in text
    assert "\\u001b[31m" in text


def test_raw_line_that_does_not_parse() -> None:
    parts = raw_parts(b'{"type":"message", "oops\x1b]52;c;x\x07 \xff')
    text = plain(parts)
    assert "does not parse as JSON" in text
    assert '{"type":"message", "oops␛]52;c;x␇' in text
    assert "\x1b" not in terminal_output(parts).replace("\x1b[", "")


# ---- header ------------------------------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> SessionTree:
    entries = [
        user("u1", None, "hi", t=0),
        assistant("a1", "u1", "ok", t=1, calls=[("c1", "read", {"path": "src/app.py", "offset": 3, "limit": 4})]),
        tool_result("r1", "a1", "c1", "read", "x = 1", t=2),
        entry("label", "l1", "r1", t=3, targetId="a1", label="[b]star\x1b[0m"),
        {
            "type": "message",
            "id": "o1",
            "parentId": "gone",
            "timestamp": "2026-01-01T00:00:04Z",
            "message": {"role": "user", "content": "orphan"},
        },
    ]
    loaded, _ = load_session(write_session_file(tmp_path / "s.jsonl", entries))
    return loaded


def test_header_of_an_assistant(tree: SessionTree) -> None:
    node = tree.by_id["a1"]
    text = header(node, tree, stop_reason="toolUse", tokens=42, now=node.ts / 1000 + 180).plain
    for piece in (
        "message · assistant",
        "id a1",
        "parent u1",
        "line 3",
        "2026-01-01T00:00:01.000Z",
        "(3 min ago)",
        "label [b]star␛[0m",
        "model anthropic/claude",
        "stop reason toolUse",
        f"tokens ~{node.est}",
        "Pi's chars/4",
        "42 (tiktoken cl100k)",
    ):
        assert piece in text, f"{piece!r} not in {text!r}"


def test_header_of_root_leaf_and_orphan(tree: SessionTree) -> None:
    root = header(tree.by_id["u1"], tree, tokens="counting…").plain
    assert "parent none (root)" in root and "tiktoken: counting…" in root and "model" not in root
    orphan = header(tree.by_id["o1"], tree).plain
    assert "parent gone (not in this file)" in orphan and "← leaf" in orphan


def test_tool_result_uses_the_call_for_highlighting(tree: SessionTree) -> None:
    obj = msg_entry(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "def f():\n    return 1"}],
        }
    )
    parts = entry_parts(obj, tree)
    assert "call: [read: src/app.py:3-6]" in plain(parts)
    code = next(p for p in parts if isinstance(p, Text) and "def f" in p.plain)
    assert code.spans, "the read of a .py file should be highlighted"


def test_references_say_where_the_entry_is(tree: SessionTree) -> None:
    obj = entry("compaction", "c", None, summary="s", firstKeptEntryId="r1", tokensBefore=1)
    assert "firstKeptEntryId: r1  (line 4)" in plain(entry_parts(obj, tree))
    obj = entry("branch_summary", "b", None, summary="s", fromId="nope")
    assert "fromId: nope  (not in this session)" in plain(entry_parts(obj, tree))


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "just now"),
        (4.9, "just now"),
        (42, "42 s ago"),
        (180, "3 min ago"),
        (7200, "2 h ago"),
        (86400, "1 day ago"),
        (5 * 86400, "5 days ago"),
        (90 * 86400, "2 months ago"),
        (800 * 86400, "2 years ago"),
        (-300, "in 5 min"),
    ],
)
def test_relative_time(seconds: float, shown: str) -> None:
    assert relative_time(seconds) == shown


@pytest.mark.parametrize(
    ("ts", "shown"),
    [
        (math.nan, "no valid timestamp"),
        (math.inf, "no valid timestamp"),
        (1e300, "out of range"),
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1767225600123.0, "2026-01-01T00:00:00.123Z"),
    ],
)
def test_when(ts: float, shown: str) -> None:
    assert shown in when(ts, now=1767225600.0)


# ---- lexers and token text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "path"),
    [
        ("[read: src/a.py:10-40]", "src/a.py"),
        ("[read: ~/x/b.ts]", "~/x/b.ts"),
        ("[read: C:\\x.rs:5]", "C:\\x.rs"),
        ("[edit: a.go]", "a.go"),
        ("[bash: ls]", None),
        (None, None),
        ("[read: weird]", "weird"),
    ],
)
def test_call_path(call: str | None, path: str | None) -> None:
    assert call_path(call) == path


@pytest.mark.parametrize(
    ("path", "lexer"),
    [
        ("a.py", "python"),
        ("x/y/Z.TSX", "tsx"),
        ("Makefile", "make"),
        ("Dockerfile.dev", "docker"),
        ("notes", None),
        ("", None),
        (None, None),
        ("archive.tar.gz", None),
    ],
)
def test_lexer_for_path(path: str | None, lexer: str | None) -> None:
    assert lexer_for_path(path) == lexer


@pytest.mark.parametrize(
    ("text", "lexer"),
    [
        ('{"a": [1, 2]}', "json"),
        ("[1, 2", None),
        ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b", "diff"),
        ("#!/usr/bin/env python3\nprint(1)", "python"),
        ("#!/bin/sh\nls", "bash"),
        ("<?xml version='1.0'?><a/>", "xml"),
        ("<!DOCTYPE html><html></html>", "html"),
        ("total 0\ndrwxr-xr-x", None),
    ],
)
def test_lexer_for_text(text: str, lexer: str | None) -> None:
    assert lexer_for_text(text) == lexer


@pytest.mark.parametrize(
    ("obj", "text"),
    [
        (msg_entry({"role": "user", "content": "hello"}), "hello"),
        (
            msg_entry(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "a"},
                        {"type": "thinking", "thinking": "b"},
                        {"type": "toolCall", "name": "ls", "arguments": {"p": 1}},
                    ],
                }
            ),
            'a\nb\nls{"p":1}',
        ),
        (msg_entry({"role": "bashExecution", "command": "ls", "output": "x"}), "ls\nx"),
        (entry("compaction", "c", None, summary="sum"), "sum"),
        (entry("custom_message", "m", None, content="note"), "note"),
        (entry("label", "l", None, label="x"), None),
        ([1], None),
    ],
)
def test_token_text(obj: Any, text: str | None) -> None:
    assert token_text(obj) == text


def test_one_line_fields_stay_together() -> None:
    obj = msg_entry({"role": "toolResult", "toolName": "bash", "toolCallId": "c1", "content": "out\nput"})
    parts = entry_parts(obj)
    assert isinstance(parts[0], Text) and parts[0].plain == "tool result bash\ntoolCallId: c1"
    assert isinstance(parts[1], Text) and parts[1].plain == "out\nput"
