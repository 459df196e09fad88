"""The real Pi sessions in ../shared/corpus (v1 files): every line accounted for, compactions resolved on the
path, and the context and /tree rows the same as the real Pi's (ids aside: Pi makes random ones for v1).
Skipped when the corpus is absent; the Pi comparison also needs node and Pi's package (tests/pi/pirun.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pitree.cli.report import compactions_report
from pitree.session.context import build_context
from pitree.store.session_file import EntryReader, load_session

from tests.pi.pirun import FILTERS, pi_dump, pitree_json, pitree_rows, rows_match

CORPUS = Path(os.environ.get("PITREE_CORPUS") or Path(__file__).resolve().parents[2].parent / "shared" / "corpus")
ALL: list[Path] = sorted(CORPUS.glob("*.jsonl")) if CORPUS.is_dir() else []
# Files Pi 1.x wrote (system messages, context edits…) are compared with Pi 1.x's rules, not Pi 0.73's
PI1 = [p for p in ALL if p.name.startswith("pi1-")]
FILES = [p for p in ALL if p not in PI1]

pytestmark = pytest.mark.corpus


PARAMS: list[Path | None] = [*FILES] or [None]


@pytest.fixture(params=PARAMS, ids=lambda p: p.name if p else "absent")
def corpus_file(request: pytest.FixtureRequest) -> Path:
    if request.param is None:
        pytest.skip(f"{CORPUS} is not present")
    return request.param  # type: ignore[no-any-return]


def test_the_corpus_has_both_files() -> None:
    if not FILES:
        pytest.skip(f"{CORPUS} is not present")
    assert {p.name for p in FILES} >= {"before-compaction.jsonl", "large-session.jsonl"}


def test_every_line_accounted_for(corpus_file: Path) -> None:
    data = corpus_file.read_bytes()
    tree, builder = load_session(corpus_file)
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    assert tree.header is not None
    assert 1 + tree.entry_count + len(tree.skipped) == lines
    assert builder.size == len(data)
    assert len(tree.roots) == 1 and len(tree.active_path()) == tree.entry_count  # v1: one chain
    assert len({n.id for n in tree.nodes}) == tree.entry_count  # synthetic ids never collide
    again, _ = load_session(corpus_file)
    assert [n.id for n in again.nodes] == [n.id for n in tree.nodes]  # and are stable


def test_compactions_resolve_on_the_path(corpus_file: Path) -> None:
    tree, _ = load_session(corpus_file)
    compactions = [n for n in tree.nodes if n.type == "compaction"]
    if not compactions:
        pytest.skip(f"{corpus_file.name} has no compaction")
    for node in compactions:
        first_kept = node.meta["firstKeptEntryId"] if node.meta else None
        assert first_kept in [n.id for n in tree.branch(node)[:-1]], node
    report = compactions_report(tree, EntryReader(corpus_file, tree))["compactions"]
    assert len(report) == len(compactions)
    for c in report:
        assert c["firstKeptOnPath"] and c["summary"] and c["kept"]["entries"] > 0
        assert c["tokensAfter"]["estimate"] < c["tokensBefore"]
    ctx = build_context(tree, None)
    assert ctx.messages[0].role == "compactionSummary" and ctx.compaction is compactions[-1]
    assert ctx.kept_from is not None


@pytest.mark.node
def test_context_and_rows_match_pi(corpus_file: Path, tmp_path: Path) -> None:
    copy = tmp_path / corpus_file.name
    copy.write_bytes(corpus_file.read_bytes())
    pi = pi_dump(copy)
    tree, _ = load_session(copy)
    assert pi["version"] == 3 and pi["entries"] == tree.entry_count
    assert pi["types"] == [n.kind for n in tree.nodes]
    assert len(pi["roots"]) == len(tree.roots) == 1 and pi["name"] == tree.name
    ctx = pitree_json("context", copy, "--no-tiktoken")
    assert [m["role"] for m in ctx["messages"]] == pi["context"]["roles"]
    assert [m["tokens"] for m in ctx["messages"]] == pi["context"]["tokens"]
    assert ctx["model"] == pi["context"]["model"] and ctx["thinkingLevel"] == pi["context"]["thinkingLevel"]
    # The context's entries, by position in the file (Pi's ids are its own).
    position = {e: i for i, e in enumerate(n["id"] for n in pi["tree"])}
    assert [position[e] for e in pi["context"]["entryIds"]] == [tree.get(m["entryId"]).idx for m in ctx["messages"]]
    for mode in FILTERS:
        assert rows_match(pitree_rows(copy, mode), pi["rows"][mode]), mode


@pytest.fixture(params=[*PI1] or [None], ids=lambda p: p.name if p else "absent")
def pi1_file(request: pytest.FixtureRequest) -> Path:
    if request.param is None:
        pytest.skip(f"no Pi 1.x session in {CORPUS}")
    return request.param  # type: ignore[no-any-return]


def test_pi1_cli_session_context_is_what_pi_16_sends(pi1_file: Path) -> None:
    """The Pi 1.6 CLI session: its system message is the collapsed head (1,306 tokens by Pi's estimate) and the
    context Pi 1.6 estimates is 1,437 tokens (pitree 0.x read it as 131, the system message as 0)."""
    if pi1_file.name != "pi1-cli-session.jsonl":
        pytest.skip("the expected figures are those of pi1-cli-session.jsonl")
    tree, _ = load_session(pi1_file)
    ctx = build_context(tree, None)
    assert [m.role for m in ctx.messages] == ["system", "user", "assistant", "user", "assistant", "user", "assistant"]
    assert [m.tokens for m in ctx.messages] == [1306, 12, 35, 8, 35, 6, 35]
    assert ctx.head.tokens == 1306 and ctx.size.tokens == ctx.tokens == 1437 and ctx.size.usage_node is None
    report = pitree_json("context", pi1_file)
    assert report["size"]["tokens"] == report["tokens"]["estimate"] == 1437
    assert report["system"]["sections"] == ["preamble", "tools", "rules", "docs", "cwd"]
    assert report["system"]["tools"] == ["read", "bash", "edit", "write"]
    assert report["system"]["sourceEntryIds"] == ["292b8f6b"]


ALL_PARAMS: list[Path | None] = [*ALL] or [None]


@pytest.mark.parametrize("path", ALL_PARAMS, ids=lambda p: p.name if p else "absent")
@pytest.mark.parametrize("command", ["tree", "context", "compactions", "info", "usage"])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_every_reading_command_runs_on_every_real_session(
    path: Path | None, command: str, as_json: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real sessions hold what generated ones may not (a Pi 1.6 CLI session reports usage with no model): every
    command a user reads a session with must answer, in text and in JSON, without a traceback."""
    if path is None:
        pytest.skip(f"{CORPUS} is not present")
    from pitree.cli.main import main

    before = path.read_bytes()
    argv = [command, str(path), *(["--json"] if as_json else []), *(["--no-tiktoken"] if command == "context" else [])]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.strip()
    assert path.read_bytes() == before
