"""Branch-summary preparation with Pi's rules: what is left behind, the budget, file operations, prompt."""

from __future__ import annotations

from typing import Any

import pytest
from pitree.session.load import load_bytes
from pitree.summary.prepare import (
    BRANCH_SUMMARY_PREAMBLE,
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_PROMPT,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    FileOps,
    Prepared,
    build_prompt_text,
    collect_for_summary,
    convert_to_llm,
    extract_file_ops,
    finish_summary,
    format_file_operations,
    message_of_entry,
    prepare_branch_entries,
    serialize_conversation,
    token_budget,
)

from tests.sessions import assistant, entry, fork_session, message, to_bytes, tool_result, user


def ids(nodes: Any) -> list[str]:
    return [n.id for n in nodes]


# ---- collect_for_summary -----------------------------------------------------------------------------------


def collect_tree() -> Any:
    return load_bytes(
        to_bytes(
            [
                *fork_session(),
                entry("compaction", "c1", "a2", summary="S", firstKeptEntryId="u2", tokensBefore=1),
                user("u4", "c1", "after"),
                user("other-root", None, "x", t=99),
            ]
        )
    )


@pytest.mark.parametrize(
    ("old", "target", "expected", "ancestor"),
    [
        ("u4", "a3", ["u2", "a2", "c1", "u4"], "a1"),  # does not stop at the compaction
        ("u4", "u3", ["u2", "a2", "c1", "u4"], "a1"),
        ("u4", "u1", ["a1", "u2", "a2", "c1", "u4"], "u1"),  # target is an ancestor of the old leaf
        ("u4", "u4", [], "u4"),  # the same entry: nothing left behind
        ("a2", "u4", [], "a2"),  # moving down the same path: nothing left behind
        ("a3", "u4", ["u3", "a3"], "a1"),
        ("u4", "other-root", ["u1", "a1", "u2", "a2", "c1", "u4"], None),  # no common ancestor: all of it
    ],
)
def test_collect_for_summary(old: str, target: str, expected: list[str], ancestor: str | None) -> None:
    tree = collect_tree()
    nodes, common = collect_for_summary(tree, tree.get(old), tree.get(target))
    assert ids(nodes) == expected
    assert (common.id if common else None) == ancestor


def test_collect_without_an_old_leaf() -> None:
    tree = collect_tree()
    assert collect_for_summary(tree, None, tree.get("u1")) == ([], None)


# ---- prepare_branch_entries --------------------------------------------------------------------------------


def test_message_of_entry() -> None:
    assert message_of_entry(tool_result("r", None, "c")) is None
    assert message_of_entry(user("u", None, "hi")) == {
        "role": "user",
        "content": [{"type": "text", "text": "hi"}],
    }
    for etype in ("model_change", "thinking_level_change", "custom", "label", "session_info", "unknown"):
        assert message_of_entry(entry(etype, "x")) is None
    assert message_of_entry(entry("compaction", "c", summary="S", tokensBefore=3)) == {
        "role": "compactionSummary",
        "summary": "S",
        "tokensBefore": 3,
    }
    assert message_of_entry(entry("branch_summary", "b", summary="B", fromId="f")) == {
        "role": "branchSummary",
        "summary": "B",
        "fromId": "f",
    }
    assert message_of_entry(entry("custom_message", "m", customType="t", content="c", display=False)) == {
        "role": "custom",
        "customType": "t",
        "content": "c",
        "display": False,
    }
    assert message_of_entry({"type": "message", "message": "not a dict"}) is None


def roles_of(prepared: Prepared) -> list[str]:
    return [m["role"] for m in prepared.messages]


def test_prepare_skips_tool_results_and_settings_and_keeps_order() -> None:
    entries = [
        user("u", None, "start"),
        assistant("a", "u", "", calls=(("c", "read", {"path": "a.py"}),)),
        tool_result("r", "a", "c"),
        entry("model_change", "m", "r", provider="p", modelId="x"),
        entry("compaction", "k", "m", summary="old stuff", tokensBefore=10),
        entry("branch_summary", "b", "k", summary="elsewhere", fromId="z"),
        entry("custom_message", "cm", "b", customType="t", content="note", display=True),
        entry("label", "l", "cm", targetId="u", label="x"),
    ]
    prepared = prepare_branch_entries(entries)
    assert roles_of(prepared) == ["user", "assistant", "compactionSummary", "branchSummary", "custom"]
    assert prepared.entry_count == len(entries)
    assert prepared.total_tokens == 2 + 5 + 3 + 3 + 1  # ceil(chars / 4): 5, 4 + 15 (name + JSON args), 9, 9, 4


def test_budget_keeps_the_newest() -> None:
    entries = [user("u1", None, "a" * 400), assistant("a1", "u1", "b" * 400), user("u2", "a1", "c" * 40)]
    assert roles_of(prepare_branch_entries(entries, 0)) == ["user", "assistant", "user"]  # 0: no limit
    prepared = prepare_branch_entries(entries, 150)
    assert [m["content"][0]["text"][0] for m in prepared.messages] == [
        "b",
        "c",
    ] and prepared.total_tokens == 110
    assert prepare_branch_entries(entries, 210).total_tokens == 210  # exactly at the budget still fits
    assert prepare_branch_entries(entries, 9).messages == []


@pytest.mark.parametrize(
    ("newest_chars", "kind", "summary_taken"),
    [
        (320, "branch_summary", True),  # 80 tokens < 90% of 100: the summary is still taken
        (356, "branch_summary", True),  # 89 < 90
        (360, "branch_summary", False),  # 90 is not under 90% of 100
        (320, "compaction", True),
        (320, "message", False),  # the 90% rule is for summaries only
    ],
)
def test_budget_90_percent_rule_for_summaries(newest_chars: int, kind: str, summary_taken: bool) -> None:
    if kind == "message":
        older: dict[str, Any] = user("s", None, "s" * 400)
    elif kind == "compaction":
        older = entry("compaction", "s", summary="s" * 400, tokensBefore=1)
    else:
        older = entry("branch_summary", "s", summary="s" * 400, fromId="z")
    entries = [user("first", None, "f" * 4), older, user("n", "s", "n" * newest_chars)]
    prepared = prepare_branch_entries(entries, 100)
    assert len(prepared.messages) == (2 if summary_taken else 1)
    assert prepared.total_tokens == newest_chars // 4 + (100 if summary_taken else 0)
    # Either way the walk stops there: the oldest entry never gets in.
    assert all(m.get("content") != [{"type": "text", "text": "ffff"}] for m in prepared.messages)


def test_file_ops_from_tool_calls() -> None:
    ops = FileOps()
    msg = assistant(
        "a",
        None,
        "",
        calls=(
            ("1", "read", {"path": "r.py"}),
            ("2", "write", {"path": "w.py"}),
            ("3", "edit", {"path": "e.py"}),
            ("4", "read", {"path": 5}),  # not a string
            ("5", "read", {"path": ""}),
            ("6", "read", {"file_path": "other.py"}),  # Pi looks at `path` only
            ("7", "bash", {"path": "b.py"}),
            ("8", "edit", "not a dict"),  # type: ignore[arg-type]
        ),
    )["message"]
    extract_file_ops(msg, ops)
    extract_file_ops(user("u", None)["message"], ops)  # only assistants count
    assert (ops.read, ops.written, ops.edited) == ({"r.py"}, {"w.py"}, {"e.py"})


def test_file_ops_include_earlier_branch_summaries_but_not_hooks() -> None:
    entries = [
        entry(
            "branch_summary",
            "b1",
            None,
            summary="s",
            details={"readFiles": ["old-read.py", 3], "modifiedFiles": ["old-mod.py"]},
        ),
        entry("branch_summary", "b2", "b1", summary="s", fromHook=True, details={"readFiles": ["hook.py"]}),
        entry("branch_summary", "b3", "b2", summary="s", details="not a dict"),
        user("u", "b3", "x" * 4000),  # over the budget, yet its older summary details still count
        assistant("a", "u", "", calls=(("1", "read", {"path": "a.py"}), ("2", "edit", {"path": "old-read.py"}))),
    ]
    prepared = prepare_branch_entries(entries, 50)
    read, modified = prepared.file_ops.lists()
    assert read == ["a.py"] and modified == ["old-mod.py", "old-read.py"]  # read minus modified, sorted


def test_file_ops_stop_with_the_budget_walk() -> None:
    # Pi extracts tool-call file ops while walking newest to oldest, so calls older than the cut are lost.
    entries = [
        assistant("old", None, "", calls=(("1", "read", {"path": "too-old.py"}),)),
        assistant("over", "old", "x" * 400, calls=(("2", "read", {"path": "overflow.py"}),)),
        assistant("new", "over", "", calls=(("3", "write", {"path": "new.py"}),)),
    ]
    ops = prepare_branch_entries(entries, 20).file_ops
    assert ops.read == {"overflow.py"} and ops.written == {"new.py"}


# ---- serialization and the prompt --------------------------------------------------------------------------


def test_convert_to_llm() -> None:
    out = convert_to_llm(
        [
            {"role": "bashExecution", "command": "ls", "output": "a", "exitCode": 1},
            {"role": "bashExecution", "command": "secret", "output": "", "excludeFromContext": True},
            {
                "role": "bashExecution",
                "command": "x",
                "output": "",
                "cancelled": True,
                "truncated": True,
                "fullOutputPath": "/tmp/o",
            },
            {"role": "custom", "content": "note"},
            {"role": "branchSummary", "summary": "B"},
            {"role": "compactionSummary", "summary": "C"},
            {"role": "user", "content": "u"},
            {"role": "somethingElse"},
        ]
    )
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in out]
    assert texts == [
        "Ran `ls`\n```\na\n```\n\nCommand exited with code 1",
        "Ran `x`\n(no output)\n\n(command cancelled)\n\n[Output truncated. Full output: /tmp/o]",
        "note",
        BRANCH_SUMMARY_PREFIX + "B</summary>",
        COMPACTION_SUMMARY_PREFIX + "C" + COMPACTION_SUMMARY_SUFFIX,
        "u",
    ]
    assert {m["role"] for m in out} == {"user"}


def test_serialize_conversation() -> None:
    messages = [
        {"role": "user", "content": "plain"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}],
        },
        {"role": "user", "content": []},  # empty: left out
        assistant(
            None,
            None,
            "answer",
            thinking="hmm",
            calls=(
                ("1", "read", {"path": "x.py", "offset": 3}),
                ("2", "bash", {"command": 'ls "q"'}),
            ),
        )["message"],
        {"role": "assistant", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
        {"role": "toolResult", "content": [{"type": "text", "text": "result"}]},
        {"role": "toolResult", "content": []},
    ]
    pi16 = (
        "[User]: plain\n\n"
        "[User]: ab\n\n"
        "[Assistant]: answer\n\n"
        '[Assistant tool calls]: read(path="x.py", offset=3); bash(command="ls \\"q\\"")\n\n'
        "[Assistant]: one\ntwo\n\n"
        "[Tool result]: result"
    )
    assert serialize_conversation(messages) == pi16  # Pi 1.6 leaves thinking out
    assert serialize_conversation(messages, thinking=True) == pi16.replace(
        "[Assistant]: answer", "[Assistant thinking]: hmm\n\n[Assistant]: answer"
    )


@pytest.mark.parametrize(("length", "cut"), [(1999, 0), (2000, 0), (2001, 1), (5000, 3000)])
def test_tool_results_are_cut_at_2000_chars(length: int, cut: int) -> None:
    text = serialize_conversation([{"role": "toolResult", "content": [{"type": "text", "text": "z" * length}]}])
    body = text.removeprefix("[Tool result]: ")
    if cut:
        assert body == "z" * 2000 + f"\n\n[... {cut} more characters truncated]"
    else:
        assert body == "z" * length


def prepared_of(entries: list[dict[str, Any]]) -> Prepared:
    return prepare_branch_entries(entries)


def test_build_prompt_text_with_and_without_instructions() -> None:
    prepared = prepared_of([user("u", None, "hello"), assistant("a", "u", "hi")])
    conversation = "<conversation>\n[User]: hello\n\n[Assistant]: hi\n</conversation>\n\n"
    assert build_prompt_text(prepared) == conversation + BRANCH_SUMMARY_PROMPT
    assert build_prompt_text(prepared, "the tests") == (
        conversation + BRANCH_SUMMARY_PROMPT + "\n\nAdditional focus: the tests"
    )
    assert build_prompt_text(prepared, "only this", replace=True) == conversation + "only this"
    assert build_prompt_text(prepared, "", replace=True) == conversation + BRANCH_SUMMARY_PROMPT
    for heading in (
        "## Goal",
        "## Constraints & Preferences",
        "## Progress",
        "### Done",
        "### In Progress",
        "### Blocked",
        "## Key Decisions",
        "## Next Steps",
    ):
        assert heading in BRANCH_SUMMARY_PROMPT


def test_build_prompt_text_converts_summaries_first() -> None:
    prepared = prepared_of([entry("branch_summary", "b", None, summary="went away", fromId="x")])
    assert build_prompt_text(prepared).startswith(
        "<conversation>\n[User]: " + BRANCH_SUMMARY_PREFIX + "went away</summary>\n</conversation>"
    )


def test_finish_summary() -> None:
    ops = FileOps(read={"b.py", "a.py", "both.py"}, written={"w.py"}, edited={"both.py"})
    text, read, modified = finish_summary("## Goal\nX", ops)
    assert read == ["a.py", "b.py"] and modified == ["both.py", "w.py"]
    assert text == (
        BRANCH_SUMMARY_PREAMBLE + "## Goal\nX\n\n<read-files>\na.py\nb.py\n</read-files>\n\n"
        "<modified-files>\nboth.py\nw.py\n</modified-files>"
    )
    assert finish_summary("S", FileOps()) == (BRANCH_SUMMARY_PREAMBLE + "S", [], [])
    assert format_file_operations([], ["m"]) == "\n\n<modified-files>\nm\n</modified-files>"
    assert BRANCH_SUMMARY_PREAMBLE == (
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
    )


def test_token_budget() -> None:
    assert token_budget() == 128000 - 16384
    assert token_budget(200000) == 200000 - 16384
    assert token_budget(0) == 128000 - 16384  # Pi: `model.contextWindow || 128000`
    assert token_budget(50000, 1000) == 49000


def test_unknown_message_shapes_do_not_crash() -> None:
    weird = [
        message("w", None, "assistant", content="not a list"),
        {"type": "message"},
        message("t", None, "toolResult", content=None),
    ]
    prepared = prepare_branch_entries(weird, 10)
    assert serialize_conversation(convert_to_llm(prepared.messages)) == ""


def test_left_behind_is_sized_as_pi_prepares_the_branch() -> None:
    """The demo's jump 40665560 -> 5b622433: Pi's prepareBranchEntries counts 5,759 tokens (tool results are
    skipped), not the 6,531 of every entry's own estimate."""
    from pathlib import Path

    from pitree.ops.jump import plan_jump, prepare_job
    from pitree.store.session_file import EntryReader, load_session
    from pitree.summary.run import left_behind

    path = Path(__file__).resolve().parents[2] / "assets" / "demo.jsonl"
    tree, _ = load_session(path)
    assert tree.leaf is not None and tree.leaf.id == "40665560"
    plan = plan_jump(tree, tree.resolve("5b622433"))
    job = prepare_job(tree, EntryReader(path, tree), plan)
    text = left_behind(len(plan.to_summarize), job.prepared)
    assert "30 messages, ~5,759 tokens" in text and "tool results skipped" in text
    assert left_behind(0, None) == "nothing (no summary needed)"
    assert left_behind(1, None) == "1 entry; counting…"
    one = Prepared([{"role": "user", "content": "hi"}], FileOps(), 1, 1)
    assert "reads 1 message," in left_behind(1, one)
    assert left_behind(952_120, None) == "952,120 entries; counting…"  # a million-entry session's branch
