"""Pi 1.6's projection (SPEC-pi1 A3) and context size (A4) over pitree's nodes: the spec's test cases 1-4 and
6-8 and 15, exact values from SPEC-pi1 section C, plus the size rule and the context report's new keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pitree.cli.report import context_report
from pitree.session.context import build_context, grown_size
from pitree.session.load import load_bytes
from pitree.session.system_prompt import current_system_message, system_message_text
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader, load_session

from tests.sessions import assistant, entry, message, to_bytes, user, write_session


def tree_of(entries: list[dict[str, Any]]) -> SessionTree:
    return load_bytes(to_bytes(entries))


def asst(eid: str, parent: str | None, text: str = "yo", **extra: Any) -> dict[str, Any]:
    return assistant(eid, parent, text, provider="p", model="m", **extra)


def system(eid: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return message(eid, parent, "system", **fields)


S1 = {"content": "", "sections": {"preamble": "P", "cwd": "C"}, "toolsAdded": [{"name": "read"}], "timestamp": 1}
S2 = {"content": "X", "sections": {"cwd": None, "skills": "K"}, "toolsRemoved": [{"name": "read"}], "timestamp": 2}
M = {"role": "system", "content": "", "sections": {"preamble": "P"}, "toolsAdded": [{"name": "read"}], "timestamp": 9}

CASE_1 = [system("s1", None, **S1), user("u1", "s1"), asst("a1", "u1"), system("s2", "a1", **S2), user("u2", "s2")]
CASE_2 = [user("u1", None), asst("a1", "u1"), entry("context_edit", "e1", "a1", targetId="u1", replacement=None)]
CASE_3 = [
    user("u1", None, "hello"),
    asst("a1", "u1", "original"),
    entry("context_edit", "e1", "a1", targetId="a1", replacement={"content": "v1"}),
    entry("context_edit", "e2", "e1", targetId="a1", replacement={"content": "v2"}),
    entry("context_edit", "e3", "e2", targetId="u1", replacement={"content": "plain"}),
]
CASE_4 = [user("u1", None), asst("a1", "u1"), entry("context_edit", "e1", "a1", targetId="u1", replacement=None)]
CASE_4 += [user("u3", "a1", t=2)]
CASE_6 = [system("s1", None, **S1), user("u1", "s1"), asst("a1", "u1"), system("s2", "a1", **S2), user("u2", "s2")]
CASE_7 = [user("u0", None), entry("compaction", "c1", "u0", summary="s", firstKeptEntryId="c1", tokensBefore=5)]
CASE_7 += [user("u9", "c1")]
CASE_8 = [user("u1", None), entry("compaction", "c1", "u1", summary="one", firstKeptEntryId="u1", tokensBefore=5)]
CASE_8 += [user("u2", "c1"), entry("compaction", "c2", "u2", summary="two", firstKeptEntryId="u1", tokensBefore=5)]


def compaction(checkpoint: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {"summary": "sum", "firstKeptEntryId": "u1", "tokensBefore": 100}
    if checkpoint:
        fields["systemMessage"] = M
    return entry("compaction", "c", "u2", **fields)


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (CASE_1, [("system", "s1"), ("user", "u1"), ("assistant", "a1"), ("system", "s2"), ("user", "u2")]),
        (CASE_2, [("assistant", "a1")]),
        (CASE_4, [("user", "u1"), ("assistant", "a1"), ("user", "u3")]),  # the edit is on another branch
        (
            CASE_6 + [compaction(True)],
            [("system", "c"), ("compactionSummary", "c"), ("user", "u1"), ("assistant", "a1"), ("user", "u2")],
        ),  # s2 is dropped
        (
            CASE_6 + [compaction(False)],
            [("compactionSummary", "c"), ("user", "u1"), ("assistant", "a1"), ("user", "u2")],
        ),
        (CASE_7, [("compactionSummary", "c1"), ("user", "u9")]),  # retain-none
        (CASE_8, [("compactionSummary", "c2"), ("user", "u1"), ("user", "u2")]),  # c1 contributes nothing
    ],
    ids=[
        "1-system-replay",
        "2-omit",
        "4-other-branch",
        "6-checkpoint",
        "6-no-checkpoint",
        "7-retain-none",
        "8-older-compaction",
    ],
)
def test_projection_cases(entries: list[dict[str, Any]], expected: list[tuple[str, str]]) -> None:
    ctx = build_context(tree_of(entries), None)
    assert [(m.role, m.node.id) for m in ctx.messages] == expected


def test_case_2_omit_is_branch_relative() -> None:
    tree = tree_of(CASE_2 + [user("u3", "a1", t=2)])
    assert [m.node.id for m in build_context(tree, tree.get("e1")).messages] == ["a1"]
    ctx = build_context(tree, tree.get("u3"))
    assert [m.node.id for m in ctx.messages] == ["u1", "a1", "u3"] and ctx.omitted == []
    omitted = build_context(tree, tree.get("e1")).omitted
    assert [(p.node.id, p.edit.id if p.edit else None) for p in omitted] == [("u1", "e1")]


def test_case_3_replace(tmp_path: Path) -> None:
    path = write_session(tmp_path, CASE_3)
    tree, _ = load_session(path)
    ctx = build_context(tree, None)
    a1 = ctx.messages[1]
    assert a1.role == "assistant" and a1.edit is not None and a1.edit.id == "e2" and a1.tokens == 1  # "v2"
    assert ctx.messages[0].edit is not None and ctx.messages[0].edit.id == "e3" and ctx.messages[0].tokens == 2
    report = context_report(tree, EntryReader(path, tree), None)
    assert [m["editedBy"] for m in report["messages"]] == ["e3", "e2"]
    assert [m["sourceEntryId"] for m in report["messages"]] == ["u1", "a1"]
    from pitree.cli.report_context import projected_messages

    projected = projected_messages(EntryReader(path, tree), ctx.messages)
    assert projected[1]["content"] == [{"type": "text", "text": "v2"}]  # role, usage and model unchanged
    assert projected[1]["usage"]["totalTokens"] == 10 and projected[1]["model"] == "m"
    assert projected[0]["content"] == "plain"  # a string stays a string on a user target


def test_case_1_collapsed_head() -> None:
    head = current_system_message([{"role": "system", **S1}, {"role": "user"}, {"role": "system", **S2}])
    assert head == {"role": "system", "content": "X", "sections": {"preamble": "P", "skills": "K"}, "timestamp": 1}
    assert system_message_text(head) == "X\n\nP\n\nK"
    ctx = build_context(tree_of(CASE_1), None)
    assert ctx.head.sections == {"preamble": 1, "skills": 1} and ctx.head.tools == {}
    assert ctx.head.tokens == 1 and [m.node.id for m in ctx.head.sources] == ["s1", "s2"]


def test_case_6_checkpoint_is_the_head_after_compaction() -> None:
    ctx = build_context(tree_of(CASE_6 + [compaction(True)]), None)
    assert [n.id for n in ctx.dropped_system] == ["s2"]  # s1 is before the kept range
    assert ctx.messages[0].checkpoint and [m.node.id for m in ctx.head.sources] == ["c"]
    assert ctx.head.tokens == ctx.messages[0].tokens == 5  # "P" + JSON of [{"name":"read"}] (17) = 18 chars


def test_case_15_null_content_projects() -> None:
    tree = tree_of([message("u", None, "user", content=None), message("s", "u", "system", content=None)])
    ctx = build_context(tree, None)
    assert [(m.role, m.tokens) for m in ctx.messages] == [("user", 0), ("system", 0)]


@pytest.mark.parametrize(
    ("entries", "size", "usage_from"),
    [
        # the last valid usage (totalTokens 10) plus what follows it
        ([user("u1", None, "x" * 40), asst("a1", "u1"), user("u2", "a1", "y" * 8)], 10 + 2, "a1"),
        # an errored reply's usage never counts: the estimate of everything (10 + 1 + 1)
        ([user("u1", None, "x" * 40), asst("a1", "u1", "ab", stop="error")], 10 + 1, None),
        # usage before a later context edit is not trusted
        (
            [
                user("u1", None, "x" * 40),
                asst("a1", "u1", "abcd"),
                entry("context_edit", "e1", "a1", targetId="u1", replacement={"content": "z"}),
            ],
            1 + 1,
            None,
        ),
        # a usage without totalTokens: the sum of its four parts (1 + 2 + 3 + 4)
        (
            [user("u1", None), asst("a1", "u1", usage={"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4})],
            10,
            "a1",
        ),
    ],
)
def test_context_size_rule(entries: list[dict[str, Any]], size: int, usage_from: str | None) -> None:
    ctx = build_context(tree_of(entries), None)
    assert ctx.size.tokens == size
    assert (ctx.size.usage_node.id if ctx.size.usage_node else None) == usage_from


def test_grown_size_follows_build_context() -> None:
    entries = [system("s1", None, **S1), user("u1", "s1", "x" * 40), asst("a1", "u1"), user("u2", "a1", "q" * 12)]
    tree = tree_of(entries)
    start = build_context(tree, tree.get("s1")).size
    nodes = [tree.get(i) for i in ("u1", "a1", "u2")]
    grown = grown_size(start, nodes)  # type: ignore[arg-type]
    assert grown is not None and grown.tokens == build_context(tree, None).size.tokens == 10 + 3
    assert grown_size(start, [tree.get("s1")]) is None  # type: ignore[list-item]  # a system message: again


@pytest.mark.parametrize("batch", [1, 2, 3])
def test_tiktoken_counts_read_in_batches_equal_one_read(tmp_path: Path, monkeypatch: Any, batch: int) -> None:
    """The messages are read from the file a batch at a time (a 1M-entry context held them all at once): the
    counts are those of one read of them all, edits included."""
    from pitree.cli import report_context

    from tests.sessions import tool_turns

    for name, entries in (("edits", CASE_3), ("turns", tool_turns(6))):
        path = write_session(tmp_path, entries, name=f"{name}{batch}.jsonl")
        tree, _ = load_session(path)
        ctx = build_context(tree, None)
        read = report_context.projected_messages(EntryReader(path, tree), ctx.messages)
        whole = [report_context._count(m) for m in read]
        monkeypatch.setattr(report_context, "COUNT_BATCH", batch)
        assert report_context.tiktoken_counts(EntryReader(path, tree), ctx) == whole and len(whole) >= 2
        monkeypatch.undo()
