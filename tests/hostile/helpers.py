"""Shared pieces of the hostile-input tests: what "unsafe for a terminal" means, hostile strings, runners."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[2]

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u180e\u2061\u2062\u2063\u2064\u00ad\U000e0001\U000e0041\U000e007f"

# One of each kind of thing a terminal could act on, or that hides or reorders text.
HOSTILE = (
    "csi \x1b[31mred\x1b[0m \x1b[2J\x1b[H clear"
    " osc52 \x1b]52;c;aGVsbG8=\x07 osc0 \x1b]0;pwned title\x07 osc8 \x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\"
    " dcs \x1bP1$qm\x1b\\ c1 \x9b31m \x9d0;t\x9c \x85 nul \x00 bel \x07 bs \x08 del \x7f cr \r"
    " bidi \u202eevil\u202c \u2066iso\u2069 zw a\u200bb\u200dc\ufeffd tag \U000e0041\U000e0042 shy \u00ad"
    " markup [bold red]x[/] [link=http://evil/]click[/link] [/]"
)


def is_unsafe(ch: str) -> bool:
    """A character that must never reach the terminal as itself (newline and tab aside, which callers allow)."""
    code = ord(ch)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return True
    if ch in BIDI or ch in ZERO_WIDTH or ch in "\u2028\u2029":
        return True
    return unicodedata.category(ch) == "Cf"  # format characters: invisible, reorder or join text


def unsafe_chars(text: str, allow: str = "") -> list[str]:
    """The unsafe characters in `text` (with U+ codes), `allow` excepted."""
    return sorted({f"U+{ord(c):04X}" for c in text if c not in allow and is_unsafe(c)})


def lines(entries: list[dict[str, Any]], header: dict[str, Any] | None) -> bytes:
    rows = ([header] if header is not None else []) + entries
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


def run_cli(
    *args: str | Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    """`python -m pitree.cli.main ARGS` in a subprocess (not a terminal), as a script would run it."""
    return subprocess.run(
        [sys.executable, "-m", "pitree.cli.main", *map(str, args)],
        capture_output=True,
        timeout=timeout,
        env=env if env is not None else os.environ.copy(),
        stdin=subprocess.DEVNULL,
    )


def cli_json(*args: str | Path) -> Any:
    out = run_cli(*args, "--json")
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    return orjson.loads(out.stdout)


def wait_for(condition: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {timeout} s")
        time.sleep(0.01)


async def until(pilot: Any, condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.02)


def screen_output(app: Any) -> tuple[str, str]:
    """The app's current screen as (plain text, the bytes Textual would send to a terminal), like a screenshot."""
    import io

    from rich.console import Console

    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    sent = console.file.getvalue()  # type: ignore[attr-defined]
    return console.export_text(styles=False), sent


_CSI = None


def foreign_sequences(sent: str) -> list[str]:
    """Escape sequences in terminal output other than the CSI ones Textual itself draws with (SGR, moves)."""
    import re

    global _CSI
    if _CSI is None:
        _CSI = re.compile(r"\x1b\[[0-9;:?<=>]*[ -/]*[@-~]")
    rest = _CSI.sub("", sent)
    found = [rest[max(0, i - 10) : i + 20] for i, c in enumerate(rest) if c == "\x1b" or 0x80 <= ord(c) <= 0x9F]
    return found[:5]


def assert_screen_safe(app: Any, svg: bool = True) -> str:
    """Fail if anything on screen is a raw control/format character or an injected escape sequence."""
    plain, sent = screen_output(app)
    assert not unsafe_chars(plain, allow="\n"), unsafe_chars(plain, allow="\n")
    assert not foreign_sequences(sent), foreign_sequences(sent)
    if svg:
        shot = app.export_screenshot()
        assert "\x1b" not in shot and not any(c in shot for c in BIDI)
    return plain
