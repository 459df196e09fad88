"""The compaction audit against Pi itself: what Pi's context holds just before and just after each compaction.

Pi's leaf is the file's last line, so a copy cut right after a compaction shows Pi's context *with* it (its summary
then the kept entries) and a copy cut right before it shows the context it replaced (when the compaction follows its
parent). The audit's kept and summarized counts must agree with both. The corpus numbers are also pinned, so a
change in how pitree counts shows up even without Node.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pitree.cli.report import compactions_report
from pitree.store.session_file import EntryReader, load_session

from tests.conftest import CORPUS, DEMO
from tests.pi.pirun import pi_dump

# (file, compaction line) -> (summarized entries, summarized tokens, kept entries, kept tokens, summary estimate)
KNOWN = {
    ("before-compaction.jsonl", 360): (288, 115166, 66, 15579, 1073),
    ("before-compaction.jsonl", 629): (258, 122818, 77, 16642, 913),
}


def _files() -> list[Path]:
    files = [DEMO]
    if CORPUS.is_dir():
        files += sorted(CORPUS.glob("*.jsonl"))
    return [f for f in files if b'"type":"compaction"' in f.read_bytes()]


def _generated(tmp_path: Path) -> Path:
    """A generated session (bench/gen_session.py) with several compactions on branches."""
    from tests.unit.test_gen_session import gen

    path = tmp_path / "generated.jsonl"
    gen.generate(path, 3000, seed=7)
    return path


def _audits(path: Path) -> list[dict]:
    tree, _ = load_session(path)
    return compactions_report(tree, EntryReader(path, tree))["compactions"]


@pytest.mark.corpus
def test_corpus_audit_numbers_are_the_known_ones(corpus: Path) -> None:
    audits = {("before-compaction.jsonl", a["line"]): a for a in _audits(corpus / "before-compaction.jsonl")}
    assert set(audits) == set(KNOWN)
    for key, (s_entries, s_tokens, k_entries, k_tokens, summary) in KNOWN.items():
        a = audits[key]
        assert (a["summarized"]["entries"], a["summarized"]["tokens"]) == (s_entries, s_tokens)
        assert (a["kept"]["entries"], a["kept"]["tokens"]) == (k_entries, k_tokens)
        assert a["summaryTokens"]["estimate"] == summary
        assert a["tokensAfter"]["estimate"] == summary + k_tokens
        assert a["problems"] == []


@pytest.mark.node
@pytest.mark.parametrize("path", [*_files(), None], ids=lambda p: p.name if p else "generated")
def test_audit_agrees_with_pi_context_around_each_compaction(path: Path | None, tmp_path: Path) -> None:
    path = path or _generated(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    audits = _audits(path)
    assert audits, f"{path.name} has no compaction"
    tree, _ = load_session(path)
    for audit in audits:
        line = audit["line"]  # 1-based, header = 1
        after = tmp_path / f"after-{line}.jsonl"
        after.write_bytes(b"".join(lines[:line]))
        ctx = pi_dump(after)["context"]
        assert ctx["roles"][0] == "compactionSummary"
        assert len(ctx["roles"]) == 1 + audit["kept"]["entries"], (path.name, line)
        node = tree.get(audit["id"])
        assert node is not None and node.parent is not None
        if node.parent.line == line - 1:  # the compaction follows its parent: cut before it is the context it replaced
            before = tmp_path / f"before-{line}.jsonl"
            before.write_bytes(b"".join(lines[: line - 1]))
            replaced = pi_dump(before)["context"]["roles"]
            assert len(replaced) == audit["summarized"]["entries"] + audit["kept"]["entries"], (path.name, line)
