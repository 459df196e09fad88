"""The compaction audit of Pi 1.x compactions (SPEC-pi1 A2, A3): the checkpoint, the system messages dropped,
retain-none and what the compaction itself cost, in `compaction_audit` and in the audit table's text."""

from __future__ import annotations

from pathlib import Path

from pitree.cli.report import compaction_audit, compaction_split
from pitree.store.session_file import EntryReader, load_session
from pitree.widgets.render.audit import audit_parts
from rich.console import Console

from tests.sessions import assistant, entry, message, user, write_session

CHECKPOINT = {
    "role": "system",
    "content": "",
    "sections": {"preamble": "P" * 40, "cwd": None},
    "toolsAdded": [{"name": "read"}, {"name": "bash\x1b[31m"}],
    "timestamp": 9,
}


def session(tmp_path: Path, checkpoint: bool, keep: str) -> Path:
    fields = {"summary": "the summary", "firstKeptEntryId": keep, "tokensBefore": 60, "usage": {"input": 100}}
    if checkpoint:
        fields["systemMessage"] = CHECKPOINT
    entries = [
        message("s1", None, "system", content="", sections={"preamble": "P" * 40}),
        user("u1", "s1", "x" * 40),
        assistant("a1", "u1", "y" * 40),
        message("s2", "a1", "system", content="", sections={"cwd": "/w"}),
        user("u2", "s2", "z" * 40),
        entry("compaction", "c1", "u2", **fields),
    ]
    return write_session(tmp_path, entries)


def text_of(audit: dict) -> str:  # type: ignore[type-arg]
    console = Console(width=120, record=True)
    for part in audit_parts(audit):
        console.print(part)
    return console.export_text()


def test_checkpoint_dropped_system_and_cost(tmp_path: Path) -> None:
    path = session(tmp_path, checkpoint=True, keep="a1")
    tree, _ = load_session(path)
    audit = compaction_audit(tree, tree.get("c1"), EntryReader(path, tree))  # type: ignore[arg-type]
    assert audit["droppedSystem"] == {"entries": 2, "ids": ["s1", "s2"], "tokens": 10 + 1}
    assert audit["checkpoint"]["sections"] == ["preamble"] and audit["checkpoint"]["tools"] == ["read", "bash\x1b[31m"]
    assert audit["checkpoint"]["tokens"] == 21  # (40 + len('[{"name":"read"},{"name":"bash\\u001b[31m"}]') = 43) / 4
    assert audit["usage"] == {
        "input": 100,
        "output": 0.0,
        "cacheRead": 0.0,
        "cacheWrite": 0.0,
        "tokens": 100,
        "cost": 0.0,
    }
    assert audit["kept"]["entries"] == 2 and not audit["retainNone"] and audit["problems"] == []
    # after = the checkpoint as the head + summary + kept a1, u2
    assert audit["tokensAfter"]["estimate"] == 21 + 3 + 10 + 10
    shown = text_of(audit)
    assert "system messages dropped" in shown and "checkpoint (systemMessage)" in shown
    assert "tools read, bash␛[31m" in shown and "\x1b" not in shown
    assert "the compaction itself: 100 tokens" in shown
    assert "after = checkpoint + summary + kept" in shown and "estimateProjectedContextTokens" in shown
    split = compaction_split(tree, tree.get("c1"))  # type: ignore[arg-type]
    assert [m.node.id for m in split.dropped] == ["s1", "s2"] and [m.node.id for m in split.kept] == ["a1", "u2"]


def test_retain_none_is_not_a_problem(tmp_path: Path) -> None:
    path = session(tmp_path, checkpoint=False, keep="c1")
    tree, _ = load_session(path)
    audit = compaction_audit(tree, tree.get("c1"), EntryReader(path, tree))  # type: ignore[arg-type]
    assert audit["retainNone"] and audit["kept"]["entries"] == 0 and audit["problems"] == []
    assert audit["checkpoint"] is None and audit["tokensAfter"]["estimate"] == 3
    shown = text_of(audit)
    assert "kept: none (retain-none)" in shown and "no checkpoint" in shown
    assert "after = summary; nothing kept (retain-none)" in shown
    assert "✓ no problems: retain-none (nothing kept, on purpose)" in shown and "first kept entry on" not in shown


def test_compactions_command_says_retain_none_and_what_after_adds_up(tmp_path: Path) -> None:
    from pitree.cli.report import compactions_report
    from pitree.cli.textout import print_compactions

    for keep, checkpoint, words, not_words in (
        ("c1", False, ["kept: nothing (retain-none", "(summary; nothing kept (retain-none))"], ["NOT on the path"]),
        ("a1", True, ["kept: 2 messages", "(checkpoint + summary + kept)"], ["retain-none"]),
    ):
        (tmp_path / keep).mkdir()
        path = session(tmp_path / keep, checkpoint=checkpoint, keep=keep)
        tree, _ = load_session(path)
        console = Console(width=200, record=True)
        print_compactions(console, compactions_report(tree, EntryReader(path, tree)))
        shown = console.export_text()
        assert all(w in shown for w in words) and not any(w in shown for w in not_words), shown
