"""What the model is sent at a leaf: Pi's buildSessionContext over pitree's nodes."""

from __future__ import annotations

from typing import Any

import pytest
from pitree.session.context import SessionContext, build_context, model_label
from pitree.session.load import load_bytes
from pitree.session.tree import SessionTree

from tests.sessions import assistant, entry, fork_session, message, to_bytes, tool_result, user


def tree_of(entries: list[dict[str, Any]], version: int = 3) -> SessionTree:
    return load_bytes(to_bytes(entries, version))


def roles(ctx: SessionContext) -> list[tuple[str, str]]:
    return [(m.role, m.node.id) for m in ctx.messages]


def test_no_compaction_emits_messages_custom_messages_and_branch_summaries() -> None:
    entries = [
        user("u1", None),
        entry("model_change", "m", "u1", provider="openai", modelId="gpt"),
        entry("thinking_level_change", "t", "m", thinkingLevel="high"),
        assistant("a1", "t", calls=(("c1", "read", {"path": "x"}),)),
        tool_result("r1", "a1", "c1"),
        entry("custom", "c", "r1", customType="x", data={}),
        entry("custom_message", "cm", "c", customType="note", content="hello", display=False),
        entry("branch_summary", "b0", "cm", fromId="zz", summary=""),
        entry("branch_summary", "bn", "b0", fromId="zz"),
        entry("branch_summary", "b1", "bn", fromId="zz", summary="went elsewhere"),
        entry("label", "l", "b1", targetId="u1", label="x"),
        entry("session_info", "s", "l", name="n"),
        message("bx", "s", "bashExecution", command="ls", output="a b", exitCode=0),
        entry("mystery_type", "q", "bx"),
        message("weird", "q", "somethingNew", content="?"),
    ]
    ctx = build_context(tree_of(entries), None)
    assert roles(ctx) == [
        ("user", "u1"),
        ("assistant", "a1"),
        ("toolResult", "r1"),
        ("custom", "cm"),
        ("branchSummary", "b1"),
        ("bashExecution", "bx"),
        ("somethingNew", "weird"),
    ]
    assert ctx.model == {"provider": "anthropic", "modelId": "claude"}  # the assistant after the model change
    assert ctx.thinking_level == "high" and ctx.compaction is None and ctx.kept_from is None
    assert [n.id for n in ctx.path][0] == "u1" and ctx.leaf is not None and ctx.leaf.id == "weird"


@pytest.mark.parametrize(
    ("entries", "model", "thinking"),
    [
        ([user("u", None)], None, "off"),
        (
            [user("u", None), entry("model_change", "m", "u", provider="openai", modelId="gpt")],
            {"provider": "openai", "modelId": "gpt"},
            "off",
        ),
        (
            [
                user("u", None),
                assistant("a", "u"),
                entry("model_change", "m", "a", provider="openai", modelId="gpt"),
            ],
            {"provider": "openai", "modelId": "gpt"},
            "off",
        ),
        (
            [
                user("u", None),
                entry("thinking_level_change", "t1", "u", thinkingLevel="low"),
                entry("thinking_level_change", "t2", "t1", thinkingLevel="minimal"),
            ],
            None,
            "minimal",
        ),
        (
            [user("u", None), message("a", "u", "assistant", content=[])],
            {"provider": None, "modelId": None},
            "off",
        ),
    ],
)
def test_model_and_thinking_level(entries: list[dict[str, Any]], model: Any, thinking: str) -> None:
    ctx = build_context(tree_of(entries), None)
    assert ctx.model == model and ctx.thinking_level == thinking


def test_model_label() -> None:
    assert model_label(None) == "unknown" and model_label({"provider": "a", "modelId": "b"}) == "a/b"


def compaction_session(first_kept: str | None) -> list[dict[str, Any]]:
    fields: dict[str, Any] = {"summary": "S" * 80, "tokensBefore": 5000}
    if first_kept is not None:
        fields["firstKeptEntryId"] = first_kept
    return [
        user("u1", None, "x" * 400),
        assistant("a1", "u1", "y" * 40),
        entry("model_change", "mc", "a1", provider="openai", modelId="gpt"),
        user("u2", "mc", "keep me"),
        assistant("a2", "u2"),
        entry("compaction", "c1", "a2", **fields),
        user("u3", "c1"),
        assistant("a3", "u3"),
    ]


AFTER = [("user", "u3"), ("assistant", "a3")]


@pytest.mark.parametrize(
    ("first_kept", "expected"),
    [
        ("u2", [("compactionSummary", "c1"), ("user", "u2"), ("assistant", "a2"), *AFTER]),
        (
            "mc",
            [("compactionSummary", "c1"), ("user", "u2"), ("assistant", "a2"), *AFTER],
        ),  # from a non-message
        (
            "u1",
            [
                ("compactionSummary", "c1"),
                ("user", "u1"),
                ("assistant", "a1"),
                ("user", "u2"),
                ("assistant", "a2"),
                *AFTER,
            ],
        ),
        ("c1", [("compactionSummary", "c1"), *AFTER]),  # itself: nothing before
        ("u3", [("compactionSummary", "c1"), *AFTER]),  # after it: nothing before
        ("nowhere", [("compactionSummary", "c1"), *AFTER]),  # not on the path: nothing before
        (None, [("compactionSummary", "c1"), *AFTER]),
    ],
)
def test_one_compaction(first_kept: str | None, expected: list[tuple[str, str]]) -> None:
    tree = tree_of(compaction_session(first_kept))
    ctx = build_context(tree, None)
    assert roles(ctx) == expected
    assert ctx.compaction is tree.get("c1")
    on_path = first_kept in {"u1", "a1", "mc", "u2", "a2"}
    assert (ctx.kept_from is not None) is on_path
    assert ctx.messages[0].tokens == 20  # 80 chars / 4
    assert ctx.tokens == sum(m.tokens for m in ctx.messages)


def test_first_kept_on_another_branch_keeps_nothing() -> None:
    entries = [
        *fork_session(),
        entry("compaction", "c1", "a2", summary="S", firstKeptEntryId="u3", tokensBefore=9),
        user("u9", "c1"),
    ]
    ctx = build_context(tree_of(entries), None)
    assert roles(ctx) == [("compactionSummary", "c1"), ("user", "u9")]


def test_two_compactions_only_the_last_counts() -> None:
    entries = [
        user("u1", None),
        assistant("a1", "u1"),
        entry("compaction", "c1", "a1", summary="first", firstKeptEntryId="a1", tokensBefore=100),
        user("u2", "c1"),
        assistant("a2", "u2"),
        entry("compaction", "c2", "a2", summary="second", firstKeptEntryId="u1", tokensBefore=200),
        user("u3", "c2"),
    ]
    tree = tree_of(entries)
    ctx = build_context(tree, None)
    # c2's kept range starts at u1 and runs through c1, which itself emits nothing.
    assert roles(ctx) == [
        ("compactionSummary", "c2"),
        ("user", "u1"),
        ("assistant", "a1"),
        ("user", "u2"),
        ("assistant", "a2"),
        ("user", "u3"),
    ]
    assert ctx.compaction is tree.get("c2")
    # At a leaf between the two, the first one counts.
    mid = build_context(tree, tree.get("a2"))
    assert roles(mid) == [
        ("compactionSummary", "c1"),
        ("assistant", "a1"),
        ("user", "u2"),
        ("assistant", "a2"),
    ]


def test_context_at_another_leaf_follows_that_path() -> None:
    tree = tree_of(fork_session())
    assert roles(build_context(tree, tree.get("a3"))) == [
        ("user", "u1"),
        ("assistant", "a1"),
        ("user", "u3"),
        ("assistant", "a3"),
    ]
    assert roles(build_context(tree, tree.get("u1"))) == [("user", "u1")]


def test_default_leaf_is_the_last_entry_and_an_empty_session_has_no_context() -> None:
    tree = tree_of(fork_session())
    assert build_context(tree, None).leaf is tree.get("a2")  # Pi's fallback: the last entry
    empty = build_context(load_bytes(to_bytes([])), None)
    assert empty.leaf is None and empty.path == [] and empty.messages == []
    assert empty.model is None and empty.thinking_level == "off" and empty.tokens == 0


def test_excluded_bash_is_listed_but_not_counted() -> None:
    entries = [
        user("u", None, "abcd"),
        message("b", "u", "bashExecution", command="ls", output="xxxxxx", exitCode=0, excludeFromContext=True),
    ]
    ctx = build_context(tree_of(entries), None)
    assert [m.excluded for m in ctx.messages] == [False, True]
    assert ctx.messages[1].tokens == 2 and ctx.tokens == 1


def test_v2_hook_message_is_a_custom_message_in_context() -> None:
    entries = [user("u", None), message("h", "u", "hookMessage", customType="x", content="hi", display=True)]
    ctx = build_context(tree_of(entries, version=2), None)
    assert roles(ctx) == [("user", "u"), ("custom", "h")]


@pytest.mark.parametrize(
    ("msg", "tokens"),
    [
        (user("e", None, "a" * 9), 3),  # ceil(9 / 4)
        (user("e", None, "a" * 8, blocks=False), 2),
        (user("e", None, "€" * 4), 1),
        (user("e", None, "😀" * 4), 2),  # JavaScript counts UTF-16 units: 8
        (assistant("e", None, "a" * 4, thinking="b" * 4, calls=(("c", "read", {"p": 1}),)), 5),  # 4+4+4+7=19
        (
            message("e", None, "toolResult", content=[{"type": "text", "text": "abcd"}, {"type": "image"}]),
            1201,
        ),
        (message("e", None, "bashExecution", command="ab", output="cdefgh"), 2),
        (message("e", None, "unknownRole", content="abcdefgh"), 0),
    ],
)
def test_pi_token_estimate(msg: dict[str, Any], tokens: int) -> None:
    ctx = build_context(tree_of([msg]), None)
    assert ctx.messages[0].tokens == tokens


def test_estimate_reason_says_why_no_usage_sizes_the_context() -> None:
    from pitree.session.context import estimate_reason

    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    tree = load_bytes(
        to_bytes(
            [
                user("u1", None, "q"),
                assistant("a1", "u1", usage=zero),
                user("u2", "a1", "q"),
                assistant("a2", "u2", stop="aborted"),
                user("u3", "a2", "q"),
            ]
        )
    )
    ctx = build_context(tree, None)
    assert ctx.size.usage_node is None
    assert estimate_reason(ctx) == "no valid usage: 2 replies (1 aborted or errored, 1 with zero usage)"
    tree = load_bytes(
        to_bytes(
            [
                user("u1", None, "q"),
                assistant("a1", "u1"),
                entry("context_edit", "e1", "a1", targetId="u1", replacement=None),
                user("u2", "e1", "q"),
            ]
        )
    )
    ctx = build_context(tree, None)
    assert ctx.size.usage_node is None
    assert estimate_reason(ctx) == "the last valid usage (a1) comes before the last context edit or compaction"
    assert estimate_reason(build_context(load_bytes(to_bytes([user("u1", None, "q")])), None)) == (
        "no reply in the context"
    )
