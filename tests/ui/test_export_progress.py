"""The explorer's export in its worker (issue #19): a quick one shows only its result; a long one shows its
progress, and Esc there stops it with nothing written; a progress screen covered by another screen when the
export ends goes when that screen closes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from pitree.ops.export import build
from pitree.store.session_file import EntryReader
from pitree.widgets.screens import export_progress
from pitree.widgets.screens.export_dialog import ExportChoice, ExportDialog
from pitree.widgets.screens.export_progress import ExportProgress, run_export
from pitree.widgets.screens.text_screen import TextScreen
from textual.widgets import Input, ProgressBar

from tests.sessions import to_bytes, tool_turns
from tests.ui.test_app import make_app, until


def _session(tmp_path: Path, turns: int = 150) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(tool_turns(turns)))
    return path


def _slow_reads(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """An entry a batch, each read taking `seconds`: an export of a few hundred entries takes a while."""
    monkeypatch.setattr(build, "BATCH_ENTRIES", 1)
    real = EntryReader.entries

    def entries(self: EntryReader, nodes: list[Any], shape: Any = None) -> list[dict[str, Any]]:
        time.sleep(seconds)
        return real(self, nodes, shape)

    monkeypatch.setattr(EntryReader, "entries", entries)


def _titles(app: Any) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


async def test_a_quick_export_shows_only_its_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    path = _session(tmp_path)
    app = make_app(path)
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ExportDialog))
        await pilot.press("e")
        target = tmp_path / "s-r150.md"
        await until(pilot, lambda: any(t.startswith("export: exported") for t in _titles(app)))
        assert target.read_text().count("<details>") == 150
        assert not any(isinstance(s, ExportProgress) for s in app.screen_stack)


async def test_a_long_export_shows_progress_and_esc_stops_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(export_progress, "SHOW_AFTER", 0.05)
    monkeypatch.setattr(export_progress, "REDRAW_EVERY", 0)
    path = _session(tmp_path)
    app = make_app(path)
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        _slow_reads(monkeypatch, 0.02)  # ~6 s for the whole path
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ExportDialog))
        app.screen.query_one("#out", Input).value = str(tmp_path / "out.html")
        await pilot.press("h", "e")
        await until(pilot, lambda: isinstance(app.screen, ExportProgress))
        screen = app.screen
        bar = screen.query_one(ProgressBar)
        await until(pilot, lambda: (bar.progress or 0) >= 20)
        assert bar.total == 301 and str(screen.query_one("#count").render()).endswith("of 301 entries")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ExportProgress))
        await until(pilot, lambda: any("export cancelled; nothing was written" in t for t in _titles(app)))
        assert (bar.progress or 0) < 301
        assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]  # no export, no temporary file


async def test_progress_under_another_screen_goes_when_it_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(export_progress, "SHOW_AFTER", 0.01)
    path = _session(tmp_path, turns=30)
    app = make_app(path)
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        _slow_reads(monkeypatch, 0.03)
        explorer = app.explorer
        assert explorer.stree is not None and explorer.reader is not None and explorer.stree.leaf is not None
        out = tmp_path / "out.md"
        run_export(
            explorer, explorer.stree, explorer.reader, explorer.stree.leaf, ExportChoice("md", out, False, False)
        )
        await until(pilot, lambda: isinstance(app.screen, ExportProgress))
        app.push_screen(TextScreen("on top", "x"))
        await until(pilot, lambda: out.exists(), timeout=20)
        await pilot.pause(0.1)
        assert isinstance(app.screen, TextScreen) and isinstance(app.screen_stack[-2], ExportProgress)
        app.pop_screen()
        await until(pilot, lambda: not any(isinstance(s, ExportProgress) for s in app.screen_stack))
        assert out.read_text().count("<details>") == 30


async def test_quitting_while_exporting_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's workers are cancelled when it exits: the export stops at its next batch and removes its
    temporary file; nothing is written."""
    import threading

    path = _session(tmp_path, turns=60)
    app = make_app(path)
    out = tmp_path / "out.md"
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        _slow_reads(monkeypatch, 0.03)
        explorer = app.explorer
        assert explorer.stree is not None and explorer.reader is not None and explorer.stree.leaf is not None
        run_export(
            explorer, explorer.stree, explorer.reader, explorer.stree.leaf, ExportChoice("md", out, False, False)
        )
        await until(pilot, lambda: any(p.name.endswith(".pitree-tmp") for p in tmp_path.iterdir()))
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join(5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


async def test_progress_that_comes_before_the_screen_is_mounted_is_shown_once_it_is(tmp_path: Path) -> None:
    """The export thread's progress can arrive between the screen being pushed and its widgets being there: it
    was a NoMatches that ended the export and left this screen up for good. Now the screen shows it on mount."""
    path = _session(tmp_path, turns=3)
    app = make_app(path)
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        worker = app.run_worker(lambda: None, thread=True)
        screen = ExportProgress(ExportChoice("md", tmp_path / "out.md", False, False), "abc", worker)
        screen.update_progress(5, 10)  # not mounted yet: no widgets to update
        await app.push_screen(screen)
        await pilot.pause()
        bar = screen.query_one(ProgressBar)
        assert (bar.progress, bar.total) == (5, 10)
        assert str(screen.query_one("#count").render()) == "5 of 10 entries"
        screen.update_progress(7, 10)
        assert bar.progress == 7


async def test_an_export_that_fails_unexpectedly_says_so_and_takes_its_screen_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(export_progress, "SHOW_AFTER", 0.01)
    path = _session(tmp_path, turns=30)
    app = make_app(path)
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        _slow_reads(monkeypatch, 0.03)
        real = EntryReader.entries
        calls = [0]

        def entries(self: EntryReader, nodes: list[Any], shape: Any = None) -> list[dict[str, Any]]:
            calls[0] += 1
            if calls[0] > 5:
                raise RuntimeError("a bug")
            return real(self, nodes, shape)

        monkeypatch.setattr(EntryReader, "entries", entries)
        explorer = app.explorer
        assert explorer.stree is not None and explorer.reader is not None and explorer.stree.leaf is not None
        out = tmp_path / "out.md"
        choice = ExportChoice("md", out, False, False)
        run_export(explorer, explorer.stree, explorer.reader, explorer.stree.leaf, choice)
        await until(pilot, lambda: any("export failed: RuntimeError: a bug" in t for t in _titles(app)))
        await until(pilot, lambda: not any(isinstance(s, ExportProgress) for s in app.screen_stack))
        assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
