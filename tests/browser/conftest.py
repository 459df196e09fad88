"""Browser fixtures: a Playwright page in Debian's headless Chromium, and `python -m pitree.cli.serve` on a free port.

`chromium_page` is generic (one browser per test session, a fresh context and page per test). Without playwright or
/usr/bin/chromium the tests skip; with CI_REQUIRE_BROWSER=1 (set by .ci/run) they fail instead, so CI cannot pass
by skipping. Helpers `terminal_text` / `wait_for_terminal_text` read textual-serve's xterm.js screen.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REQUIRE = os.environ.get("CI_REQUIRE_BROWSER") == "1"

# xterm.js draws on a canvas, so the screen is not in the DOM and textual.js keeps its Terminal private. Its one
# `this.terminal = new Terminal(...)` assignment goes through this Object.prototype setter, which keeps a handle.
CAPTURE_TERMINAL = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    if (value && value.buffer && !window.__pitreeTerminal) window.__pitreeTerminal = value;
    Object.defineProperty(this, "terminal", {value, writable: true, configurable: true, enumerable: true});
  },
});
"""
READ_SCREEN = """() => {
  const t = window.__pitreeTerminal;
  if (!t) return null;
  const b = t.buffer.active, rows = [];
  for (let y = 0; y < t.rows; y++) {
    const line = b.getLine(b.viewportY + y);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows.join("\\n");
}"""


def _unavailable(reason: str) -> None:
    if REQUIRE:
        pytest.fail(f"CI_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


# Package scope, not session: while Playwright's sync API is running, its event loop is current in this thread and
# every later pytest-asyncio test fails ("Runner.run() cannot be called from a running event loop").
@pytest.fixture(scope="package")
def chromium_browser() -> Iterator[Any]:
    """Headless Debian Chromium driven by Playwright (never a downloaded browser), shared by tests/browser."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as pw:
        # Playwright's launch() gives Chromium a fresh temporary --user-data-dir of its own (and refuses one from us).
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=60_000)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def outside_requests() -> list[str]:
    """URLs the page tried to fetch from anywhere but 127.0.0.1 (they were aborted); ask for it with chromium_page."""
    return []


@pytest.fixture
def chromium_page(chromium_browser: Any, outside_requests: list[str]) -> Iterator[Any]:
    """A fresh page (own context: no shared cookies or storage) at 1280x800. Requests leaving 127.0.0.1 are
    aborted and listed in the `outside_requests` fixture, so a test can assert a page needs no network."""
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(20_000)
    context.add_init_script(CAPTURE_TERMINAL)
    outside = outside_requests

    def route(r: Any) -> None:
        url = r.request.url
        if url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:", "file:")):
            r.continue_()
        else:
            outside.append(url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


def terminal_text(page: Any) -> str | None:
    """The visible rows of textual-serve's xterm.js screen, or None before the terminal exists."""
    text: str | None = page.evaluate(READ_SCREEN)
    return text


def wait_for_terminal_text(page: Any, *wanted: str, timeout: float = 30.0) -> str:
    """Poll the xterm.js screen until every string in `wanted` is on it at once; a failure shows the last screen."""
    deadline = time.monotonic() + timeout
    shown: str | None = None
    while time.monotonic() < deadline:
        shown = terminal_text(page)
        if shown is not None and all(w in shown for w in wanted):
            return shown
        page.wait_for_timeout(100)
    raise AssertionError(f"{wanted!r} not all on the browser's terminal; it showed:\n{shown}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def port_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class ServedApp:
    url: str
    port: int
    file: Path
    process: subprocess.Popen[bytes]
    log: Path


# What the README tells users to run (`python -m pitree.cli.serve` is the same serve() without the rest of the CLI).
SERVE = [sys.executable, "-m", "pitree.widgets.main", "--serve"]


@pytest.fixture
def served_app(demo_copy: Path, tmp_path: Path) -> Iterator[ServedApp]:
    """The demo copy served on a free 127.0.0.1 port; the server and every app it started die at teardown."""
    with serving(demo_copy, tmp_path) as app:
        yield app


@contextmanager
def serving(
    session: Path,
    tmp_path: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    server: list[str] = SERVE,
) -> Iterator[ServedApp]:
    """`pitree --serve --port P SESSION` run from `cwd`, until its printed URL (with the run's secret) is known."""
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        # Own process group: the app subprocesses textual-serve spawns per tab are killed with it.
        proc = subprocess.Popen(
            [*server, "--port", str(port), str(session)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=cwd,
            env=env,
        )
    try:
        deadline = time.monotonic() + 30
        url = None
        while url is None:
            found = re.search(rf"http://127\.0\.0\.1:{port}/[A-Za-z0-9_-]+/", log.read_text(errors="replace"))
            url = found.group() if found and port_answers(port) else None
            if proc.poll() is not None:
                raise AssertionError(f"server exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
            if time.monotonic() > deadline:
                raise AssertionError(f"server did not listen on {port}:\n{log.read_text(errors='replace')}")
            time.sleep(0.05)
        yield ServedApp(url, port, session, proc, log)
    finally:
        if proc.poll() is None:
            proc.terminate()  # SIGTERM: textual-serve shuts down gracefully and tells its apps to quit
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever of this group is left (only processes we started)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)
