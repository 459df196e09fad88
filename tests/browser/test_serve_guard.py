"""The browser mode's guard (issue #21 item 9) and launch (issue #20): only pages from this server, under this
run's secret, reach the app; the served app starts from any folder. Raw HTTP and WebSocket, no browser needed."""

from __future__ import annotations

import base64
import os
import socket
import struct
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from pitree.cli.serve import refusal

from tests.browser.conftest import ServedApp, serving

SECRET = "s3cr3t-token"


@pytest.mark.parametrize(
    ("host", "origin", "path", "allowed"),
    [
        ("127.0.0.1:8000", None, f"/{SECRET}/", True),
        ("localhost:8000", "http://localhost:8000", f"/{SECRET}/ws", True),
        ("127.0.0.1:8000", "http://127.0.0.1:8000", f"/{SECRET}/static/js/textual.js", True),
        ("127.0.0.1:8000", None, "/", False),  # no secret
        ("127.0.0.1:8000", None, "/s3cr3t-tokex/", False),  # a wrong one
        ("127.0.0.1:8000", None, f"/{SECRET}x/", False),
        ("evil.example:8000", None, f"/{SECRET}/", False),  # DNS rebinding: another name for 127.0.0.1
        ("127.0.0.1:8001", None, f"/{SECRET}/", False),
        (None, None, f"/{SECRET}/", False),
        ("127.0.0.1:8000", "http://evil.example", f"/{SECRET}/ws", False),  # another site's page
        ("127.0.0.1:8000", "null", f"/{SECRET}/ws", False),
        ("127.0.0.1:8000", "http://127.0.0.1:8001", f"/{SECRET}/ws", False),
    ],
)
def test_refusal_rules(host: str | None, origin: str | None, path: str, allowed: bool) -> None:
    assert (refusal(host, origin, path, 8000, SECRET) is None) == allowed


def _request(app: ServedApp, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, socket.socket]:
    """Send one GET with exactly these headers; (status, head and what came with it, the open socket)."""
    sock = socket.create_connection(("127.0.0.1", app.port), timeout=20)
    lines = [f"GET {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1]), data, sock


def _ws_headers(app: ServedApp, origin: str | None) -> dict[str, str]:
    h = {
        "Host": f"127.0.0.1:{app.port}",
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
        "Sec-WebSocket-Version": "13",
    }
    if origin is not None:
        h["Origin"] = origin
    return h


@pytest.fixture
def served(demo_copy: Path, tmp_path: Path) -> ServedApp:  # type: ignore[misc]
    with serving(demo_copy, tmp_path) as app:
        yield app


def test_pages_need_the_secret_the_right_host_and_origin(served: ServedApp) -> None:
    secret_path = urlsplit(served.url).path
    good = {"Host": f"127.0.0.1:{served.port}", "Connection": "close"}
    status, data, _ = _request(served, secret_path, good)
    assert status == 200, data
    assert _request(served, secret_path, {**good, "Host": f"localhost:{served.port}"})[0] == 200
    for path, headers in [
        ("/", good),
        (secret_path.rstrip("/") + "x/", good),
        ("/static/js/textual.js", good),
        (secret_path, {**good, "Host": f"attacker.example:{served.port}"}),
        (secret_path, {**good, "Origin": "http://attacker.example"}),
    ]:
        assert _request(served, path, headers)[0] == 403, (path, headers)


def test_websocket_from_another_origin_or_without_the_secret_is_refused(served: ServedApp) -> None:
    ws = urlsplit(served.url).path + "ws"
    assert _request(served, ws, _ws_headers(served, "http://attacker.example"))[0] == 403
    assert _request(served, "/ws", _ws_headers(served, f"http://127.0.0.1:{served.port}"))[0] == 403
    rebinding = {
        **_ws_headers(served, f"http://attacker.example:{served.port}"),
        "Host": f"attacker.example:{served.port}",
    }
    assert _request(served, ws, rebinding)[0] == 403
    status, _, sock = _request(served, ws, _ws_headers(served, f"http://127.0.0.1:{served.port}"))
    sock.close()
    assert status == 101  # the page's own WebSocket is accepted


def _frames(sock: socket.socket, data: bytes, wanted: bytes, timeout: float) -> bytes:
    """Server-to-client WebSocket payloads (unmasked frames) read until `wanted` shows up or time runs out."""
    buf, seen = data.split(b"\r\n\r\n", 1)[1], b""
    deadline = time.monotonic() + timeout
    sock.settimeout(1)
    while wanted not in seen and time.monotonic() < deadline:
        while len(buf) >= 2:
            length, start = buf[1] & 0x7F, 2
            if length == 126:
                (length,), start = struct.unpack(">H", buf[2:4]), 4
            elif length == 127:
                (length,), start = struct.unpack(">Q", buf[2:10]), 10
            if len(buf) < start + length:
                break
            seen += buf[start : start + length]
            buf = buf[start + length :]
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        buf += chunk
    return seen


def test_serves_from_a_folder_holding_a_pitree_directory_and_says_so_once(demo_copy: Path, tmp_path: Path) -> None:
    """Issue #20: after `git clone …/pitree && cd` the current folder holds `pitree/`; the served app must still
    import the installed package (it died with ImportError), and the URL is printed once."""
    clone = tmp_path / "clone"
    (clone / "pitree").mkdir(parents=True)
    (clone / "pitree" / "__init__.py").write_text("# a checkout, not the installed package\n")
    # Without the file guard's sitecustomize: it imports the real package before the clone's could shadow it.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PITREE_FILE_GUARD_LOG")}
    script = Path(sys.executable).with_name("pitree")  # as a user starts it (`python -m` would import the clone)
    with serving(demo_copy, tmp_path, cwd=clone, env=env, server=[str(script), "--serve"]) as app:
        status, data, sock = _request(app, urlsplit(app.url).path + "ws?width=120&height=30", _ws_headers(app, None))
        assert status == 101
        seen = _frames(sock, data, b"entries", timeout=60)
        sock.close()
        assert b"entries" in seen, seen[-2000:]  # the status bar: the explorer runs
        assert b"ImportError" not in seen
        log = app.log.read_text(errors="replace")
        assert log.count("serving") == 1, log
