"""`python -m pitree.cli.serve` end to end: headless Chromium opens the page, the tree renders, keys reach the app.
Plus the serve module's own edges: the command it runs, a taken port, textual-serve missing."""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pitree.cli import serve as serve_mod

from tests.browser.conftest import ServedApp, port_answers, terminal_text, wait_for_terminal_text


def first_user_row(session: Path) -> str:
    """How the tree starts the first user message's row (its text's first words), read from the file itself."""
    for line in session.read_text().splitlines():
        entry = json.loads(line)
        message = entry.get("message") or {}
        if entry["type"] == "message" and message.get("role") == "user":
            content = message["content"]
            text = content if isinstance(content, str) else next(c["text"] for c in content if c["type"] == "text")
            return "user: " + text[:24]
    raise AssertionError("no user message")


def selected_row(page: Any) -> str:
    """The tree's half of the row marked `›` (the entry pane to its right, after `▕`, updates on its own time)."""
    rows = [r.split("▕")[0].rstrip() for r in (terminal_text(page) or "").splitlines() if r.startswith("›")]
    assert len(rows) == 1, rows
    return rows[0]


def wait_for_change(page: Any, before: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = selected_row(page)
        if now != before:
            return now
        page.wait_for_timeout(50)
    raise AssertionError(f"the selection stayed on {before!r}")


def test_served_demo_renders_and_takes_keys(
    served_app: ServedApp, chromium_page: Any, outside_requests: list[str], tmp_path: Path
) -> None:
    page = chromium_page
    first = first_user_row(served_app.file)
    page.goto(served_app.url)
    # The tree (its first user message), the entry pane (the leaf's header) and the status bar, all drawn.
    wait_for_terminal_text(page, first, "← leaf", f"{served_app.file.name} · ", " entries · ", timeout=60)
    page.screenshot(path=str(tmp_path / "served.png"))

    page.locator(".xterm-helper-textarea").focus()  # xterm.js takes keys through its hidden textarea
    start = selected_row(page)
    page.keyboard.press("k")
    moved = wait_for_change(page, start)
    page.keyboard.press("ArrowDown")
    assert wait_for_change(page, moved) == start

    page.keyboard.press("?")
    wait_for_terminal_text(page, "previous / next entry")
    page.keyboard.press("Escape")
    wait_for_terminal_text(page, first)
    assert selected_row(page) == start

    # Everything the page needed came from the server: textual-serve's Google Fonts link is replaced.
    assert outside_requests == []


def test_listens_on_127_0_0_1_only(served_app: ServedApp) -> None:
    assert port_answers(served_app.port)
    # All of 127/8 is loopback on Linux: a server bound to 0.0.0.0 would answer here, one on 127.0.0.1 does not.
    with pytest.raises(OSError), socket.create_connection(("127.0.0.2", served_app.port), timeout=2):
        pass


def test_a_taken_port_is_a_clear_error(served_app: ServedApp) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pitree.cli.serve", "--port", str(served_app.port), str(served_app.file)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert f"port {served_app.port} on 127.0.0.1 is already in use" in out.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{missing}"], "no such file"),
        (["{dir}"], "is a directory"),
        ([], "give a session FILE or --demo"),
        (["--port", "70000", "{file}"], "not between 1 and 65535"),
    ],
)
def test_bad_arguments(
    tmp_path: Path, demo_copy: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    subs = {"{missing}": str(tmp_path / "nope.jsonl"), "{dir}": str(tmp_path), "{file}": str(demo_copy)}
    assert serve_mod.main([subs.get(a, a) for a in argv]) == 1
    assert message in capsys.readouterr().err


def test_the_command_is_this_interpreter_with_quoted_paths(tmp_path: Path) -> None:
    odd = tmp_path / "it's a $HOME; rm -rf `x`.jsonl"
    command = serve_mod.app_command([str(odd)])
    # -P: not the cwd's pitree
    assert shlex.split(command) == [sys.executable, "-P", "-m", "pitree.widgets.main", str(odd)]
    with pytest.raises(serve_mod.ServeError):
        serve_mod.app_command(["--serve", str(odd)])


def test_without_textual_serve_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)  # makes the import raise ImportError
    with pytest.raises(serve_mod.ServeError, match=r"pip install 'pitree\[serve\]'"):
        serve_mod.serve(["x.jsonl"], 8000)


def test_the_page_template_still_has_the_font_link_we_replace() -> None:
    # If textual-serve changes its template, the replacement silently stops; the e2e test's outside_requests
    # check would catch it too, but only where a browser is installed.
    Server = pytest.importorskip("textual_serve.server").Server

    page = (Path(Server("x").templates_path) / "app_index.html").read_text()
    assert serve_mod._GOOGLE_FONTS in page
