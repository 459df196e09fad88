"""The scripting CLI run as a user runs it (a subprocess with pipes): every subcommand in text and --json,
the JSON schemas scripts rely on, --help, one-line errors, and terminal safety of the text output."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.sessions import assistant, chain, entry, header, message, to_bytes, tool_result, user

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
DEMO = ROOT / "assets" / "demo.jsonl"
_SCRIPT = Path(sys.executable).with_name("pitree")
PITREE = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "pitree.widgets.main"]

NASTY = "hello [bold]world[/bold] \x1b[31mred\x1b[0m \x1b]52;c;aGk=\x07 \x9b2J \u202eevil\u202c zero\u200bwidth"


def run(*args: str | Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*PITREE, *map(str, args)], capture_output=True, timeout=120, stdin=subprocess.DEVNULL)


def run_json(*args: str | Path) -> Any:
    out = run(*args, "--json")
    assert out.returncode == 0, out.stderr.decode()
    return orjson.loads(out.stdout)


def session_entries() -> list[dict[str, Any]]:
    return [
        user("u1", None, NASTY, t=1),
        assistant("a1", "u1", "answer", t=2, calls=(("c1", "read", {"path": "x.py"}),)),
        tool_result("r1", "a1", "c1", "read", "contents", t=3),
        user("u2", "r1", "second", t=4),
        assistant("a2", "u2", "more", t=5),
        user("u3", "r1", "other", t=6),
        entry("label", "l1", "u3", targetId="u1", label="start", t=7),
        entry("session_info", "s1", "l1", name="my \x1b[1msession", t=8),
        message("bx", "s1", "bashExecution", command="ls", output="a b", exitCode=0, t=9),
    ]


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(session_entries()) + b"not json\n")
    return path


@pytest.fixture
def compacted(tmp_path: Path) -> Path:
    entries = [
        user("u1", None, "x" * 400, t=1),
        assistant("a1", "u1", "y" * 40, t=2),
        user("u2", "a1", "keep me", t=3),
        assistant("a2", "u2", "kept", t=4),
        entry(
            "compaction",
            "c1",
            "a2",
            summary="## Goal\nS [red]x[/red] \x1b[2J",
            firstKeptEntryId="u2",
            tokensBefore=5000,
            details={"readFiles": ["r.py"], "modifiedFiles": ["m.py"]},
            t=5,
        ),
        user("u3", "c1", "after", t=6),
    ]
    path = tmp_path / "c.jsonl"
    path.write_bytes(to_bytes(entries))
    return path


# ---- JSON --------------------------------------------------------------------------------------------------


def test_tree_json_schema(session: Path) -> None:
    data = run_json("tree", session)
    assert set(data) >= {"session", "entries", "skipped", "leaf", "roots", "labels", "rows"}
    assert set(data["session"]) >= {"id", "version", "cwd", "name", "parentSession"}
    assert data["session"] == {
        "id": header()["id"],
        "version": 3,
        "cwd": "/work/x",
        "name": "my \x1b[1msession",
        "parentSession": None,
    }
    assert data["entries"] == 9 and data["leaf"] == "bx" and data["roots"] == ["u1"]
    assert data["skipped"] == [{"line": 11, "reason": data["skipped"][0]["reason"]}]
    assert "not valid JSON" in data["skipped"][0]["reason"]
    assert data["labels"] == {"u1": "start"}
    for row in data["rows"]:
        assert set(row) >= {"id", "parentId", "type", "role", "text", "depth", "onActivePath"}
        assert isinstance(row["depth"], int) and isinstance(row["onActivePath"], bool)
    rows = {r["id"]: r for r in data["rows"]}
    assert [r["id"] for r in data["rows"]] == ["u1", "a1", "r1", "u3", "bx", "u2", "a2"]  # Pi 1.6 hides s1
    assert rows["r1"]["text"] == "[read: x.py]" and rows["r1"]["role"] == "toolResult"
    assert rows["r1"]["parentId"] == "a1" and rows["u1"]["parentId"] is None
    assert rows["u1"]["text"].startswith("user: hello [bold]world[/bold] \x1b[31m")  # JSON carries the raw text
    assert [r["id"] for r in data["rows"] if r["onActivePath"]] == ["u1", "a1", "r1", "u3", "bx"]
    assert [rows[i]["depth"] for i in ("u1", "r1", "u3", "bx", "u2", "a2")] == [0, 0, 1, 2, 1, 2]
    every = {r["id"]: r for r in run_json("tree", session, "--filter", "all")["rows"]}
    assert every["s1"]["type"] == "session_info" and every["s1"]["role"] is None
    assert every["s1"]["text"] == "[title: my \x1b[1msession]"  # Pi 1.6's row; JSON carries the raw text


@pytest.mark.parametrize(
    ("args", "ids"),
    [
        (["--filter", "user-only"], ["u1", "u3", "u2"]),
        (["--filter", "labeled-only"], ["u1"]),
        (["--filter", "no-tools"], ["u1", "a1", "u3", "bx", "u2", "a2"]),
        (["--filter", "all"], ["u1", "a1", "r1", "u3", "l1", "s1", "bx", "u2", "a2"]),
        (["--search", "SECOND"], ["u2"]),
        (["--search", "start hello"], ["u1"]),  # the label is searchable; tokens AND
        (["--filter", "user-only", "--search", "o"], ["u1", "u3", "u2"]),
    ],
)
def test_tree_filters_and_search(session: Path, args: list[str], ids: list[str]) -> None:
    data = run_json("tree", session, *args)
    assert [r["id"] for r in data["rows"]] == ids


def test_context_json_schema(session: Path) -> None:
    data = run_json("context", session)
    assert set(data) >= {"leaf", "path", "model", "thinkingLevel", "messages", "tokens"}
    assert data["leaf"] == "bx" and data["path"] == ["u1", "a1", "r1", "u3", "l1", "s1", "bx"]
    assert data["model"] == {"provider": "anthropic", "modelId": "claude"} and data["thinkingLevel"] == "off"
    assert [(m["role"], m["entryId"]) for m in data["messages"]] == [
        ("user", "u1"),
        ("assistant", "a1"),
        ("toolResult", "r1"),
        ("user", "u3"),
        ("bashExecution", "bx"),
    ]
    for m in data["messages"]:
        assert set(m) >= {"role", "entryId", "tokens"} and isinstance(m["tokens"], int)
    assert set(data["tokens"]) >= {"estimate", "tiktoken"}
    assert data["tokens"]["estimate"] == sum(m["tokens"] for m in data["messages"])
    assert isinstance(data["tokens"]["tiktoken"], int) and data["tokens"]["tiktoken"] > 0


def test_context_leaf_and_prefix_and_no_tiktoken(session: Path) -> None:
    data = run_json("context", session, "--leaf", "a2")
    assert data["leaf"] == "a2" and data["path"] == ["u1", "a1", "r1", "u2", "a2"]
    assert run_json("context", session, "--leaf", "a2", "--no-tiktoken")["tokens"]["tiktoken"] is None
    assert run_json("context", session, "--leaf", "b")["leaf"] == "bx"  # a unique prefix


def test_context_with_compaction(compacted: Path) -> None:
    data = run_json("context", compacted)
    assert [(m["role"], m["entryId"]) for m in data["messages"]] == [
        ("compactionSummary", "c1"),
        ("user", "u2"),
        ("assistant", "a2"),
        ("user", "u3"),
    ]


def test_compactions_json(compacted: Path, session: Path) -> None:
    comps = run_json("compactions", compacted)["compactions"]
    assert len(comps) == 1
    c = comps[0]
    assert c["id"] == "c1" and c["tokensBefore"] == 5000 and c["firstKeptEntryId"] == "u2" and c["firstKeptOnPath"]
    assert c["summarized"]["entries"] == 2 and c["kept"]["entries"] == 2 and c["problems"] == []
    assert c["readFiles"] == ["r.py"] and c["modifiedFiles"] == ["m.py"] and c["onActivePath"]
    assert isinstance(c["tokensAfter"]["tiktoken"], int)
    assert run_json("compactions", session) == {"compactions": []}


def test_info_json(session: Path) -> None:
    info = run_json("info", session)
    assert info["entries"] == 9 and info["branches"] == 2 and info["leaves"] == ["a2", "bx"]
    assert info["lines"] == 11 and info["skipped"] == 1 and info["labels"] == 1
    assert info["roles"] == {"assistant": 2, "bashExecution": 1, "toolResult": 1, "user": 3}
    assert info["types"]["label"] == 1 and info["types"]["session_info"] == 1
    assert info["usage"]["cost"] == 1.0 and info["usage"]["totalTokens"] == 20
    assert info["models"] == {
        "anthropic/claude": {"messages": 2, "input": 2, "output": 4, "totalTokens": 20, "cost": 1.0}
    }
    assert info["bytes"] == session.stat().st_size and info["file"] == str(session)
    assert info["skippedLines"][0]["line"] == 11


# ---- text --------------------------------------------------------------------------------------------------


def test_tree_text_is_literal_and_safe(session: Path) -> None:
    out = run("tree", session)
    assert out.returncode == 0 and out.stderr == b""
    assert b"\x1b" not in out.stdout and b"\xc2\x9b" not in out.stdout  # no ESC, no C1 CSI
    text = out.stdout.decode()
    assert "[bold]world[/bold]" in text  # Rich markup in the session is shown as typed
    assert "␛[31mred␛[0m" in text and "␛]52;c;aGk=␇" in text and "<U+009B>2J" in text
    assert "<U+202E>evil" in text and "zero<U+200B>width" in text
    assert "my ␛[1msession" in text.splitlines()[0]  # the name in the title
    assert "← leaf" in text and "[start]" in text and "line 11" in text and "skipped" in text


def test_tree_text_rows_match_json(session: Path) -> None:
    lines = run("tree", session).stdout.decode().splitlines()
    rows = run_json("tree", session)["rows"]
    body = lines[1 : 1 + len(rows)]
    for line, row in zip(body, rows, strict=True):
        assert line.rstrip().endswith(row["id"])
    assert (
        body[0] == "• [start] " + "user: hello [bold]world[/bold] ␛[31mred␛[0m ␛]52;c;aGk=␇ <U+009B>2J "
        "<U+202E>evil<U+202C> zero<U+200B>width  u1"
    )
    assert body[3].startswith("├─ • user: other") and body[5].startswith("└─ user: second")  # no TUI fold mark


def _comb(depth: int) -> list[dict[str, Any]]:
    """Every entry forks: a short side branch and the rest, so the rest is drawn one level deeper each time."""
    out: list[dict[str, Any]] = [user("c0", None, "root", t=0)]
    for i in range(1, depth):
        out.append(user(f"s{i}", f"c{i - 1}", f"side {i}", t=2 * i))
        out.append(user(f"c{i}", f"c{i - 1}", f"deeper {i}", t=2 * i + 1))
    return out


@pytest.mark.parametrize("colour", [False, True])
def test_tree_text_of_deep_rows_equals_rich_printing_each_line(colour: bool, monkeypatch: Any) -> None:
    """Rows whose guides fill the line (300 levels deep, at widths of 40 and 400): cut as Rich cut each whole
    line, without making the guides past the width."""
    import io

    from pitree.cli import textout
    from pitree.session.layout import build_layout
    from pitree.session.load import load_bytes
    from rich.console import Console

    tree = load_bytes(to_bytes(_comb(300)))
    layout = build_layout(tree, "all")
    stops: set[int | None] = set()
    real_prefix = layout.prefix

    def prefix(i: int, folded: bool = False, start: int = 0, stop: int | None = None) -> str:
        stops.add(stop)
        return real_prefix(i, folded, start, stop)

    def each_whole(console: Console, lines: Any) -> None:
        for line in lines:
            console.print(line, no_wrap=True, overflow="ellipsis", crop=True)

    colours: dict[str, Any] = {"force_terminal": True, "color_system": "standard"} if colour else {}
    whole_lines = textout.tree_lines
    for width in (40, 400):
        fast, slow = io.StringIO(), io.StringIO()
        monkeypatch.setattr(layout, "prefix", prefix)
        textout.print_tree(Console(file=fast, width=width, **colours), tree, layout)
        assert stops == {width // 3 + 1}
        with monkeypatch.context() as mp:
            mp.setattr(textout, "print_lines", each_whole)
            mp.setattr(textout, "tree_lines", lambda t, lay, room=None: whole_lines(t, lay))
            mp.setattr(textout, "is_plain", lambda _console: False)  # Rich prints every line
            textout.print_tree(Console(file=slow, width=width, **colours), tree, layout)
        assert fast.getvalue() == slow.getvalue()
        assert sum("…" in line for line in fast.getvalue().splitlines()) > 200  # the deep rows are cut
        stops.clear()


def test_context_text(session: Path) -> None:
    out = run("context", session)
    assert out.returncode == 0 and b"\x1b" not in out.stdout
    text = out.stdout.decode()
    assert "context at bx" in text and "anthropic/claude" in text and "thinking off" in text
    assert "bashExecution" in text and "toolResult" in text and "total:" in text


def test_compactions_text(compacted: Path, session: Path) -> None:
    out = run("compactions", compacted)
    assert out.returncode == 0 and b"\x1b" not in out.stdout
    text = out.stdout.decode()
    assert "compaction c1" in text and "tokens before: 5000" in text and "on the path" in text
    assert "S [red]x[/red] ␛[2J" in text and "## Goal" in text
    assert "no compactions" in run("compactions", session).stdout.decode()


def test_info_text(session: Path) -> None:
    out = run("info", session)
    assert out.returncode == 0 and b"\x1b" not in out.stdout
    text = out.stdout.decode()
    assert "my ␛[1msession" in text and "9 (1 line skipped" in text and "anthropic/claude" in text


def test_demo_session_every_command(tmp_path: Path) -> None:
    if not DEMO.exists():
        pytest.skip("assets/demo.jsonl is not there")
    demo = tmp_path / "demo.jsonl"
    shutil.copyfile(DEMO, demo)
    before = demo.read_bytes()
    for cmd in ("tree", "context", "compactions", "info"):
        text = run(cmd, demo)
        assert text.returncode == 0 and text.stdout and b"\x1b" not in text.stdout, cmd
        run_json(cmd, demo)
    assert demo.read_bytes() == before  # read-only


@pytest.mark.parametrize("path", sorted(DATA.glob("*.jsonl")) or [None], ids=lambda p: p.name if p else "none")
def test_data_sessions_every_command(path: Path | None, tmp_path: Path) -> None:
    if path is None:
        pytest.skip("tests/data has no sessions yet")
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    for cmd in ("tree", "context", "compactions", "info"):
        assert run(cmd, copy).returncode == 0, cmd
        run_json(cmd, copy)


@pytest.mark.parametrize("json", [False, True])
def test_broken_pipe_is_not_an_error(tmp_path: Path, json: bool) -> None:
    """`pitree tree FILE | head`: the reader goes away early; exit 0 and no traceback."""
    path = tmp_path / "big.jsonl"
    path.write_bytes(to_bytes(chain(6000)))  # several hundred KB of output: more than a pipe holds
    cmd = [*PITREE, "tree", str(path), *(["--json"] if json else [])]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0 and b"Traceback" not in err, err.decode()


# ---- help and errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("cmd", [[], ["tree"], ["context"], ["compactions"], ["info"], ["usage"]])
def test_help(cmd: list[str]) -> None:
    out = run(*cmd, "--help")
    assert out.returncode == 0 and out.stdout.lower().startswith(b"usage") and out.stderr == b""
    if cmd:
        assert b"--json" in out.stdout and b"FILE" in out.stdout
    else:
        for name in (b"tree", b"context", b"compactions", b"info", b"usage", b"export", b"ls", b"search"):
            assert name in out.stdout
        for option in (b"--serve", b"--port", b"--session-dir", b"ID-PREFIX"):
            assert option in out.stdout


@pytest.mark.parametrize(
    ("cmd", "options"),
    [
        (["export"], [b"--format", b"--leaf", b"--thinking", b"--force", b"-o"]),
        (["ls"], [b"--all", b"--json", b"--session-dir"]),
        (["search"], [b"QUERY", b"--all", b"--limit", b"--json"]),
    ],
)
def test_help_of_the_newer_commands(cmd: list[str], options: list[bytes]) -> None:
    out = run(*cmd, "--help")
    assert out.returncode == 0 and out.stdout.lower().startswith(b"usage") and out.stderr == b""
    for option in options:
        assert option in out.stdout, option


def test_usage_json_adds_up(tmp_path: Path) -> None:
    demo = tmp_path / "demo.jsonl"
    demo.write_bytes(DEMO.read_bytes())
    report = orjson.loads(run("usage", demo, "--json").stdout)
    assert report["total"]["messages"] == 37 and round(report["total"]["cost"], 4) == 1.408
    assert sum(s["entries"] for s in report["segments"]) == 88
    assert abs(sum(s["cost"] for s in report["segments"]) - report["total"]["cost"]) < 1e-5  # each rounded to 6 places
    text = run("usage", demo).stdout.decode()
    assert "Per branch segment" in text and "anthropic/claude-sonnet-4-5" in text


def test_serve_refuses_a_taken_port_with_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        demo = tmp_path / "demo.jsonl"
        demo.write_bytes(DEMO.read_bytes())
        out = run("--serve", "--port", str(port), demo)
    assert out.returncode == 1 and b"already in use" in out.stderr and len(out.stderr.splitlines()) <= 2


def test_help_mentions_the_options() -> None:
    assert b"--filter" in run("tree", "--help").stdout and b"--search" in run("tree", "--help").stdout
    assert b"--leaf" in run("context", "--help").stdout and b"--no-tiktoken" in run("context", "--help").stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tree", "{missing}"], "no such file"),
        (["context", "{missing}"], "no such file"),
        (["compactions", "{missing}"], "no such file"),
        (["info", "{missing}"], "no such file"),
        (["tree", "{dir}"], "is a directory"),
        (["info", "{dir}"], "is a directory"),
        (["{missing}"], "no such file"),
        (["{dir}"], "is a directory"),
        (["context", "{session}", "--leaf", "zzzz"], "no entry with id"),
        (["context", "{session}", "--leaf", "u"], "ambiguous"),
        (["tree", "{session}", "--filter", "nope"], "invalid choice"),
        (["tree"], "required"),
        (["tree", "{session}", "--bogus"], "unrecognized arguments"),
    ],
)
def test_bad_input_exits_1_with_one_line(session: Path, tmp_path: Path, args: list[str], message: str) -> None:
    subs = {"{session}": str(session), "{missing}": str(tmp_path / "none.jsonl"), "{dir}": str(tmp_path)}
    out = run(*[subs.get(a, a) for a in args])
    err = out.stderr.decode()
    assert out.returncode == 1, err
    assert len(err.strip().splitlines()) == 1 and message in err and err.startswith("pitree: error: ")
    assert out.stdout == b""


def test_info_of_a_v1_file_gives_its_version_and_the_migration(tmp_path: Path) -> None:
    data = Path(__file__).resolve().parents[1] / "data" / "v1_linear.jsonl"
    info = run_json("info", data)
    assert info["session"]["version"] == 1 and info["session"]["migratedInMemory"] is True
    text = run("info", data).stdout.decode()
    assert "1 (migrated to version 3 in memory" in text
    demo = Path(__file__).resolve().parents[2] / "assets" / "demo.jsonl"
    info = run_json("info", demo)
    assert info["session"]["version"] == 3 and info["session"]["migratedInMemory"] is False
    assert info["errorKinds"] == {"assistant": 2, "toolResult": 2} and info["errors"] == 4
    assert "4 (2 error replies, 2 failed tool results)" in run("info", demo).stdout.decode()


def test_a_torn_last_line_is_listed_alike_by_the_cli_and_the_tui(tmp_path: Path) -> None:
    """The TUI holds a torn last line back (it may still be written); what it lists as skipped with
    `held_back_skips` is the CLI's list."""
    from pitree.store.session_file import held_back_skips, load_session_fast

    path = tmp_path / "torn.jsonl"
    body = to_bytes([user("u1", None, "hi", t=1)]) + b'{"bad json\n' + b'{"type":"message","id":"zz'
    path.write_bytes(body)
    cli = run_json("tree", path, "--filter", "all")["skipped"]
    tree, builder = load_session_fast(path, save_cache=False)
    tui = [{"line": s.line, "reason": s.reason} for s in tree.skipped + held_back_skips(path, builder)]
    assert [s["line"] for s in cli] == [s["line"] for s in tui] == [3, 4]
    assert cli[1]["reason"] in tui[1]["reason"] and "held back" in tui[1]["reason"]
    assert "2 lines skipped:" in run("tree", path).stdout.decode()
    one = tmp_path / "one.jsonl"
    one.write_bytes(body[: body.rindex(b"{")])  # only the bad line: "1 line skipped"
    assert "1 line skipped:" in run("tree", one).stdout.decode()
