"""The two real Pi sessions in ../shared/corpus (skipped when that folder is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pitree.report import compactions_report, context_report
from pitree.store.session_file import EntryReader, load_session

pytestmark = pytest.mark.corpus


@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
def test_every_line_accounted_for(corpus: Path, name: str) -> None:
    path = corpus / name
    data = path.read_bytes()
    tree, builder = load_session(path)
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    assert 1 + tree.entry_count + len(tree.skipped) == lines
    assert builder.size == len(data)
    assert len(tree.roots) == 1 and len(tree.active_path()) == tree.entry_count  # v1: one chain


def test_compactions_resolve_on_the_path(corpus: Path) -> None:
    path = corpus / "before-compaction.jsonl"
    tree, _ = load_session(path)
    report = compactions_report(tree, EntryReader(path, tree))["compactions"]
    assert len(report) == 2
    for c in report:
        assert c["firstKeptOnPath"] and c["summary"] and c["tokensAfter"]["estimate"] < c["tokensBefore"]
    ctx = context_report(tree, None, None)
    assert ctx["messages"][0]["role"] == "compactionSummary"
