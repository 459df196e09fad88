"""Terminal safety: escape sequences (CSI, OSC incl. OSC 52, DCS), C0/C1 controls, bidi overrides, zero-width and
other format characters in every text field are shown as visible symbols and never emitted; Rich markup in
content is shown literally. Checked on the CLI's text output bytes, on what the TUI sends to the terminal
(pilot), and in a real terminal (tmux: no title change, no clipboard write).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.widgets.app import PitreeApp
from pitree.widgets.entry_view import EntryView
from pitree.widgets.tree_view import TreeView

from tests.hostile.helpers import HOSTILE, assert_screen_safe, run_cli, unsafe_chars, until
from tests.sessions import assistant, entry, header, message, tool_result, user

X = HOSTILE
MARKUP = ("[bold red]x[/]", "[link=http://evil/]click[/link]")


def hostile_entries() -> list[dict[str, Any]]:
    """Every text field Pi writes, each carrying the whole hostile string."""
    return [
        entry("model_change", "h0000001", None, t=1, provider=X, modelId=X),
        entry("thinking_level_change", "h0000002", "h0000001", t=2, thinkingLevel=X),
        user("h0000003", "h0000002", X, t=3),
        assistant(
            "h0000004",
            "h0000003",
            X,
            t=4,
            thinking=X,
            calls=(
                ("c1", "read", {"path": X, "offset": 1, "limit": 2}),
                ("c2", X, {X: X}),
                ("c3", "bash", {"command": X}),
            ),
            provider=X,
            model=X,
            errorMessage=X,
            stop="error",
        ),
        tool_result("h0000005", "h0000004", "c1", name="read", text=X, t=5),
        tool_result("h0000006", "h0000005", "c2", name=X, text=X, t=6, error=True),
        message("h0000007", "h0000006", "bashExecution", t=7, command=X, output=X, exitCode=1),
        message("h0000008", "h0000007", X, t=8, content=X),  # an unknown role named like an attack
        entry(
            "compaction",
            "h0000009",
            "h0000008",
            t=9,
            summary=X,
            firstKeptEntryId="h0000003",
            tokensBefore=1234,
            details={"readFiles": [X], "modifiedFiles": [X]},
        ),
        entry("branch_summary", "h0000010", "h0000009", t=10, summary=X, fromId=X, details={"readFiles": [X]}),
        entry("custom_message", "h0000011", "h0000010", t=11, customType=X, content=X, display=True),
        entry("custom", "h0000012", "h0000011", t=12, customType=X, data={X: X}),
        entry("label", "h0000013", "h0000012", t=13, targetId="h0000003", label=X),
        entry("session_info", "h0000014", "h0000013", t=14, name=X),
        entry(X, "h0000015", "h0000014", t=15, **{X: X}),  # unknown type, unknown field
        user("h0000016", "h0000015", "the " + MARKUP[0] + " and " + MARKUP[1], t=16),
    ]


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.jsonl"
    head = header(cwd=X, parentSession=X, provider=X, modelId=X)
    lines = [orjson.dumps(head)] + [orjson.dumps(e) for e in hostile_entries()]
    lines.append(b"not json " + X.encode())  # a skipped line's reason quotes the parse error
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


# ---- CLI ---------------------------------------------------------------------------------------------------

TEXT_COMMANDS = [
    ["tree", "--filter", "all"],
    ["tree", "--filter", "default"],
    ["tree", "--filter", "labeled-only"],
    ["tree", "--search", "csi"],
    ["info"],
    ["context"],
    ["context", "--leaf", "h0000009"],
    ["compactions"],
]


@pytest.mark.parametrize("args", TEXT_COMMANDS, ids=lambda a: "-".join(a).replace("--", ""))
def test_cli_text_output_is_safe(hostile: Path, args: list[str]) -> None:
    out = run_cli(args[0], hostile, *args[1:])
    assert out.returncode == 0, out.stderr.decode()
    text = out.stdout.decode("utf-8")
    # Every field, ids included, is made safe before it is printed.
    assert not unsafe_chars(text, allow="\n"), unsafe_chars(text, allow="\n")
    assert "␛" in text or args[0] == "context"  # the escapes are there, made visible
    assert not unsafe_chars(out.stderr.decode("utf-8"), allow="\n")


def test_cli_shows_markup_literally(hostile: Path) -> None:
    out = run_cli("tree", hostile, "--filter", "all")
    text = out.stdout.decode()
    assert "user: the [bold red]x[/] and [link=http://evil/]click[/link]" in text


def test_cli_write_commands_echo_nothing_raw(hostile: Path) -> None:
    out = run_cli("label", hostile, "h0000016", X.replace("\x00", ""), "--yes")  # argv cannot hold NUL
    assert out.returncode == 0, out.stderr.decode()
    assert not unsafe_chars(out.stdout.decode() + out.stderr.decode(), allow="\n")
    out = run_cli("branch", hostile, "--to", "h0000003", "--yes", "--summary", "extractive")
    assert out.returncode == 0, out.stderr.decode()
    assert not unsafe_chars(out.stdout.decode() + out.stderr.decode(), allow="\n")
    data = orjson.loads(run_cli("tree", hostile, "--json", "--filter", "all").stdout)
    assert data["entries"] == len(hostile_entries()) + 2


def test_cli_text_with_hostile_ids_and_times(tmp_path: Path) -> None:
    path = tmp_path / "ids.jsonl"
    evil = "id\x1b]0;pwned\x07"
    entries = [
        user(evil, None, "x", t=1) | {"timestamp": 1e300},
        entry("compaction", "c\x1b[2J", evil, summary="s", firstKeptEntryId=evil, tokensBefore=1),
    ]
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [header(), *entries]))
    text = ""
    for args in (["tree"], ["context"], ["compactions"], ["info"]):
        out = run_cli(args[0], path)
        assert out.returncode == 0, out.stderr.decode()
        text += out.stdout.decode()
    assert not unsafe_chars(text, allow="\n")


# ---- TUI (pilot) -------------------------------------------------------------------------------------------


async def test_tui_never_sends_session_text_raw(hostile: Path) -> None:
    app = PitreeApp(hostile, watch=False, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view, entry_view = app.query_one(TreeView), app.query_one(EntryView)
        await pilot.press("ctrl+a")  # every entry on a row
        ids = [n.id for n in app.explorer.stree.nodes]
        for eid in ids:
            assert view.select_id(eid) or eid == "h0000004"
            await until(pilot, lambda: entry_view.node is view.cursor_node, timeout=20)
            await pilot.pause(0.02)
            assert_screen_safe(app, svg=False)
        await pilot.press("r")  # the raw JSON of the line as stored
        await pilot.pause(0.1)
        assert_screen_safe(app)
        view.select_id("h0000016")
        await until(pilot, lambda: entry_view.node is view.cursor_node)
        await pilot.pause(0.1)
        await pilot.press("r")
        await pilot.pause(0.1)
        plain = assert_screen_safe(app)
        assert MARKUP[0] in plain and MARKUP[1] in plain  # literal, never a style or a link
        assert "␛]52;c;" in plain  # OSC 52 is on screen as text
        for key in ("s", "escape", "question_mark", "escape", "slash"):
            await pilot.press(key)
            await pilot.pause(0.05)
            assert_screen_safe(app)
        await pilot.press(*"\x1b[31m", "enter")  # typed into the search box
        assert_screen_safe(app)


# ---- a real terminal (tmux) --------------------------------------------------------------------------------

PITREE = Path(sys.executable).with_name("pitree")


@pytest.mark.skipif(shutil.which("tmux") is None or not PITREE.exists(), reason="needs tmux and the pitree script")
def test_tmux_sees_no_title_change_and_no_clipboard_write(hostile: Path, tmp_path: Path) -> None:
    socket = f"pitree-hostile-{uuid.uuid4().hex[:8]}"  # a private tmux server: its options touch nothing else

    def tmux(*args: str) -> str:
        out = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=20)
        return out.stdout

    env = {**os.environ, "TERM": "xterm-256color", "HOME": str(tmp_path)}
    try:
        subprocess.run(
            [
                "tmux",
                "-L",
                socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "h",
                "-x",
                "160",
                "-y",
                "45",
                f"{PITREE} {hostile}; sleep 30",
            ],
            check=True,
            env=env,
        )
        tmux("set-option", "-g", "set-clipboard", "on")  # an OSC 52 that got through would fill a buffer
        tmux("set-option", "-g", "allow-rename", "on")
        title = tmux("display-message", "-p", "-t", "h", "#{pane_title}")
        deadline = time.monotonic() + 30
        shown = ""
        while time.monotonic() < deadline:
            shown = tmux("capture-pane", "-p", "-e", "-t", "h")
            if "← leaf" in shown or "csi" in shown:
                break
            time.sleep(0.1)
        assert "csi" in shown, shown
        for keys in (["C-a"], ["Home"], ["Down"], ["Down"], ["Down"], ["r"], ["End"]):
            tmux("send-keys", "-t", "h", *keys)
        deadline = time.monotonic() + 5
        while "␛" not in shown and time.monotonic() < deadline:
            shown = tmux("capture-pane", "-p", "-e", "-t", "h")
            time.sleep(0.1)
        assert "␛" in shown  # the escapes are on screen, as symbols
        assert "pwned" not in tmux("display-message", "-p", "-t", "h", "#{pane_title} #{window_name}")
        assert tmux("display-message", "-p", "-t", "h", "#{pane_title}") == title
        assert tmux("list-buffers") == ""  # no OSC 52 reached the terminal
        plain = tmux("capture-pane", "-p", "-t", "h")
        assert not [c for c in unsafe_chars(plain, allow="\n") if c != "U+001B"]
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)


async def test_the_screen_check_can_fail() -> None:
    """A widget that shows session text raw is caught (so the checks above mean something)."""
    from rich.text import Text
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    class Raw(App[None]):
        def compose(self) -> ComposeResult:
            yield Static(Text("raw \x1b]52;c;aGk=\x07 \u202eevil"))

    app = Raw()
    async with app.run_test(size=(60, 5)) as pilot:
        await pilot.pause(0.05)
        with pytest.raises(AssertionError):
            assert_screen_safe(app)
