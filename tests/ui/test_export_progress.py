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

from tests.sessions import assistant, to_bytes, tool_result, user
from tests.ui.test_app import make_app, until


def _session(tmp_path: Path, turns: int = 150) -> Path:
    entries: list[dict[str, Any]] = [user("u0", None, "go", t=0)]
    for i in range(1, turns + 1):
        entries.append(assistant(f"a{i}", entries[-1]["id"], text=f"turn {i}", t=i, calls=((f"c{i}", "read", {}),)))
        entries.append(tool_result(f"r{i}", f"a{i}", f"c{i}", text=f"out {i}", t=i))
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(entries))
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
