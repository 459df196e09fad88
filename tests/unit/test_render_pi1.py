"""pitree.widgets.render.pi1 through `entry_parts`: every Pi 1.x entry and field (SPEC-pi1 A2), wrong types, hostile
text, huge values; system prompt text and Pi's estimate; context edits with a tree and the active path's edits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pitree.session.edits import path_edits
from pitree.store.session_file import EntryReader, load_session
from pitree.widgets.render.entry import entry_parts, token_text
from pitree.widgets.render.parts import MAX_CHARS, Fold, GoTo
from pitree.widgets.render.pi1 import edit_note
from pitree.widgets.render.system import LIST_MAX, js_items, system_estimate, system_text
from rich.text import Text

from tests.sessions import assistant, entry, user, write_session_file
from tests.unit.test_render import HOSTILE, folds, links, msg_entry, plain, terminal_output

TOOL = {
    "name": "read",
    "description": "Read a file.\nSecond line of the description.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
}
USAGE = {"input": 100, "output": 7, "cacheRead": 5, "cacheWrite": 3, "totalTokens": 115, "cost": {"total": 0.25}}


def system(**fields: Any) -> dict[str, Any]:
    return msg_entry({"role": "system", "timestamp": 1, **fields})


CASES: list[tuple[str, Any, list[str]]] = [
    (
        "system message",
        system(content="Base.", sections={"preamble": "You are pi.", "cwd": "<cwd>/x</cwd>"}, toolsAdded=[TOOL]),
        [
            "system prompt · 2 sections set · 1 tool added",
            "Pi's estimate",
            "prompt text (33 chars: the content, then each section set here):",
            "Base.\n\nYou are pi.\n\n<cwd>/x</cwd>",
            "[fold: section preamble  11 chars]",
            "[fold: section cwd  13 chars]",
            "tools added (1):",
            "[fold: tool read  Read a file.]",
            "Second line of the description.",
            '"path"',
            "constrainedSampling",
        ],
    ),
    (
        "system patch",
        system(content="", sections={"cwd": None, "skills": "K"}, toolsRemoved=[{"name": "read"}, {"name": "bash"}]),
        ["1 section set, 1 removed", "2 removed", "section cwd: removed (null)", "tools removed (2): read, bash"],
    ),
    ("system null content", system(content=None), ['content: null (Pi reads it as "")', "prompt text: (empty"]),
    (
        "system content blocks",
        system(content=[{"type": "text", "text": "T1"}, {"type": "image", "mimeType": "image/png", "data": "AAAA"}]),
        ["[image: image/png", "T1"],
    ),
    (
        "usage entry",
        entry("usage", "us", None, kind="cache_warm", provider="anthropic", model="claude", note="warm", usage=USAGE),
        ["usage · cache_warm", "anthropic/claude", "note: warm", "115", "$0.2500", "counts in the session's totals"],
    ),
    (
        "usage entry without totalTokens",
        entry("usage", "us", None, kind="k", provider="p", model="m", usage={**USAGE, "totalTokens": None}),
        ["Σ 115"],
    ),
    (
        "usage with reasoning",
        entry("usage", "us", None, kind="k", provider="p", model="m", usage={**USAGE, "reasoning": 4}),
        ["reasoning"],
    ),
    ("unknown usage kind", entry("usage", "us", None, kind="future", provider="p", model="m"), ["usage · future"]),
    (
        "context_edit omit",
        entry("context_edit", "e1", None, targetId="u1", replacement=None),
        ["omits u1 from the model's context", "target u1"],
    ),
    (
        "context_edit replace",
        entry("context_edit", "e1", None, targetId="u1", replacement={"content": [{"type": "text", "text": "v2"}]}),
        ["replaces u1 (the new content is below)", "with:\nv2"],
    ),
    (
        "context_edit without replacement",
        entry("context_edit", "e1", None, targetId="u1"),
        ["replacement is missing: Pi fails"],
    ),
    (
        "context_edit replacement a number",
        entry("context_edit", "e1", None, targetId="u1", replacement=5),
        ["neither null nor an object", "content is a int"],
    ),
    (
        "compaction checkpoint, usage, retain-none",
        entry(
            "compaction",
            "c1",
            None,
            summary="S",
            firstKeptEntryId="c1",
            tokensBefore=9,
            usage={"input": 100, "output": 7, "cacheRead": 0, "cacheWrite": 0},
            systemMessage={"role": "system", "content": "X", "sections": {"a": "A"}, "toolsAdded": [TOOL]},
        ),
        [
            "retain-none: firstKeptEntryId is this compaction's own id",
            "usage of the summary call:",
            "Σ 107",
            "checkpoint (systemMessage)",
            "[fold: prompt text (4 chars: the content, then each section set here)]",
            "[fold: section a  1 char]",
            "[fold: tool read",
        ],
    ),
    ("compaction systemMessage wrong", entry("compaction", "c1", None, systemMessage="x"), ["systemMessage: x"]),
    (
        "branch_summary usage and root",
        entry("branch_summary", "b1", None, fromId="root", summary="s", usage={"output": 7}),
        ["fromId: root  (there was no leaf: Pi writes root)", "usage of the summary call:", "7"],
    ),
    (
        "assistant Pi 1.x fields",
        msg_entry(
            {
                "role": "assistant",
                "content": [],
                "model": "m",
                "responseModel": "m-2025",
                "thinkingLevel": "high",
                "durationMs": 1234,
                "stopReason": "deferred",
                "deferred": {"id": "d1"},
            }
        ),
        ["deferred: the provider answers later", "response model: m-2025  (asked for m)", "thinking level: high"]
        + ["duration 1.23 s", 'deferred: {"id":"d1"}'],
    ),
    (
        "tool result usage and nested calls",
        msg_entry(
            {
                "role": "toolResult",
                "toolName": "code",
                "content": [],
                "durationMs": 20,
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 3},
                "nestedCalls": {
                    "calls": [
                        {"id": "n1", "name": "read", "arguments": {"path": "a"}, "status": "ok", "durationMs": 5},
                        {"id": "n2", "name": "bash", "argumentsBytes": 999, "status": "error", "error": "boom"},
                        {"id": "n3", "name": "x", "status": "unfinished"},
                    ],
                    "complete": False,
                },
            }
        ),
        ["duration 0.02 s", "usage of the tool's own model calls", "Σ 5", "nested calls (3)  incomplete"]
        + ['ok read {"path":"a"}  5 ms', "error bash (arguments left out: 999 bytes)  error: boom", "unfinished x"],
    ),
    (
        "bash fullOutputPath and excludeFromContext",
        msg_entry(
            {
                "role": "bashExecution",
                "command": "ls",
                "exitCode": 0,
                "output": "a",
                "excludeFromContext": True,
                "fullOutputPath": "/tmp/out.txt",
            }
        ),
        ["excluded from the context", "full output: /tmp/out.txt"],
    ),
    ("user null content", msg_entry({"role": "user", "content": None}), ["(no content: null, which Pi reads as [])"]),
    ("assistant null content", msg_entry({"role": "assistant", "content": None}), ["which Pi reads as []"]),
    ("tool result null content", msg_entry({"role": "toolResult", "content": None}), ["which Pi reads as []"]),
    ("custom null content", msg_entry({"role": "custom", "content": None}), ["which Pi reads as []"]),
    ("custom_message null content", entry("custom_message", "m", None, content=None), ["which Pi reads as []"]),
    ("custom_message no content", entry("custom_message", "m", None), ["(no content)"]),
    ("unknown role", msg_entry({"role": "narrator", "content": "d", "x": 1}), ["role not known", "narrator", "x: 1"]),
    ("oh-my-pi role", msg_entry({"role": "developer", "content": "d", "x": 1}), ["developer (oh-my-pi)", "x: 1"]),
    ("unknown type", entry("title_change", "t", None, title="T"), ["title: T"]),
]


@pytest.mark.parametrize(("name", "obj", "expected"), CASES, ids=[c[0] for c in CASES])
def test_pi1_entries(name: str, obj: Any, expected: list[str]) -> None:
    text = plain(entry_parts(obj), width=200)
    for piece in expected:
        assert piece in text, f"{name}: {piece!r} not in\n{text}"


def test_sections_tools_and_checkpoint_prompt_are_collapsed_folds() -> None:
    parts = entry_parts(system(content="C", sections={"a": "AAAA"}, toolsAdded=[TOOL]))
    assert [f.collapsed for f in folds(parts)] == [True, True]
    assert "AAAA" not in plain([p for p in parts if not isinstance(p, Fold)]).split("prompt text")[0]
    compaction = entry("compaction", "c", None, systemMessage={"role": "system", "content": "PROMPT"})
    shown = plain(entry_parts(compaction), open_folds=False)
    assert "PROMPT" not in shown and "prompt text (6 chars" in shown


# ---- wrong types, hostile text, huge values ----------------------------------------------------------------

WRONG: list[tuple[str, Any, str]] = [
    ("sections a list", system(sections=["a"]), 'sections: ["a"]'),
    ("section value a number", system(sections={"a": 5}), "section a: not a string: 5"),
    ("toolsAdded a string", system(toolsAdded="read"), "toolsAdded: read"),
    ("tool not an object", system(toolsAdded=[7]), "tool of the wrong type: 7"),
    ("tool without fields", system(toolsAdded=[{}]), "tool"),
    ("toolsRemoved of numbers", system(toolsRemoved=[1, {"name": 2}]), "tools removed (2): 1, 2"),
    ("toolsRemoved a dict", system(toolsRemoved={"a": 1}), 'toolsRemoved: {"a":1}'),
    ("content a number", system(content=3), "content is a int"),
    ("usage a string", entry("usage", "u", None, usage="lots"), "usage: lots"),
    ("usage entry bare", entry("usage", "u", None), "usage · null"),
    ("durationMs a string", msg_entry({"role": "assistant", "content": [], "durationMs": "slow"}), "durationMs: slow"),
    ("nestedCalls a list", msg_entry({"role": "toolResult", "nestedCalls": [1]}), "nestedCalls:"),
    ("nested call not a dict", msg_entry({"role": "toolResult", "nestedCalls": {"calls": [3]}}), "nested calls (1)"),
    ("edit target a list", entry("context_edit", "e", None, targetId=[1], replacement=None), "omits [1]"),
    (
        "edit replacement content wrong",
        entry("context_edit", "e", None, replacement={"content": 5}),
        "content is a int",
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_types_are_shown_not_fatal(name: str, obj: Any, expected: str) -> None:
    assert expected in plain(entry_parts(obj), width=200)
    token_text(obj)


def _hostile() -> list[tuple[str, Any]]:
    h = HOSTILE
    tool = {"name": h, "description": h, "parameters": {h: h}, h: h}
    return [
        ("system", system(content=h, sections={h: h, "x": None}, toolsAdded=[tool], toolsRemoved=[{"name": h}], y=h)),
        ("usage", entry("usage", "u", None, kind=h, provider=h, model=h, note=h, usage={"input": h})),
        ("edit", entry("context_edit", "e", None, targetId=h, replacement={"content": h, h: h})),
        ("checkpoint", entry("compaction", "c", None, systemMessage={"content": h, "sections": {h: h}})),
        (
            "assistant fields",
            msg_entry({"role": "assistant", "content": [], "responseModel": h, "thinkingLevel": h, "durationMs": h}),
        ),
        (
            "nested calls",
            msg_entry(
                {
                    "role": "toolResult",
                    "nestedCalls": {"calls": [{"name": h, "status": h, "arguments": {h: h}, "error": h}]},
                }
            ),
        ),
        ("bash", msg_entry({"role": "bashExecution", "command": "x", "fullOutputPath": h})),
    ]


@pytest.mark.parametrize(("name", "obj"), _hostile(), ids=[h[0] for h in _hostile()])
def test_hostile_text_is_shown_visibly_and_never_reaches_the_terminal(name: str, obj: Any) -> None:
    parts = entry_parts(obj)
    out = terminal_output(parts)
    for bad in ("\x1b]", "\x1b[2J", "\x07", "\x9b", "\x9d", "\x9c", "\u202e", "\u200b", "\r", "\x08"):
        assert bad not in out, f"{name}: {bad!r} reached the terminal"
    assert links(parts) == []
    text = plain(parts, width=600)
    assert "␛]52;c;SGVsbG8=␇" in text
    assert "[bold red]G[/]" in text, f"{name}: markup was interpreted"


def test_huge_system_message_stays_bounded() -> None:
    big = "x" * (MAX_CHARS * 3)
    sections = {f"s{i}": "v" for i in range(LIST_MAX + 50)} | {"big": big}
    tools = [{"name": f"t{i}", "description": "d", "parameters": {"p": big}} for i in range(LIST_MAX + 5)]
    parts = entry_parts(system(content=big, sections=sections, toolsAdded=tools))
    text = plain(parts, open_folds=False, width=200)
    assert "… 51 more sections not shown" in text and "… 5 more tools not shown" in text
    assert len(text) < 200_000
    assert sum(len(p.text.plain) if isinstance(p, GoTo) else 0 for p in parts) == 0
    for fold in folds(parts):
        assert sum(len(getattr(b, "plain", "")) for b in fold.body) <= MAX_CHARS + 200


@st.composite
def pi1_entries(draw: st.DrawFn) -> dict[str, Any]:
    from tests.unit.test_render import json_values

    keys = ["content", "sections", "toolsAdded", "toolsRemoved", "usage", "nestedCalls", "durationMs"]
    keys += ["responseModel", "kind", "targetId", "replacement", "systemMessage", "firstKeptEntryId", "note"]
    fields = draw(st.dictionaries(st.sampled_from(keys), json_values, max_size=6))
    kind = draw(st.sampled_from(["system", "toolResult", "assistant", "usage", "context_edit", "compaction"]))
    if kind in ("system", "toolResult", "assistant"):
        return msg_entry({"role": kind, **fields})
    return {"type": kind, "id": "x", **fields}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pi1_entries())
def test_any_field_types_render(obj: dict[str, Any]) -> None:
    parts = entry_parts(obj)
    assert parts
    plain(parts)
    token_text(obj)


# ---- system prompt text and Pi's estimate ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("msg", "text", "tokens"),
    [
        # SPEC-pi1 C13
        (
            {"content": "abcd", "sections": {"a": "12345678", "b": None}, "toolsAdded": [{"name": "r"}]},
            "abcd\n\n12345678",
            7,
        ),
        ({"content": "X", "sections": {"b": "B", "2": "two", "1": "one"}}, "X\n\none\n\ntwo\n\nB", 2),
        ({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, "a\nb", 1),
        ({"content": None, "sections": {"a": ""}}, "", 0),
        ({"content": "😀😀"}, "😀😀", 1),  # 4 UTF-16 units
        ({"content": [{"type": "image", "data": "x"}]}, "", 1200),
        ({"content": "", "toolsAdded": []}, "", 1),  # [] is truthy in JS: "[]" counts 2 chars
    ],
)
def test_system_text_and_estimate(msg: dict[str, Any], text: str, tokens: int) -> None:
    assert system_text(msg) == text
    assert system_estimate(msg) == tokens


def test_js_items_puts_integer_keys_first() -> None:
    assert [k for k, _ in js_items({"b": 1, "10": 2, "01": 3, "2": 4, "4294967295": 5})] == [
        "2",
        "10",
        "b",
        "01",
        "4294967295",
    ]
    # digits JavaScript does not read as an index (and `int` cannot read `²`): keys like any other
    assert [k for k, _ in js_items({"²": 1, "١": 2, "3": 3})] == ["3", "²", "١"]


def test_token_text_of_a_system_message_has_prompt_and_tools() -> None:
    text = token_text(system(content="C", sections={"a": "A"}, toolsAdded=[{"name": "r"}]))
    assert text == 'C\n\nA\n[{"name":"r"}]'


# ---- context edits with a tree and the active path ---------------------------------------------------------


@pytest.fixture
def edited(tmp_path: Path) -> Path:
    entries = [
        user("u1", None, "fix the parser"),
        assistant("a1", "u1", "done"),
        entry("context_edit", "e1", "a1", targetId="u1", replacement=None),
        entry("context_edit", "e2", "e1", targetId="a1", replacement={"content": "short"}),
        entry("context_edit", "e3", "e2", targetId="a1", replacement={"content": "shorter"}),
        entry("context_edit", "e4", "e3", targetId="gone", replacement=None),
        user("u2", "e4", "next"),
    ]
    return write_session_file(tmp_path / "s.jsonl", entries)


def test_context_edit_names_its_target_and_status(edited: Path) -> None:
    tree, _ = load_session(edited)
    reader = EntryReader(edited, tree)
    edits = path_edits(tree.active_path(), reader.entries)
    shown = {}
    for eid in ("e1", "e2", "e3", "e4"):
        node = tree.get(eid)
        assert node is not None
        parts = entry_parts(reader.entry(node), tree, edits)
        shown[eid] = (plain(parts, width=200), [p.entry_id for p in parts if isinstance(p, GoTo)])
    assert "→ u1  line 2  user: fix the parser" in shown["e1"][0]
    assert "in effect on the active path" in shown["e1"][0] and shown["e1"][1] == ["u1"]
    assert "superseded on the active path by edit e3" in shown["e2"][0] and shown["e2"][1] == ["a1", "e3"]
    assert "shorter" in shown["e3"][0]
    assert "target gone: not in this session" in shown["e4"][0] and shown["e4"][1] == []
    assert "not on the active path" in plain(
        entry_parts(reader.entry(tree.get("e1")), tree, path_edits([], reader.entries))
    )


def test_edited_entries_get_a_note_linking_the_edit(edited: Path) -> None:
    tree, _ = load_session(edited)
    edits = path_edits(tree.active_path(), EntryReader(edited, tree).entries)
    notes = {eid: edit_note(tree.get(eid), edits) for eid in ("u1", "a1", "u2")}  # type: ignore[arg-type]
    assert notes["u2"] is None
    assert notes["u1"] is not None and notes["u1"].entry_id == "e1"
    assert notes["u1"].text.plain.startswith("omitted from context by edit e1")
    assert notes["a1"] is not None and notes["a1"].entry_id == "e3"
    assert notes["a1"].text.plain.startswith("content replaced by edit e3")


def test_huge_names_and_ids_are_cut() -> None:
    big = "n" * 1_000_000
    objs = [
        system(sections={big: "v", "x": 5 * [big]}, toolsAdded=[{"name": big}, [big]], toolsRemoved=[{"name": big}]),
        entry("usage", "u", None, kind=big, provider=big, model=big, note=big),
        entry("context_edit", "e", None, targetId=big, replacement=None),
        msg_entry({"role": "toolResult", "nestedCalls": {"calls": [{"name": big, "status": big, "error": big}, big]}}),
        msg_entry({"role": "assistant", "content": [], "model": big, "responseModel": big, "thinkingLevel": big}),
    ]
    for obj in objs:
        parts = entry_parts(obj)
        shown = sum(len(p.plain) for p in parts if isinstance(p, Text)) + sum(
            len(f.label.plain) for f in folds(parts) if f.label is not None
        )
        assert shown < 40_000, (obj["type"], shown)
        assert "more characters" in plain(parts, open_folds=False, width=300)


def test_header_colours_a_deferred_stop(tmp_path: Path) -> None:
    from pitree.widgets.render.entry_header import header

    path = write_session_file(tmp_path / "s.jsonl", [assistant("a1", None, stop="deferred")])
    tree, _ = load_session(path)
    head = header(tree.get("a1"), tree, stop_reason="deferred")  # type: ignore[arg-type]
    (span,) = [s for s in head.spans if head.plain[s.start : s.end] == "deferred"]
    assert str(span.style) == "yellow"
