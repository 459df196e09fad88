"""Snapshots of the screen at a fixed size and a fixed clock, as plain text (what a person reads).

Regenerate after an intended change with `PITREE_UPDATE_SNAPSHOTS=1 make test`, then review the diff.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from pitree.widgets.app import PitreeApp
from pitree.widgets.entry_view import EntryView
from pitree.widgets.tree_view import TreeView

from tests.ui.screenshot import screen_text

HERE = Path(__file__).parent / "snapshots"
DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo.jsonl"
NOW = 1796212800.0  # 2026-12-02 12:00 UTC, a fixed "now" for relative times


def check(name: str, text: str) -> None:
    path = HERE / f"{name}.txt"
    if os.environ.get("PITREE_UPDATE_SNAPSHOTS") or not path.exists():
        path.write_text(text)
        if not os.environ.get("PITREE_UPDATE_SNAPSHOTS"):
            pytest.fail(f"snapshot {path.name} was missing and has been written; review it and run again")
    assert text == path.read_text(), f"screen differs from {path}"


async def settle(pilot, app: PitreeApp) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 15
    while app.explorer.stree is None or app.query_one(EntryView).node is not app.query_one(TreeView).cursor_node:
        assert time.monotonic() < deadline
        await pilot.pause(0.05)
    await pilot.pause(0.3)


@pytest.mark.parametrize("keys", [(), ("ctrl+u",), ("home", "ctrl+left")], ids=["leaf", "user-only", "folded-root"])
async def test_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: tuple[str, ...]) -> None:
    monkeypatch.setattr(time, "time", lambda: NOW)
    path = tmp_path / "demo.jsonl"
    path.write_bytes(DEMO.read_bytes())
    app = PitreeApp(path, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        for key in keys:
            await pilot.press(key)
        await settle(pilot, app)
        check("-".join(keys) or "leaf", screen_text(app))
