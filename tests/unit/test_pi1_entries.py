"""Pi 1.x entries and fields in pitree's nodes: rows, filters and search as Pi 1.6's tree shows them (SPEC-pi1
A2, A6), Pi 1.6's estimates (A4, test case 13), the session name (case 14) and null content (case 15)."""

from __future__ import annotations

from typing import Any

import pytest
from pitree.session.entries import ALWAYS_HIDDEN
from pitree.session.estimate import SystemHead, estimate_message_tokens, system_facts
from pitree.session.layout import FILTERS, build_layout
from pitree.session.load import load_bytes
from pitree.session.tree import SessionTree

from tests.sessions import assistant, entry, message, to_bytes, user


def tree_of(entries: list[dict[str, Any]]) -> SessionTree:
    return load_bytes(to_bytes(entries))


USAGE = {"input": 0, "output": 0, "cacheRead": 5, "cacheWrite": 0, "totalTokens": 5, "cost": {"total": 0.01}}


@pytest.mark.parametrize(
    ("made", "row"),
    [
        (message("x", None, "system", content="", sections={"a": "b"}), "[system]"),
        (entry("context_edit", "x", None, targetId="u1", replacement=None), "[context omit: u1]"),
        (entry("context_edit", "x", None, targetId="u1", replacement={"content": "v"}), "[context replace: u1]"),
        (entry("session_info", "x", None, name="A name"), "[title: A name]"),
        (entry("session_info", "x", None, name=""), "[title: empty]"),
        (entry("session_info", "x", None), "[title: empty]"),
        (entry("label", "x", None, targetId="u1", label=None), "[label: (cleared)]"),
        (entry("label", "x", None, targetId="u1"), "[label: (cleared)]"),
        (entry("usage", "x", None, kind="cache_warm", provider="p", model="m", usage=USAGE), "[usage: cache_warm]"),
        (assistant("x", None, "", stop="deferred"), "assistant: (no content)"),
        (message("x", None, "user", content=None), "user: "),
        (message("x", None, "assistant", content=None, stopReason="stop"), "assistant: (no content)"),
    ],
)
def test_pi1_row_texts(made: dict[str, Any], row: str) -> None:
    tree = tree_of([made])
    assert tree.row_text(tree.get("x")) == row  # type: ignore[arg-type]


def test_filters_hide_what_pi_16_hides() -> None:
    """usage: hidden under every filter, even as the leaf; context_edit and session_info: shown only by "all";
    an assistant with no text shows when its stopReason is neither stop nor toolUse (deferred here)."""
    entries = [
        user("u1", None),
        assistant("a1", "u1", "", stop="deferred"),
        assistant("a2", "a1", "", stop="toolUse"),
        entry("context_edit", "e1", "a2", targetId="u1", replacement=None),
        entry("session_info", "s1", "e1", name="n"),
        entry("usage", "k1", "s1", kind="cache_warm", provider="p", model="m", usage=USAGE),
    ]
    tree = tree_of(entries)
    assert tree.get("k1").flags & ALWAYS_HIDDEN  # type: ignore[union-attr]
    shown = {mode: [n.id for n in build_layout(tree, mode).rows.iter_nodes()] for mode in FILTERS}
    assert shown["default"] == shown["no-tools"] == ["u1", "a1"]
    assert shown["all"] == ["u1", "a1", "e1", "s1"]
    assert shown["user-only"] == ["u1"] and shown["labeled-only"] == []


@pytest.mark.parametrize(
    ("made", "query", "hit"),
    [
        (entry("context_edit", "x", None, targetId="abc123", replacement=None), "context edit omit abc123", True),
        (entry("context_edit", "x", None, targetId="abc123", replacement={"content": ""}), "edit replace abc", True),
        (entry("context_edit", "x", None, targetId="abc123", replacement=None), "replace", False),
        (entry("session_info", "x", None, name="Weather CLI"), "title weather", True),
        (message("x", None, "system", content=""), "system", True),
    ],
)
def test_pi1_entries_are_searchable(made: dict[str, Any], query: str, hit: bool) -> None:
    tree = tree_of([made])
    assert (tree.search_index.matching(query.split()).flags[0] == 1) is hit


def test_case_13_estimates() -> None:
    system = {
        "role": "system",
        "content": "abcd",
        "sections": {"a": "12345678", "b": None},
        "toolsAdded": [{"name": "r"}],
    }
    assert estimate_message_tokens("system", system) == 7  # (4 + 8 + 12) / 4
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    assert estimate_message_tokens("user", {"content": [image, {"type": "text", "text": "abc"}]}) == 1201
    tree = tree_of(
        [
            message("s", None, "system", **{k: v for k, v in system.items() if k != "role"}),
            message("u", "s", "user", content=[image, {"type": "text", "text": "abc"}]),
        ]
    )
    assert [tree.get("s").est, tree.get("u").est] == [7, 1201]  # type: ignore[union-attr]
    # an assistant's images are not counted
    assert estimate_message_tokens("assistant", {"content": [image, {"type": "text", "text": "abcd"}]}) == 1
    # Pi tests toolsAdded by JavaScript's truth: an empty list still adds JSON.stringify([]), 2 characters
    assert estimate_message_tokens("system", {"content": "", "toolsAdded": []}) == 1
    assert estimate_message_tokens("system", {"content": "", "toolsAdded": None}) == 0


def test_case_1_system_head_estimate() -> None:
    """Case 1's head {content:"X", sections{preamble:"P",skills:"K"}} with no tools: X + P + K and the blank
    line that joins contents (only one content here)."""
    s1 = {"content": "", "sections": {"preamble": "P", "cwd": "C"}, "toolsAdded": [{"name": "read"}], "timestamp": 1}
    s2 = {"content": "X", "sections": {"cwd": None, "skills": "K"}, "toolsRemoved": [{"name": "read"}], "timestamp": 2}
    head = SystemHead()
    head.add(system_facts(s1))
    head.add(system_facts(s2))
    assert head.sections == {"preamble": 1, "skills": 1} and head.tools == {}
    assert head.tokens == 1  # ceil(3 / 4)
    head.add(system_facts({"content": "YY", "timestamp": 3}))
    assert head.content_chars == 1 + 2 + 2  # "X\n\nYY"


def test_case_14_name_clear() -> None:
    tree = tree_of([entry("session_info", "a", None, name="A"), entry("session_info", "b", "a", name="")])
    assert tree.name is None
    tree = tree_of([entry("session_info", "a", None, name="A"), entry("session_info", "b", "a", name="  ")])
    assert tree.name is None


def test_case_15_null_content_reads() -> None:
    tree = tree_of(
        [
            message("u", None, "user", content=None),
            message("s", "u", "system", content=None),
            message("a", "s", "assistant", content=None, stopReason="stop"),
            message("t", "a", "toolResult", content=None, toolCallId="c", toolName="read"),
        ]
    )
    assert [n.est for n in tree.nodes] == [0, 0, 0, 0]


def test_usage_of_every_source_is_kept() -> None:
    entries = [
        user("u1", None),
        message("t1", "u1", "toolResult", content="x", toolCallId="c", toolName="t", usage={"cacheWrite": 3}),
        entry("compaction", "c1", "t1", summary="s", firstKeptEntryId="c1", tokensBefore=9, usage={"input": 100}),
        entry("branch_summary", "b1", "c1", fromId="root", summary="b", usage={"output": 7}),
        entry("usage", "k1", "b1", kind="cache_warm", provider="p", model="m", usage=USAGE),
        assistant("a1", "k1", "hi", responseModel="m-2026"),
    ]
    tree = tree_of(entries)
    assert tree.get("t1").usage == (0.0, 0.0, 0.0, 3, 0.0, 0.0)  # type: ignore[union-attr]
    assert tree.get("c1").usage[0] == 100 and tree.get("b1").usage[1] == 7  # type: ignore[index,union-attr]
    assert tree.get("k1").usage[2] == 5 and tree.get("k1").model == ("p", "m")  # type: ignore[index,union-attr]
    assert tree.get("a1").meta == {"responseModel": "m-2026"}  # type: ignore[union-attr]
    assert tree.get("u1").usage is None  # type: ignore[union-attr]


# ---- totals (SPEC-pi1 A5) ------------------------------------------------------------------------------------


def test_case_5_usage_entry() -> None:
    """A usage entry: no context message, tokens +5, cost +0.01, hidden under every filter."""
    from pitree.session.context import build_context
    from pitree.session.usage import usage_report

    u = {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "cost": {"total": 0.5}}
    tree = tree_of(
        [
            user("u1", None),
            assistant("a1", "u1", usage=u),
            entry("usage", "k1", "a1", kind="cache_warm", provider="p", model="m", usage=USAGE),
        ]
    )
    assert [m.node.id for m in build_context(tree, None).messages] == ["u1", "a1"]
    total = usage_report(tree)["total"]
    assert total["totalTokens"] == 10 + 5 and total["cost"] == pytest.approx(0.51)
    assert total["sources"] == {"assistant": 1, "usage": 1}
    assert all("k1" not in [n.id for n in build_layout(tree, mode).rows.iter_nodes()] for mode in FILTERS)


def test_case_9_summary_and_tool_usage_even_on_an_abandoned_branch() -> None:
    from pitree.session.usage import usage_report

    tree = tree_of(
        [
            user("u1", None),
            message("t1", "u1", "toolResult", content="x", toolCallId="c", toolName="t", usage={"cacheWrite": 3}),
            entry("compaction", "c1", "t1", summary="s", firstKeptEntryId="u1", tokensBefore=9, usage={"input": 100}),
            entry("branch_summary", "b1", "u1", fromId="t1", summary="b", usage={"output": 7}, t=2),  # a side branch
            user("u2", "c1", t=3),
        ]
    )
    report = usage_report(tree)
    assert report["total"]["totalTokens"] == 110 and report["total"]["messages"] == 3
    assert list(report["models"]) == ["Tools/summaries"] and report["models"]["Tools/summaries"]["totalTokens"] == 110
    assert report["activePath"]["totalTokens"] == 103  # the branch summary is not on the path to u2


def test_per_model_keys_follow_pi() -> None:
    """assistant: provider/(responseModel ?? model); usage entry: provider/model; usage without totalTokens
    counts its four parts; models with no tokens and no cost are left out; ordered by cost."""
    from pitree.session.usage import usage_report

    four = {"input": 1, "output": 1, "cacheRead": 1, "cacheWrite": 1, "cost": {"total": 0.1}}
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0}}
    tree = tree_of(
        [
            assistant("a1", None, provider="anthropic", model="claude", responseModel="claude-2026", usage=four),
            assistant("a2", "a1", provider="anthropic", model="claude", usage=zero),
            assistant("a3", "a2", provider="openai", model="gpt", usage={**four, "cost": {"total": 1.0}}),
            entry("usage", "k1", "a3", kind="cache_warm", provider="anthropic", model="claude", usage=USAGE),
        ]
    )
    models = usage_report(tree)["models"]
    assert list(models) == ["openai/gpt", "anthropic/claude-2026", "anthropic/claude"]  # a2 adds nothing
    assert [models[k]["totalTokens"] for k in models] == [4, 4, 5]


def test_per_model_keys_keep_values_python_finds_equal_apart() -> None:
    """The keys are made once a kind of entry, model and responseModel: `1` and `true` (equal in Python) are two
    responseModels, as JavaScript prints them; an unhashable one is keyed too."""
    from pitree.session.usage import usage_report

    four = {"input": 1, "output": 1, "cacheRead": 1, "cacheWrite": 1, "cost": {"total": 0.1}}
    tree = tree_of(
        [
            assistant("a1", None, provider="p", model="m", responseModel=1, usage=four),
            assistant("a2", "a1", provider="p", model="m", responseModel=True, usage=four),
            assistant("a3", "a2", provider="p", model="m", responseModel=[1, 2], usage=four),
            assistant("a4", "a3", provider="p", model="m", responseModel=1.0, usage=four),
        ]
    )
    models = usage_report(tree)["models"]
    assert sorted(models) == ["p/1", "p/1,2", "p/true"] and models["p/1"]["messages"] == 2


def test_usage_counts_the_entries_in_the_tree_while_the_tail_places_the_next() -> None:
    """The live tail puts a new line's entry in the tree's columns before it links it into the tree; a usage
    report running in the explorer's thread meanwhile counts the entries in the tree, and never fails."""
    from pitree.session.load import SessionBuilder
    from pitree.session.usage import usage_report

    four = {"input": 1, "output": 1, "cacheRead": 1, "cacheWrite": 1, "cost": {"total": 0.1}}
    builder = SessionBuilder()
    builder.feed(to_bytes([assistant("a1", None, provider="p", model="m", usage=four)]), final=False)
    more = to_bytes([assistant("a2", "a1", provider="p", model="m", usage=four)], with_header=False)
    placed = builder._parse(more, final=False)  # what `feed` does before it links the entries
    assert len(builder.tree.at.usage_end) == len(builder.tree.nodes) + 1  # in the columns, not yet in the tree
    assert usage_report(builder.tree)["total"]["messages"] == 1
    builder.tree.add(placed)
    assert usage_report(builder.tree)["total"]["messages"] == 2
