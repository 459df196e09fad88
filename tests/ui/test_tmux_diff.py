"""The compare screen in a real terminal: tmux runs `pitree` on the demo at 120x36 and 80x24, we mark, compare,
move to B's column, press Enter and read where the tree's cursor went."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from pitree.ops.diff import compare
from pitree.ops.diff_rows import rows
from pitree.store.session_file import load_session

from tests.ui.test_tmux import PITREE, new_session, pytestmark, screen_until, session_name, tmux

__all__ = ["pytestmark", "session_name"]  # the skip mark and the fixture, shared with test_tmux
DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo.jsonl"


def keys(name: str, *sent: str) -> None:
    for key in sent:
        tmux("send-keys", "-t", name, key)
        time.sleep(0.15)


def goto(name: str, entry_id: str) -> None:
    """`g`, the id, Enter; done when the entry pane shows the entry."""
    keys(name, "g")
    screen_until(name, "go to entry id")
    tmux("send-keys", "-t", name, "-l", entry_id)
    keys(name, "Enter")
    screen_until(name, f"id {entry_id}")


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
def test_compare_two_branches_of_the_demo(session_name: str, tmp_path: Path, size: tuple[int, int]) -> None:
    demo = tmp_path / "demo.jsonl"
    demo.write_bytes(DEMO.read_bytes())
    env = {**os.environ, "TERM": "xterm-256color", "HOME": str(tmp_path)}
    width, height = size
    command = f"{PITREE} {demo}; sleep 30"
    new_session(session_name, width, height, command, env)
    screen_until(session_name, "← leaf")
    goto(session_name, "58f62a23")  # the asyncio question: a sibling branch of the leaf's
    keys(session_name, "m")
    screen_until(session_name, "marked 58f62a23")
    goto(session_name, "c743aed4")  # the overloaded reply at the end of the sqlite attempt
    keys(session_name, "d")
    shown = screen_until(session_name, "split at 13fc96a3")
    assert "A 58f62a23" in shown and "B c743aed4" in shown and "entries" in shown
    tree, _ = load_session(demo)
    labels = [r.label for r in rows(compare(tree, tree.resolve("58f62a23"), tree.resolve("c743aed4")))]
    keys(session_name, *["Down"] * labels.index("turn 1"), "Right", "Right")
    shown = screen_until(session_name, "✗ [bash: python -m pytest")  # B's failed test run, in its turn 1
    assert "› Nice. Now add a disk cache" in shown
    keys(session_name, "Enter")
    screen_until(session_name, "id 5b622433")  # the entry pane shows B's first turn: the sqlite request
