"""The installed console script in a real terminal: tmux runs `pitree`, we type and read the screen."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

PITREE = Path(sys.executable).with_name("pitree")
pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None or not PITREE.exists(), reason="needs tmux and the installed pitree script"
)


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, timeout=20).stdout


def new_session(name: str, width: int, height: int, command: str, env: dict[str, str] | None = None) -> None:
    """`tmux new-session` on the default server, tried again while that server is exiting: the last test's
    session was killed just before, which makes the server quit, and a new session started then fails."""
    argv = ["tmux", "new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), command]
    for _ in range(20):
        done = subprocess.run(argv, capture_output=True, text=True, env=env)
        if done.returncode == 0:
            return
        time.sleep(0.25)
    raise AssertionError(f"tmux new-session failed: {done.stderr.strip()}")


def screen_until(name: str, text: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    shown = ""
    while time.monotonic() < deadline:
        shown = tmux("capture-pane", "-p", "-t", name)
        if text in shown:
            return shown
        time.sleep(0.1)
    raise AssertionError(f"{text!r} not on screen; screen was:\n{shown}")


@pytest.fixture
def session_name():  # type: ignore[no-untyped-def]
    name = f"pitree-test-{uuid.uuid4().hex[:8]}"
    yield name
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def test_demo_in_a_real_terminal(session_name: str, tmp_path: Path) -> None:
    env = {**os.environ, "TERM": "xterm-256color", "HOME": str(tmp_path)}
    new_session(session_name, 150, 45, f"{PITREE} --demo; sleep 30", env)
    shown = screen_until(session_name, "← leaf")
    assert "weather-cli: caching & retries" in shown and "88 entries" in shown
    assert "[compaction: 48.1k" in shown
    tmux("send-keys", "-t", session_name, "C-u")
    screen_until(session_name, "[user-only]")
    tmux("send-keys", "-t", session_name, "C-d")
    tmux("send-keys", "-t", session_name, "/")
    time.sleep(0.3)
    tmux("send-keys", "-t", session_name, "-l", "cache.py")
    screen_until(session_name, "matches")
    tmux("send-keys", "-t", session_name, "Enter", "q")  # in one write: q must not be typed into the closing search
    deadline = time.monotonic() + 10
    while "← leaf" in tmux("capture-pane", "-p", "-t", session_name) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "← leaf" not in tmux("capture-pane", "-p", "-t", session_name)  # q quit the app


def test_sessions_browser_in_a_real_terminal(session_name: str, tmp_path: Path) -> None:
    """`pitree` with no file on a store it never indexed: the newest rows on the first screen, then all of them."""
    from tests.sessions import user
    from tests.unit.test_session_index import write

    store = tmp_path / "sessions"
    for i in range(40):
        sid = f"{i:08x}-0000-7000-8000-000000000000"
        path = write(store / "--w--", sid, "/w", [user("u1", None, f"task number {i}", t=i)], when=i)
        os.utime(path, ns=(1_700_000_000_000_000_000 + i * 10**9,) * 2)  # written in this order
    settings = f"PITREE_CACHE_DIR={tmp_path / 'cache'} PITREE_CONFIG={tmp_path / 'config.toml'} HOME={tmp_path}"
    new_session(session_name, 150, 45, f"env TERM=xterm-256color {settings} {PITREE} --session-dir {store}; sleep 30")
    first = screen_until(session_name, "Pi sessions")
    assert "0 of 16 sessions" in first or "0 of 40 sessions" in first  # none from this folder; the newest indexed
    tmux("send-keys", "-t", session_name, "Tab")
    shown = screen_until(session_name, "40 of 40 sessions")
    assert shown.index("task number 39") < shown.index("task number 38")  # newest first
    deadline = time.monotonic() + 20
    while "(x stops)" in tmux("capture-pane", "-p", "-t", session_name) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "(x stops)" not in tmux("capture-pane", "-p", "-t", session_name)  # the head no longer says indexing
    tmux("send-keys", "-t", session_name, "q")
