"""Context at a leaf (Pi's buildSessionContext) and branch-summary preparation (Pi's rules)."""

from __future__ import annotations

import pytest
from pitree.session.context import build_context
from pitree.session.load import load_bytes
from pitree.summary.prepare import (
    BRANCH_SUMMARY_PREAMBLE,
    FileOps,
    build_prompt_text,
    collect_for_summary,
    finish_summary,
    prepare_branch_entries,
    serialize_conversation,
)

from tests.sessions import assistant, entry, to_bytes, tool_result, user


def roles(ctx) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(m.role, m.node.id) for m in ctx.messages]


def test_context_without_compaction_and_settings() -> None:
    entries = [
        user("u1", None),
        entry("model_change", "m", "u1", provider="openai", modelId="gpt"),
        entry("thinking_level_change", "t", "m", thinkingLevel="high"),
        assistant("a1", "t"),
        entry("custom", "c", "a1", customType="x", data={}),
        entry("custom_message", "cm", "c", customType="note", content="hello", display=False),
        entry("branch_summary", "b0", "cm", fromId="zz", summary=""),
        entry("branch_summary", "b1", "b0", fromId="zz", summary="went elsewhere"),
        entry("label", "l", "b1", targetId="u1", label="x"),
    ]
    ctx = build_context(load_bytes(to_bytes(entries)), None)
    assert roles(ctx) == [("user", "u1"), ("assistant", "a1"), ("custom", "cm"), ("branchSummary", "b1")]
    assert ctx.model == {"provider": "anthropic", "modelId": "claude"}  # the assistant after the model change
    assert ctx.thinking_level == "high"


def compaction_session(first_kept: str) -> list[dict]:
    return [
        user("u1", None, "x" * 400),
        assistant("a1", "u1", "y" * 40),
        user("u2", "a1", "keep me"),
        assistant("a2", "u2"),
        entry("compaction", "c1", "a2", summary="S" * 80, firstKeptEntryId=first_kept, tokensBefore=5000),
        user("u3", "c1"),
        assistant("a3", "u3"),
    ]


@pytest.mark.parametrize(
    ("first_kept", "expected"),
    [
        ("u2", [("compactionSummary", "c1"), ("user", "u2"), ("assistant", "a2"), ("user", "u3"), ("assistant", "a3")]),
        (
            "u1",
            [
                ("compactionSummary", "c1"),
                ("user", "u1"),
                ("assistant", "a1"),
                ("user", "u2"),
                ("assistant", "a2"),
                ("user", "u3"),
                ("assistant", "a3"),
            ],
        ),
        ("nowhere", [("compactionSummary", "c1"), ("user", "u3"), ("assistant", "a3")]),
    ],
)
def test_context_with_compaction(first_kept: str, expected: list) -> None:
    tree = load_bytes(to_bytes(compaction_session(first_kept)))
    ctx = build_context(tree, None)
    assert roles(ctx) == expected
    assert ctx.messages[0].tokens == 20  # 80 chars / 4


def test_only_last_compaction_counts_and_leaf_choice() -> None:
    entries = [
        *compaction_session("u2"),
        entry("compaction", "c2", "a3", summary="T", firstKeptEntryId="u3", tokensBefore=9000),
        user("u4", "c2"),
    ]
    tree = load_bytes(to_bytes(entries))
    assert roles(build_context(tree, None)) == [
        ("compactionSummary", "c2"),
        ("user", "u3"),
        ("assistant", "a3"),
        ("user", "u4"),
    ]
    assert roles(build_context(tree, tree.get("a1"))) == [("user", "u1"), ("assistant", "a1")]


def test_estimates_follow_pi() -> None:
    e = [
        user("u", None, "abcd" * 10),
        assistant("a", "u", "ab", calls=[("t", "read", {"path": "p"})]),
        {
            **tool_result("r", "a", "t"),
            "message": {
                "role": "toolResult",
                "toolCallId": "t",
                "toolName": "read",
                "content": [{"type": "image", "data": "xx", "mimeType": "x"}],
            },
        },
        {
            "type": "message",
            "id": "b",
            "parentId": "r",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 0},
        },
    ]
    tree = load_bytes(to_bytes(e))
    # user: 40/4; assistant: (2 + len("read") + len('{"path":"p"}')) / 4 rounded up; image 4800/4; bash (2+3)/4
    assert [n.est for n in tree.nodes] == [10, 5, 1200, 2]


def branch_session() -> list[dict]:
    return [
        user("u1", None),
        assistant("a1", "u1"),
        user("x1", "a1", "try A"),
        assistant("x2", "x1", "doing A", calls=[("t1", "read", {"path": "r.py"}), ("t2", "edit", {"path": "e.py"})]),
        tool_result("x3", "x2", "t1", text="R" * 3000),
        entry(
            "branch_summary",
            "x4",
            "x3",
            fromId="q",
            summary="older",
            details={"readFiles": ["old.py"], "modifiedFiles": ["m.py"]},
        ),
        assistant("x5", "x4", "A done", calls=[("t3", "write", {"path": "w.py"}), ("t4", "read", {"path": "e.py"})]),
        user("y1", "a1", "try B"),
    ]


def test_collect_goes_to_common_ancestor() -> None:
    tree = load_bytes(to_bytes(branch_session()))
    nodes, ancestor = collect_for_summary(tree, tree.get("x5"), tree.get("y1"))
    assert ancestor.id == "a1" and [n.id for n in nodes] == ["x1", "x2", "x3", "x4", "x5"]
    assert collect_for_summary(tree, None, tree.get("y1")) == ([], None)
    nodes, ancestor = collect_for_summary(tree, tree.get("x5"), tree.get("x3"))
    assert ancestor.id == "x3" and [n.id for n in nodes] == ["x4", "x5"]


def raw_entries(tree, nodes) -> list[dict]:  # type: ignore[no-untyped-def]
    by = {e["id"]: e for e in branch_session()}
    return [by[n.id] for n in nodes]


def test_prepare_file_ops_and_messages() -> None:
    tree = load_bytes(to_bytes(branch_session()))
    nodes, _ = collect_for_summary(tree, tree.get("x5"), tree.get("y1"))
    prep = prepare_branch_entries(raw_entries(tree, nodes))
    assert [m["role"] for m in prep.messages] == ["user", "assistant", "branchSummary", "assistant"]  # no toolResult
    read, modified = prep.file_ops.lists()
    assert read == ["old.py", "r.py"] and modified == ["e.py", "m.py", "w.py"]


def test_prepare_budget_and_summary_exception() -> None:
    entries = [
        entry("compaction", "c", None, summary="S" * 360, tokensBefore=1),  # 90 tokens
        user("u1", "c", "u" * 400),  # 100 tokens
        user("u2", "u1", "v" * 400),  # 100 tokens
    ]
    assert [m["role"] for m in prepare_branch_entries(entries, 150).messages] == ["user"]
    # Under 90% of the budget a summary is still taken even though it overflows the budget.
    assert [m["role"] for m in prepare_branch_entries(entries, 250).messages] == ["compactionSummary", "user", "user"]
    assert [m["role"] for m in prepare_branch_entries(entries[1:], 150).messages] == ["user"]
    assert prepare_branch_entries(entries, 0).total_tokens == 290


def test_from_hook_details_are_ignored() -> None:
    e = [entry("branch_summary", "b", None, summary="s", fromHook=True, details={"readFiles": ["h.py"]})]
    assert prepare_branch_entries(e).file_ops.lists() == ([], [])


def test_serialize_conversation_matches_pi() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": " there"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "ok"},
                {"type": "toolCall", "name": "bash", "arguments": {"command": "ls -la", "timeout": 5}},
                {"type": "toolCall", "name": "read", "arguments": {"path": "a.py"}},
            ],
        },
        {"role": "toolResult", "content": [{"type": "text", "text": "z" * 2100}]},
        {"role": "user", "content": ""},
    ]
    out = serialize_conversation(messages)
    assert out.split("\n\n")[:3] == [
        "[User]: hello there",
        "[Assistant]: ok",
        '[Assistant tool calls]: bash(command="ls -la", timeout=5); read(path="a.py")',
    ]
    assert out.endswith("z" * 2000 + "\n\n[... 100 more characters truncated]")


@pytest.mark.parametrize(
    ("instructions", "replace", "tail"),
    [
        (None, False, "Keep each section concise. Preserve exact file paths, function names, and error messages."),
        ("focus on tests", False, "\n\nAdditional focus: focus on tests"),
        ("only this", True, "</conversation>\n\nonly this"),
    ],
)
def test_prompt_text(instructions: str | None, replace: bool, tail: str) -> None:
    prep = prepare_branch_entries([user("u", None, "hi")])
    text = build_prompt_text(prep, instructions, replace)
    assert text.startswith("<conversation>\n[User]: hi\n</conversation>\n\n") and text.endswith(tail)


def test_finish_summary_wraps_like_pi() -> None:
    ops = FileOps(read={"a", "b"}, edited={"b"}, written={"c"})
    text, read, modified = finish_summary("## Goal\nx", ops)
    assert (
        text
        == BRANCH_SUMMARY_PREAMBLE
        + "## Goal\nx\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nb\nc\n</modified-files>"
    )
    assert (read, modified) == (["a"], ["b", "c"])


def _long_branch(seed: int, n: int) -> list[dict]:
    """A chain of replies, tool calls and results, branch summaries with file lists and context edits."""
    import random

    rng = random.Random(seed)
    out: list[dict] = [user("e0", None, "start", t=0)]
    for i in range(1, n):
        eid, parent, kind = f"e{i}", f"e{i - 1}", rng.random()
        if kind < 0.35:
            out.append(user(eid, parent, "u" * rng.randint(0, 400), t=i))
        elif kind < 0.7:
            path = f"src/f{rng.randint(0, 9)}.py"
            calls = (("c" + eid, rng.choice(["read", "edit", "write"]), {"path": path}),) if kind < 0.55 else ()
            out.append(assistant(eid, parent, "a" * rng.randint(0, 600), t=i, calls=calls))
        elif kind < 0.85:
            out.append(tool_result(eid, parent, f"ce{i - 1}", text="r" * rng.randint(0, 300), t=i))
        elif kind < 0.93:
            details = {"readFiles": [f"old/r{i}.py"], "modifiedFiles": [f"old/m{i}.py"]}
            out.append(entry("branch_summary", eid, parent, t=i, fromId=parent, summary="s" * 50, details=details))
        else:
            target = f"e{rng.randint(0, i - 1)}"
            replacement = None if rng.random() < 0.5 else {"content": "edited " + "z" * rng.randint(0, 200)}
            out.append(entry("context_edit", eid, parent, t=i, targetId=target, replacement=replacement))
    return out


@pytest.mark.parametrize("budget", [0, 1, 300, 5_000, 40_000, 10**9])
@pytest.mark.parametrize("first", [3, 64, 4096])
def test_a_budgeted_branch_is_prepared_from_its_newest_entries_as_from_all(
    budget: int, first: int, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """`prepare_branch_tail` reads the branch summaries and context edits, then the newest entries in tails that
    grow: what it prepares is what Pi's prepareBranchEntries makes of every entry, and it reads fewer of them
    when the budget stops the walk early."""
    from pitree.store.session_file import EntryReader
    from pitree.summary import prepare

    monkeypatch.setattr(prepare, "TAIL_FIRST", first)
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(_long_branch(budget + first, 1_500)))
    tree = load_bytes(path.read_bytes())
    nodes = tree.active_path()[1:]  # what a jump from the leaf to the root leaves
    reader = EntryReader(path, tree)
    asked: list[int] = []

    def read(some):  # type: ignore[no-untyped-def]
        asked.append(len(some))
        return reader.entries(some)

    entries, got = prepare.prepare_branch_tail(nodes, read, budget)
    want = prepare.prepare_branch_entries(reader.entries(nodes), budget)
    assert got.messages == want.messages and got.total_tokens == want.total_tokens
    assert (got.file_ops.read, got.file_ops.written, got.file_ops.edited) == (
        want.file_ops.read, want.file_ops.written, want.file_ops.edited
    )
    assert got.entry_count == want.entry_count == len(nodes)
    assert [e["id"] for e in entries] == sorted((e["id"] for e in entries), key=lambda x: int(x[1:]))
    if 0 < budget <= 5_000 and first == 64:
        assert asked[-1] < len(nodes) // 2  # the walk stopped in a tail: most of the branch never read
    if budget in (0, 10**9):
        assert asked[-1] == len(nodes)
