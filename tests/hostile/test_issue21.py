"""Issue #21's reproductions, one test per item (items 5, 8 and 10 are the summary backends'): ids and other
session text reach no output raw, markup in an id is never parsed, the sessions index survives concurrent
creation and a lock held by another process."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from pitree.widgets.app import PitreeApp
from pitree.widgets.screens.context_view import ContextScreen
from pitree.widgets.screens.jump_dialog import JumpDialog
from pitree.widgets.screens.text_screen import TextScreen

from tests.hostile.helpers import assert_screen_safe, run_cli, unsafe_chars, until
from tests.sessions import assistant, entry, header, user

# Item 1's id: clears the screen and retitles the terminal if printed raw; C1 CSI and RLO (item 7); markup (item 2).
EVIL = "x\u001b[2J\u001b]0;PWNED\u001b\\\u009b31m\u202eevil\u001b]52;c;aGk=\u0007\u001b]8;;http://e/\u001b\\"
MARKUP_ID = "[/bold][@click=app.quit]X[/]"
CLICK_ID = "[@click=app.quit]click me[/]"


def evil_session(tmp_path: Path, suffix: str = EVIL) -> Path:
    """A session whose every id (and model name) carries `suffix`, with a compaction and a fork."""
    u1, a1, c1, u2, u3 = (f"{p}{suffix}" for p in ("u1", "a1", "c1", "u2", "u3"))
    entries = [
        user(u1, None, "first", t=1),
        assistant(a1, u1, "answer", t=2, model="m" + suffix, provider="p" + suffix),
        entry("compaction", c1, a1, t=3, summary="sum", firstKeptEntryId=u1, tokensBefore=50),
        user(u2, c1, "second", t=4),
        user(u3, a1, "a fork", t=5),
        assistant("a2" + suffix, u2, "leaf answer", t=6, model="m" + suffix, provider="p" + suffix),
    ]
    path = tmp_path / "evil.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [header(), *entries]))
    return path


# ---- item 1: ids in every CLI text output ----------------------------------------------------------------


@pytest.mark.parametrize("command", ["usage", "tree", "context", "compactions", "info"])
def test_item1_cli_text_prints_no_id_raw(tmp_path: Path, command: str) -> None:
    out = run_cli(command, evil_session(tmp_path))
    assert out.returncode == 0, out.stderr.decode()
    text = out.stdout.decode()
    assert not unsafe_chars(text, allow="\n"), unsafe_chars(text, allow="\n")
    assert "␛]0;PWNED" in text  # the id is there, made visible


def test_item1_cli_error_quoting_an_id_is_safe(tmp_path: Path) -> None:
    out = run_cli("context", evil_session(tmp_path), "--leaf", "zz\x1b]0;PWNED\x07")
    assert out.returncode == 1
    assert not unsafe_chars(out.stderr.decode(), allow="\n"), out.stderr


# ---- item 7: C1 CSI and RLO in JSON --------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["usage", "tree", "context", "compactions", "info"])
def test_item7_json_escapes_c1_and_bidi_yet_parses_to_the_same_ids(tmp_path: Path, command: str) -> None:
    out = run_cli(command, evil_session(tmp_path), "--json")
    assert out.returncode == 0, out.stderr.decode()
    raw = out.stdout.decode()
    assert not unsafe_chars(raw, allow="\n"), unsafe_chars(raw, allow="\n")
    assert "\\u009b" in raw and "\\u202e" in raw
    ids = {f"{p}{EVIL}" for p in ("u1", "a1", "c1", "u2", "u3", "a2")}
    assert ids & set(_strings(orjson.loads(out.stdout)))  # the same data: escapes are JSON's own


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


# ---- items 1 and 2 in the TUI --------------------------------------------------------------------------------


def _app(path: Path) -> PitreeApp:
    return PitreeApp(path, watch=False, config_overrides={"summarizer": "extractive"})


async def test_item1_usage_screen_context_view_and_jump_dialog_show_ids_safely(tmp_path: Path) -> None:
    path = evil_session(tmp_path)
    app = _app(path)
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        await pilot.press("u")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        await pilot.pause(0.05)
        assert "␛]0;PWNED" in assert_screen_safe(app)
        await pilot.press("escape")
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ContextScreen))
        await pilot.pause(0.1)
        plain = assert_screen_safe(app)
        assert "after compaction c1x␛[2J" in plain  # the compaction id in the header, made visible
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ContextScreen))
        assert app.explorer.tree_view.select_id("u3" + EVIL)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JumpDialog))
        await pilot.pause(0.1)
        assert "u3x␛[2J" in assert_screen_safe(app)


@pytest.mark.writes_session
@pytest.mark.parametrize("bad_id", [MARKUP_ID, CLICK_ID])
async def test_item2_new_leaf_notification_never_parses_markup(tmp_path: Path, bad_id: str) -> None:
    path = evil_session(tmp_path, suffix="")
    app = _app(path)
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        with open(path, "ab") as fh:  # another writer: a new leaf on another branch, its id broken markup
            fh.write(orjson.dumps(user(bad_id, "u1", "elsewhere", t=9)) + b"\n")
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        await until(pilot, lambda: any("new leaf" in str(n.message) for n in app._notifications))
        note = next(n for n in app._notifications if "new leaf" in str(n.message))
        assert bad_id in note.message and not note.markup
        await pilot.pause(0.1)
        assert_screen_safe(app)
        assert app.is_running  # a parsed `[@click=app.quit]` would be an action; broken markup a crash


def test_item7_json_safe_escapes_every_unsafe_character_and_nothing_else() -> None:
    from pitree.session.text import UNSAFE_RANGES, json_safe

    unsafe = "".join(chr(c) for lo, hi in UNSAFE_RANGES for c in range(lo, hi + 1))
    kept = "é → ✓ 日本 😀 \u00a0 … — [bold]"
    raw = orjson.dumps({unsafe + kept: [unsafe, kept]})
    safe = json_safe(raw)
    assert orjson.loads(safe) == orjson.loads(raw)
    text = safe.decode()
    assert not unsafe_chars(text), unsafe_chars(text)
    assert kept in text  # only the unsafe ones are escaped
    plain = orjson.dumps({"a": kept})
    assert json_safe(plain) is plain
