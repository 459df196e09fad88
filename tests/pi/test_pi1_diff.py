"""`pitree diff` against Pi 1.6: the context size at each end of a comparison is Pi's own
estimateProjectedContextTokens (buildSessionContext's projection) at that entry, on sessions Pi 1.6 wrote.
Skipped without Pi 1.6 (a failure in CI or with PITREE_REQUIRE_PI1=1)."""

from __future__ import annotations

import shutil
from itertools import pairwise
from pathlib import Path

import pytest
from pitree.ops.diff import compare
from pitree.store.session_file import EntryReader, load_session

from tests.pi.pi1run import pi1_dump, pi1_generate, require_pi1

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
SIZE = ("tokens", "usageTokens", "trailingTokens")


def _pairs(path: Path) -> list[tuple[str, str]]:
    """Every leaf against the next, and each leaf against an entry halfway up its path."""
    tree, _ = load_session(path)
    leaves = [n.id for n in tree.leaves()]
    pairs = list(pairwise(leaves))
    for leaf in leaves:
        branch = tree.branch(tree.get(leaf))
        pairs.append((branch[len(branch) // 2].id, leaf))
    return pairs


def _check(path: Path) -> int:
    pairs = _pairs(path)
    ends = sorted({e for pair in pairs for e in pair})
    pi = pi1_dump(path, leaves=ends)["leaves"]
    tree, _ = load_session(path)
    reader = EntryReader(path, tree)
    for a, b in pairs:
        diff = compare(tree, tree.resolve(a), tree.resolve(b), reader.entries)
        for end, size in ((a, diff.context_a.as_dict()), (b, diff.context_b.as_dict())):
            assert {k: size[k] for k in SIZE} == {k: pi[end]["context"][k] for k in SIZE}, (path.name, a, b, end)
    return len(pairs)


@pytest.mark.parametrize("scenario", ["kitchen", "random:11:300", "random:5:600"])
def test_context_at_each_end_is_pi1s(tmp_path: Path, scenario: str) -> None:
    require_pi1()
    path = tmp_path / (scenario.replace(":", "-") + ".jsonl")
    pi1_generate(scenario, path)
    assert _check(path) >= 2


def test_corpus_pi1_session(tmp_path: Path) -> None:
    source = CORPUS / "pi1-cli-session.jsonl"
    if not source.is_file():
        pytest.skip(f"{source} is not present")
    require_pi1()
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    assert _check(path) >= 1
