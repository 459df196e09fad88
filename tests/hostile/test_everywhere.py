"""Issue #21's closing property: ids, names, paths and model names made of escape sequences, C1 and format
characters and Rich markup go through every CLI command (text and JSON), every screen and every notification,
and nothing reaches the output raw: no control or format character, no escape sequence, no parsed markup.

CLI commands run in this process (`pitree.cli.main.main` with stdout/stderr captured as bytes) so that a hypothesis
example costs milliseconds per command; the TUI runs in Textual's pilot on fewer examples.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pitree.cli import main as cli
from pitree.widgets.app import PitreeApp
from pitree.widgets.tree_view import TreeView

from tests.hostile.helpers import assert_screen_safe, unsafe_chars, until
from tests.sessions import assistant, entry, header, tool_result, user

FRAGMENTS = [
    "\x1b[2J",
    "\x1b]0;PWNED\x07",
    "\x1b]52;c;aGk=\x07",
    "\x1b]8;;http://e/\x1b\\",
    "\x1bP1$qm\x1b\\",
    "\x9b31m",
    "\x9d0;t\x9c",
    "\x85",
    "\u202e",
    "\u2066",
    "\u200b",
    "\ufeff",
    "\U000e0041",
    "\u00ad",
    "\x00",
    "\x07",
    "\x08",
    "\x7f",
    "\r",
    "\n",
    "\t",
    "[bold]",
    "[/]",
    "[/bold]",
    "[@click=app.quit]",
    "[link=http://e/]",
    "[red on white]",
    ":smile:",
    "%s{}",
    "é日本",
    "x",
    "0a1b",
]
HOSTILE_TEXT = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6).map("".join)
NAMES = st.fixed_dictionaries(
    {
        k: HOSTILE_TEXT
        for k in ("id", "name", "cwd", "model", "provider", "label", "tool", "path", "custom", "file", "session")
    }
)
SETTINGS = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=os.environ.get("PITREE_HYPOTHESIS_EXPLORE") is None,
)


def hostile_session(folder: Path, n: dict[str, str]) -> Path:
    """A session whose every id, its name, cwd, model, label, tool name, path, custom type and its file name
    come from `n`; a compaction, a fork, a label and a skipped line included."""
    i = n["id"]
    ids = [f"{k}{i}" for k in ("u1", "a1", "r1", "c1", "u2", "a2", "u3", "l1", "s1", "m1", "x1")]
    u1, a1, r1, c1, u2, a2, u3, l1, s1, m1, x1 = ids
    entries = [
        entry("model_change", m1, None, t=1, provider=n["provider"], modelId=n["model"]),
        user(u1, m1, "first " + n["name"], t=2),
        assistant(
            a1,
            u1,
            "reading",
            t=3,
            calls=(("c", n["tool"], {"path": n["path"]}),),
            model=n["model"],
            provider=n["provider"],
        ),
        tool_result(r1, a1, "c", name=n["tool"], text="ok " + n["path"], t=4),
        entry(
            "compaction",
            c1,
            r1,
            t=5,
            summary="sum",
            firstKeptEntryId=u1,
            tokensBefore=50,
            details={"readFiles": [n["path"]], "modifiedFiles": []},
        ),
        user(u2, c1, "second", t=6),
        assistant(a2, u2, "leaf answer", t=7, model=n["model"], provider=n["provider"]),
        user(u3, a1, "a fork", t=8),
        entry("label", l1, u3, t=9, targetId=u2, label=n["label"]),
        entry("session_info", s1, l1, t=10, name=n["name"]),
        entry("custom_message", x1, s1, t=11, customType=n["custom"], content="note", display=True),
    ]
    head = header(cwd=n["cwd"], parentSession=n["path"], id=n["session"])
    file_name = n["file"].replace("/", "_").replace("\x00", "_")[:60] + ".jsonl"
    sub = folder / "--proj--"
    sub.mkdir(parents=True, exist_ok=True)
    path = sub / file_name
    lines = [orjson.dumps(head)] + [orjson.dumps(e) for e in entries] + [b"not json " + n["name"].encode()]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def run_main(argv: list[str]) -> tuple[int, bytes, bytes]:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse's --help and friends
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.buffer.getvalue(), err.buffer.getvalue()  # type: ignore[attr-defined]


def assert_clean(what: str, data: bytes, allow: str) -> None:
    text = data.decode("utf-8")
    assert not unsafe_chars(text, allow=allow), (what, unsafe_chars(text, allow=allow), text[:400])


@contextlib.contextmanager
def env(**values: str) -> Any:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@settings(max_examples=int(os.environ.get("PITREE_HYPOTHESIS_EXAMPLES", "25")), **SETTINGS)  # type: ignore[arg-type]
@given(names=NAMES)
def test_every_cli_command_prints_nothing_raw(tmp_path_factory: Any, names: dict[str, str]) -> None:
    tmp = tmp_path_factory.mktemp("cli")
    root = tmp / "sessions"
    path = hostile_session(root, names)
    f = str(path)
    leaf = f"u2{names['id']}"
    commands = [
        ["tree", f, "--filter", "all"],
        ["tree", f, "--filter", "labeled-only"],
        ["tree", f, "--search", "fork"],
        ["context", f],
        ["context", f, "--leaf", leaf, "--no-tiktoken"],
        ["context", f, "--leaf", "nope" + names["id"]],  # an error quoting the id
        ["compactions", f],
        ["info", f],
        ["usage", f],
        ["ls", "--all", "--session-dir", str(root)],
        ["search", "fork", "--all", "--session-dir", str(root)],
        ["search", "re:.", "--all", "--session-dir", str(root)],
        ["export", f, "--format", "md", "-o", "-"],
        ["export", f, "--format", "html", "-o", "-"],
        ["export", f, "--format", "md", "-o", "-", "--leaf", "zz" + names["id"]],
        ["tree", str(root / ("missing" + names["file"].replace("/", "_").replace("\x00", "_")))],
    ]
    with env(PITREE_CACHE_DIR=str(tmp / "cache"), HOME=str(tmp), PITREE_NO_CACHE="1"):
        for argv in commands:
            for extra in ([], ["--json"]) if argv[0] not in ("export",) else ([],):
                code, out, err = run_main(argv + extra)
                assert code in (0, 1), (argv, code, err)
                if extra:  # JSON: nothing raw, not even a newline inside (escaped), and it parses
                    assert_clean(" ".join(argv[:1] + extra), out, allow="\n")
                    if code == 0:
                        orjson.loads(out)
                else:
                    assert_clean(" ".join(argv[:2]), out, allow="\n\t")
                assert_clean("stderr of " + " ".join(argv[:1]), err, allow="\n")
        # The two write commands, on a copy: their confirmations and results echo ids and labels.
        copy = tmp / "copy.jsonl"
        shutil.copyfile(path, copy)
        for argv in (
            ["label", str(copy), leaf, "L" + names["label"].replace("\x00", ""), "--yes"],
            ["branch", str(copy), "--to", f"a1{names['id']}", "--yes"],
            ["branch", str(copy), "--to", f"u3{names['id']}", "--yes", "--summary", "none", "--json"],
        ):
            code, out, err = run_main(argv)
            assert code == 0, (argv, err)
            assert_clean(argv[0], out, allow="\n")
            assert_clean("stderr of " + argv[0], err, allow="\n")


async def _visit_every_screen(path: Path, names: dict[str, str]) -> None:
    app = PitreeApp(path, watch=False, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view = app.query_one(TreeView)
        await pilot.press("ctrl+a")
        for node in list(app.explorer.stree.nodes):
            view.select_id(node.id)
            await pilot.pause(0.02)
            assert_screen_safe(app, svg=False)
        view.select_id(f"c1{names['id']}")  # the compaction audit and its gutter legend in the status bar
        await pilot.pause(0.05)
        assert_screen_safe(app, svg=False)
        for keys in (["r"], ["r", "s"], ["escape", "u"], ["escape", "c"], ["escape", "question_mark"], ["escape"]):
            await pilot.press(*keys)
            await pilot.pause(0.15)
            assert_screen_safe(app, svg=False)
        view.select_id(f"u3{names['id']}")
        await pilot.pause(0.05)
        for keys in (["L"], ["escape", "e"], ["escape", "enter"], ["escape"]):
            await pilot.press(*keys)
            await pilot.pause(0.15)
            assert_screen_safe(app, svg=False)
        # Notifications: an id typed into the go-to box that matches nothing, and another writer's new leaf
        # on another branch whose id is the hostile string itself.
        await pilot.press("g", *"zz", "enter")
        with open(path, "ab") as fh:
            fh.write(orjson.dumps(user("n" + names["id"], f"a1{names['id']}", names["name"], t=20)) + b"\n")
        await app.explorer.live.check()
        await pilot.pause()  # the explorer handles what the tail posted
        await until(pilot, lambda: any("new leaf" in n.message for n in app._notifications))
        await pilot.pause(0.1)
        assert all(not n.markup for n in app._notifications)
        assert_screen_safe(app)
        assert app.is_running


async def _visit_the_sessions_browser(root: Path, names: dict[str, str]) -> None:
    """The sessions list (this folder's, then all) and a search's hits, which show titles, cwds and ids."""
    from pitree.widgets.screens.browser import BrowserScreen, BrowserState

    state = BrowserState(session_dir=str(root), cwd=names["cwd"])
    app = PitreeApp(None, watch=False, browser=state, config_overrides={"summarizer": "extractive"})
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.stats is not None)
        await pilot.pause(0.1)
        assert_screen_safe(app, svg=False)
        for keys in (["tab"], ["slash", *"fork", "enter"]):
            await pilot.press(*keys)
            await pilot.pause(0.3)
            assert_screen_safe(app)


@pytest.mark.writes_session  # the test itself appends, as another writer would
@settings(max_examples=int(os.environ.get("PITREE_HYPOTHESIS_TUI_EXAMPLES", "4")), **SETTINGS)  # type: ignore[arg-type]
@given(names=NAMES)
def test_every_screen_and_notification_shows_nothing_raw(tmp_path_factory: Any, names: dict[str, str]) -> None:
    path = hostile_session(tmp_path_factory.mktemp("tui") / "sessions", names)
    with env(PITREE_CACHE_DIR=str(path.parent.parent.parent / "cache")):
        asyncio.run(_visit_the_sessions_browser(path.parent.parent, names))
        asyncio.run(_visit_every_screen(path, names))
