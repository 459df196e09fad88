"""oh-my-pi's dialect: detection, title slot, name, model, thinking, totals and context (SPEC-pi1.md B, C.16)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.session.context import build_context
from pitree.session.load import SessionBuilder, load_bytes
from pitree.session.usage import usage_report
from pitree.store.session_file import load_session_fast

from tests.omp_files import (
    SLOT_BYTES,
    assistant,
    case16,
    entry,
    header,
    message,
    model_change,
    model_usage,
    title_slot,
    tool_result,
    usage,
    user,
    write_omp,
)


def _bytes(entries: list[dict], title: str | None = "T", head: dict | None = None) -> bytes:
    out = bytearray(title_slot(title) if title is not None else b"")
    out += orjson.dumps(head or header()) + b"\n"
    for e in entries:
        out += orjson.dumps(e) + b"\n"
    return bytes(out)


def test_title_slot_is_exactly_256_bytes_and_not_a_bad_line() -> None:
    assert len(title_slot("é" * 200)) == SLOT_BYTES  # cut to fit, as omp's serializeTitleSlot does
    tree = load_bytes(_bytes([user("u1", None)], title="Fix the parser"))
    assert tree.skipped == [] and tree.problems == []
    assert tree.dialect == "omp" and tree.name == "Fix the parser"
    assert tree.header is not None and tree.header["id"] and [n.id for n in tree.nodes] == ["u1"]
    assert tree.nodes[0].line == 3  # slot, header, then the entry


def test_case16(tmp_path: Path) -> None:
    path, _ = case16(tmp_path)
    tree, _ = load_session_fast(path, final=True, save_cache=False)
    assert tree.skipped == [] and tree.problems == []
    assert tree.name == "Fix the parser"
    ctx = build_context(tree, None)
    assert ctx.dialect == "omp" and ctx.model == {"provider": "a", "modelId": "x"}
    assert [m.role for m in ctx.messages] == ["user", "assistant"]


def test_a_line_like_the_slot_but_not_256_bytes_is_not_one() -> None:
    line = orjson.dumps({"type": "title", "v": 1, "title": "x", "updatedAt": "t", "pad": ""}) + b"\n"
    tree = load_bytes(line + orjson.dumps(header()) + b"\n")
    assert tree.header is None and tree.problems  # Pi's rule: the first object is no header


@pytest.mark.parametrize(
    ("slot", "head", "changes", "name"),
    [
        ("Slot", {"title": "Head"}, [], "Slot"),
        ("", {"title": "Head"}, [], None),  # an empty slot clears the header's title (applyTitleSlot)
        (None, {"title": "Head"}, ["Later"], "Head"),
        (None, {"providerPromptCacheKey": "k"}, ["A", "B"], "B"),
    ],
)
def test_name_rules(slot: str | None, head: dict, changes: list[str], name: str | None) -> None:
    entries = [user("u1", None)] + [
        entry("title_change", f"t{i}", "u1", t=2 + i, title=c, source="user") for i, c in enumerate(changes)
    ]
    tree = load_bytes(_bytes(entries, title=slot, head=header(**head)))
    assert tree.dialect == "omp" and tree.name == name


def test_header_extras_or_entry_types_mark_the_dialect() -> None:
    assert (
        load_bytes(_bytes([user("u1", None)], title=None, head=header(additionalDirectories=["/x"]))).dialect == "omp"
    )
    assert load_bytes(_bytes([user("u1", None)], title=None)).dialect == "pi"
    plain = [user("u1", None), entry("reset_boundary", "r1", "u1")]
    assert load_bytes(_bytes(plain, title=None)).dialect == "omp"


def test_model_by_default_role_and_explicit_default_wins_over_later_assistants() -> None:
    entries = [
        assistant("a0", None, model="p/early"),  # before any model_change: sets the default (legacy rule)
        model_change("m1", "a0", "a/x", t=2),
        model_change("m2", "m1", "b/y", role="smol", t=3),
        assistant("a1", "m2", model="c/z", t=4),
    ]
    tree = load_bytes(_bytes(entries))
    assert build_context(tree, tree.get("a0")).model == {"provider": "p", "modelId": "early"}
    assert build_context(tree, None).model == {"provider": "a", "modelId": "x"}
    assert [n.text for n in tree.nodes[1:3]] == ["[model: a/x]", "[model: b/y (smol)]"]


def test_thinking_null_is_off() -> None:
    tree = load_bytes(
        _bytes(
            [
                entry("thinking_level_change", "t1", None, thinkingLevel="high"),
                entry("thinking_level_change", "t2", "t1", thinkingLevel=None),
            ]
        )
    )
    assert build_context(tree, tree.get("t1")).thinking_level == "high"
    assert build_context(tree, None).thinking_level == "off"
    assert tree.nodes[1].text == "[thinking: off]"


def test_totals_count_model_usage_and_task_results() -> None:
    entries = [
        user("u1", None),
        assistant("a1", "u1", calls=(("c1", "task", {"agent": "scout"}),), u=usage(10, 1, cost=0.1), stop="toolUse"),
        tool_result("r1", "a1", "c1", name="task", details={"usage": usage(100, 20, cost=1.0)}),
        tool_result("r2", "r1", "c1", name="read", details={"usage": usage(1000)}),  # not a task: not counted
        model_usage("mu", "r2", usage(5, 2, cost=0.01)),
    ]
    total = usage_report(load_bytes(_bytes(entries)))["total"]
    assert (total["input"], total["output"], total["messages"]) == (115, 23, 3)
    assert total["cost"] == pytest.approx(1.11)
    pi = usage_report(load_bytes(_bytes(entries[:4], title=None)))["total"]  # Pi's file: no task usage
    assert pi["input"] == 10


def test_every_omp_type_and_role_has_a_named_row() -> None:
    entries = [
        entry("service_tier_change", "e1", None, serviceTier="priority"),
        entry("ttsr_injection", "e2", "e1", injectedRules=["r1", "r2"]),
        entry("session_init", "e3", "e2", systemPrompt="S", task="do it", tools=["read"], agent="scout"),
        entry("mode_change", "e4", "e3", mode="plan"),
        entry("credential_pin", "e5", "e4", provider="anthropic", hash="h"),
        entry("reset_boundary", "e6", "e5"),
        model_usage("e7", "e6", usage(1)),
        entry("title_change", "e8", "e7", title="New", source="auto"),
        message("e9", "e8", {"role": "developer", "content": [{"type": "text", "text": "dev note"}]}),
        message("e10", "e9", {"role": "fileMention", "files": [{"path": "a.py", "content": "x = 1"}]}),
        message("e11", "e10", {"role": "pythonExecution", "code": "print(1)", "output": "1"}),
        message("e12", "e11", {"role": "hookMessage", "customType": "h", "content": "c"}),
    ]
    tree = load_bytes(_bytes(entries))
    assert [n.text for n in tree.nodes] == [
        "[service tier: priority]",
        "[ttsr: r1, r2]",
        "[session init: scout]",
        "[mode: plan]",
        "[credential pin: anthropic]",
        "[reset boundary]",
        "[model usage: title]",
        "[title: New]",
        "developer: dev note",
        "[file mention]: a.py",
        "[python]: print(1)",
        "[hookMessage: h]",
    ]
    assert tree.nodes[11].role == "hookMessage"  # a v3 file: no rename to custom


def _roles(tree, leaf=None) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(m.role, m.node.id) for m in build_context(tree, leaf).messages]


def test_reset_boundary_after_the_last_compaction_starts_the_context() -> None:
    entries = [
        user("u1", None),
        assistant("a1", "u1"),
        entry("compaction", "c1", "a1", summary="S", firstKeptEntryId="u1", tokensBefore=9),
        user("u2", "c1"),
        entry("reset_boundary", "r1", "u2"),
        user("u3", "r1"),
    ]
    tree = load_bytes(_bytes(entries))
    assert _roles(tree) == [("user", "u3")]
    assert _roles(tree, tree.get("u2")) == [
        ("compactionSummary", "c1"),
        ("user", "u1"),
        ("assistant", "a1"),
        ("user", "u2"),
    ]


def _replay_compaction() -> list[dict[str, Any]]:
    """u1, a1, u2, then a compaction with an empty firstKeptEntryId that replays through a1."""
    return [
        user("u1", None),
        assistant("a1", "u1"),
        user("u2", "a1"),
        entry(
            "compaction",
            "c1",
            "u2",
            summary="S",
            firstKeptEntryId="",
            providerReplayThroughEntryId="a1",
            tokensBefore=9,
        ),
    ]


def test_compaction_with_empty_first_kept_replays_after_provider_replay_id() -> None:
    entries = [*_replay_compaction(), user("u3", "c1")]
    tree = load_bytes(_bytes(entries))
    ctx = build_context(tree, None)
    assert [(m.role, m.node.id) for m in ctx.messages] == [("compactionSummary", "c1"), ("user", "u2"), ("user", "u3")]
    assert ctx.kept_from is not None and ctx.kept_from.id == "u2"
    remote = dict(
        entries[3], preserveData={"openaiRemoteCompaction": {"provider": "openai", "replacementHistory": [{}]}}
    )
    tree = load_bytes(_bytes([*entries[:3], remote, entries[4]]))
    assert _roles(tree) == [("compactionSummary", "c1"), ("user", "u2"), ("user", "u3")]


def test_retry_empty_error_unpaired_calls_and_failed_turns_left_out() -> None:
    entries = [
        user("u1", None),
        assistant("a1", "u1", text="", stop="error"),  # empty error turn
        assistant("a2", "a1", text="retrying", retryRecovery=True),
        assistant("a3", "a2", text="", calls=(("c1", "read", {"path": "x"}),), stop="toolUse"),  # no result
        assistant("a4", "a3", text="half", calls=(("c2", "read", {"path": "y"}),), stop="toolUse"),  # no result
        assistant("a5", "a4", text="", calls=(("c3", "bash", {"command": "ls"}),), stop="aborted"),
        tool_result("r3", "a5", "c3", name="bash"),
        entry("custom_message", "p1", "r3", customType="prewalk-plan", content="plan", display=False),
        user("u2", "p1"),
    ]
    tree = load_bytes(_bytes(entries))
    ctx = build_context(tree, None)
    assert [(m.role, m.node.id) for m in ctx.messages] == [("user", "u1"), ("assistant", "a4"), ("user", "u2")]
    assert len(ctx.notes) == 6
    pi = load_bytes(_bytes(entries, title=None, head=header()))
    pi.dialect = "pi"
    assert len(build_context(pi, None).messages) == 9  # Pi's rules keep them all


def test_continuation_keeps_the_dialect() -> None:
    builder = SessionBuilder()
    builder.feed(_bytes([user("u1", None)]), final=False)
    other = builder.continuation(builder.size)
    assert other.tree.dialect == "omp"


def test_parallel_load_of_a_big_omp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pitree.store import parse_child

    forked: list[object] = []
    real = parse_child.fork_child

    def spy(path: Path, size: int, share: float | None = None) -> object:
        child = real(path, size, share)
        forked.append(child)
        return child

    monkeypatch.setattr(parse_child, "MIN_BYTES", 1)
    monkeypatch.setattr(parse_child, "fork_child", spy)
    entries: list[dict] = []
    parent = None
    for i in range(4000):
        e = (
            user(f"u{i}", parent, text="x" * 200, t=i)
            if i % 2 == 0
            else assistant(f"a{i}", parent, text="y" * 200, t=i, u=usage(1))
        )
        entries.append(e)
        parent = e["id"]
    entries.append(tool_result("r", parent, "c", name="task", details={"usage": usage(1000)}))
    path = write_omp(tmp_path / "big.jsonl", entries, head=header(title="H"))
    tree, _ = load_session_fast(path, final=True, save_cache=False)
    assert forked and forked[0] is not None  # the back part was parsed by the child
    assert tree.dialect == "omp" and tree.name == "Fix the parser" and len(tree.nodes) == 4001
    assert usage_report(tree)["total"]["input"] == 2000 + 1000


def test_tree_cache_keeps_the_slot_title_and_dialect(tmp_path: Path) -> None:
    from pitree.store import tree_cache

    entries = [user("u0", None, text="x" * 3_000_000), entry("reset_boundary", "r1", "u0", t=2), user("u1", "r1")]
    path = write_omp(tmp_path / "big.jsonl", entries, title="Cached title")
    load_session_fast(path, final=True)
    assert tree_cache.has_cache(path)
    hit = tree_cache.read_cache(path)
    assert hit is not None
    tree = hit[0].tree
    assert (tree.dialect, tree.name) == ("omp", "Cached title")
    assert [m.node.id for m in build_context(tree, None).messages] == ["u1"]


def test_title_changes_are_searchable_names_and_task_usage_is_tools_usage() -> None:
    from pitree.session.summary_info import SessionScan

    entries = [
        user("u1", None),
        entry("title_change", "t1", "u1", t=2, title="Parser work", source="user"),
        assistant("a1", "t1", calls=(("c1", "task", {}),), stop="toolUse"),
        tool_result("r1", "a1", "c1", name="task", details={"usage": usage(7)}),
    ]
    tree = load_bytes(_bytes(entries))
    assert ("t1", "name", "Parser work") in list(SessionScan(tree).documents())
    assert usage_report(tree)["models"]["Tools/summaries"]["input"] == 7


WEIRD: list[object] = [None, True, 1, 1.5, "", "x", [], ["a"], {}, {"a": [1]}]


@pytest.mark.parametrize("value", WEIRD)
def test_wrong_types_in_omp_fields_never_crash(value: object) -> None:
    entries = [
        model_change("m1", None, "a/x"),
        entry("model_change", "m2", "m1", model=value, role=value),
        entry("thinking_level_change", "t1", "m2", thinkingLevel=value),
        entry("title_change", "n1", "t1", title=value),
        user("u1", "n1"),
        assistant("a1", "u1", calls=(("c1", "read", {}),), stop="toolUse"),
        message("a2", "a1", {"role": "assistant", "content": value, "stopReason": value, "retryRecovery": value}),
        message(
            "r1", "a2", {"role": "toolResult", "toolCallId": value, "toolName": "task", "details": {"usage": value}}
        ),
        message("x1", "r1", {"role": value, "files": value, "code": value}),
        message("x2", "x1", {"role": "fileMention", "files": value}),
        message("x3", "x2", {"role": "pythonExecution", "code": value, "output": value}),
        entry("custom_message", "c1", "x3", customType=value, content=value),
        entry(
            "compaction",
            "k1",
            "c1",
            summary="S",
            firstKeptEntryId=value,
            providerReplayThroughEntryId=value,
            tokensBefore=1,
            preserveData=value,
        ),
        entry("reset_boundary", "z1", "k1"),
        model_usage("mu", "z1", value),  # type: ignore[arg-type]
        entry("ttsr_injection", "e2", "mu", injectedRules=value),
        entry("session_init", "e3", "e2", agent=value, task=value),
    ]
    tree = load_bytes(_bytes(entries, head=header(title=value)))
    assert tree.dialect == "omp" and len(tree.nodes) == len(entries)
    for node in tree.nodes:
        build_context(tree, node)
    usage_report(tree)
    slot = {"type": "title", "v": True, "title": "t", "updatedAt": "u", "pad": ""}
    from pitree.session.dialect_omp import title_slot

    assert title_slot(slot, 255) is None and title_slot({**slot, "v": 1}, 255) is not None


def test_discard_marker_row() -> None:
    entries = [
        user("u1", None),
        entry(
            "branch_summary",
            "b1",
            "u1",
            fromId="u1",
            summary="",
            details={"kind": "discarded-entry-branch", "discardedEntryId": "a9"},
        ),
    ]
    tree = load_bytes(_bytes(entries))
    assert tree.nodes[1].text == "[branch marker discarded-entry-branch: a9]"
    assert [m.node.id for m in build_context(tree, None).messages] == ["u1"]


def test_compaction_audit_follows_omp_kept_range() -> None:
    from pitree.cli.report_context import compaction_audit, compaction_split

    tree = load_bytes(_bytes(_replay_compaction()))
    node = tree.get("c1")
    assert node is not None
    split = compaction_split(tree, node)
    assert [m.node.id for m in split.kept] == ["u2"] and split.first_kept_on_path
    assert not [p for p in compaction_audit(tree, node, None)["problems"] if "first kept" in p]
