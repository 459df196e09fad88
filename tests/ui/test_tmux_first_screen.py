"""A big session opened twice in a real terminal: the second open shows its kept first screen while the tree is
read, and the tree then appears with the very same rows (the cursor where the user moved it meanwhile)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ui.test_tmux import PITREE, new_session, pytestmark, screen_until, session_name, tmux  # noqa: F401

GEN = Path(__file__).resolve().parents[2] / "bench" / "gen_session.py"
ROW = re.compile(r"^[› ] .*• ", re.M)  # a tree row on the active path


def generate(path: Path, entries: int) -> None:
    spec = importlib.util.spec_from_file_location("gen_session_for_tmux", GEN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.generate(path, entries, shape="normal", seed=3)


def tree_rows(screen: str, width: int = 80) -> list[str]:
    """The left part of the rows under the tree's header line (the tree pane; the age column is cut off)."""
    return [line[:width] for line in screen.splitlines()[1:-3]]


@pytest.mark.skipif(not GEN.exists(), reason="needs bench/gen_session.py")
def test_second_open_shows_the_kept_rows_then_the_same_tree(session_name: str, tmp_path: Path) -> None:  # noqa: F811
    path = tmp_path / "big.jsonl"
    generate(path, 60_000)
    assert path.stat().st_size > 16 << 20
    env = {**os.environ, "TERM": "xterm-256color", "HOME": str(tmp_path), "PITREE_CACHE_DIR": str(tmp_path / "c")}

    def launch() -> None:
        new_session(session_name, 150, 40, f"{PITREE} {path}; sleep 60", env)

    launch()
    screen_until(session_name, "Jump here", timeout=60)
    tmux("send-keys", "-t", session_name, "q")
    deadline = time.monotonic() + 10
    while not list((tmp_path / "c").glob("*.screen")) and time.monotonic() < deadline:
        time.sleep(0.1)
    subprocess.run(["tmux", "kill-session", "-t", session_name], capture_output=True)

    for _attempt in range(3):
        launch()
        seen, last = "", None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            seen = tmux("capture-pane", "-p", "-t", session_name)
            # A whole frame, not one being written: the same twice running.
            if ROW.search(seen) and "← leaf" in seen and seen == last:
                break
            last = seen
            time.sleep(0.02)
        assert "Shown meanwhile" in seen, f"the kept first screen was not shown first:\n{seen}"
        kept = tree_rows(seen)
        tmux("send-keys", "-t", session_name, "Up")  # moved while the tree is read
        if _moved_on_the_kept_screen(session_name):
            break
        # The tree was ready before the key came: this open did not test a move on the kept screen.
        subprocess.run(["tmux", "kill-session", "-t", session_name], capture_output=True)
    else:
        raise AssertionError("the tree was ready before a key could reach the kept screen, three times")
    ready = screen_until(session_name, "Jump here", timeout=60)
    assert "Shown meanwhile" not in ready
    rows = tree_rows(ready)
    cursor = next(i for i, line in enumerate(rows) if line.startswith("›"))
    assert "← leaf" in rows[cursor + 1], "the cursor is where it was moved to: one row above the leaf"
    unmarked = [line[1:] for line in rows]  # the cursor column differs by one row: compare the rest
    assert unmarked == [line[1:] for line in kept]


def _moved_on_the_kept_screen(name: str, timeout: float = 10) -> bool:
    """True once the kept screen shows the cursor moved off the leaf's row; False if the tree came first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = tmux("capture-pane", "-p", "-t", name)
        if "Shown meanwhile" not in seen:
            return False
        cursor = next((line for line in tree_rows(seen) if line.startswith("›")), None)
        if cursor is not None and "← leaf" not in cursor:
            return True
        time.sleep(0.005)
    return False
