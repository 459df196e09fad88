"""Named hostile files, each through the loader, the CLI (`tree`/`info`/`context --json`) and the TUI pilot.

The small cases are one table: what the file holds, how many entries and skipped lines pitree must find,
whether it has a header. The big ones (a 50 MB line, 1,000,000 entries, a 200,000-deep chain, 10,000
children of one entry, huge base64 images) have their own tests, sized to stay fast.
"""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from pitree.session.context import build_context
from pitree.session.layout import FILTERS, build_layout
from pitree.session.load import load_bytes
from pitree.store.session_file import EntryReader, load_session_fast
from pitree.widgets.app import PitreeApp
from pitree.widgets.entry_view import EntryView
from pitree.widgets.tree_view import TreeView

from tests.hostile.helpers import assert_screen_safe, run_cli, until
from tests.pi.pirun import pitree
from tests.sessions import assistant, entry, header, message, tool_result, user

H = orjson.dumps(header()) + b"\n"


def dump(*entries: dict[str, Any], end: bytes = b"\n") -> bytes:
    return b"".join(orjson.dumps(e) + end for e in entries)


U1, U2, U3 = (
    user("a0000001", None, "one", t=1),
    user("a0000002", "a0000001", "two", t=2),
    user("a0000003", "a0000002", "three", t=3),
)
BOM = b"\xef\xbb\xbf"

WRONG_CONTENT: list[Any] = [
    None,
    1,
    1.5,
    True,
    {},
    {"type": "text", "text": "x"},
    [1, 2],
    ["a"],
    [None],
    [[{}]],
    [{"type": "text", "text": 5}],
    [{"type": "image"}],
    [{"type": 7}],
    "plain",
    "",
]


def wrong_content_entries() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    parent = None
    for i, content in enumerate(WRONG_CONTENT):
        for role in ("user", "assistant", "toolResult", "custom", "bashExecution"):
            eid = f"w{len(out):07d}"
            out.append(message(eid, parent, role, t=i, content=content, toolCallId=content, output=content))
            parent = eid
        eid = f"w{len(out):07d}"
        out.append(entry("custom_message", eid, parent, t=i, customType="x", content=content))
        parent = eid
    return out


def numbers_for_strings() -> list[dict[str, Any]]:
    return [
        {
            "type": "message",
            "id": 12345678,
            "parentId": None,
            "timestamp": 1.5e12,
            "message": {"role": "user", "content": 7},
        },
        {"type": 42, "id": "n0000002", "parentId": 12345678, "timestamp": 0},
        {
            "type": "message",
            "id": "n0000003",
            "parentId": "n0000002",
            "timestamp": True,
            "message": {"role": 9, "content": [{"type": "text", "text": 10}]},
        },
        assistant("n0000004", "n0000003", "x", calls=(("c1", 5, {"path": 6}),), provider=1, model=2.5),  # type: ignore[arg-type]
        tool_result("n0000005", "n0000004", "c1", name=3),  # type: ignore[arg-type]
        entry("custom_message", "n0000006", "n0000005", customType=11, content=12),
        entry("label", "n0000007", "n0000006", targetId=13, label=14),
        entry("label", "n0000008", "n0000007", targetId="n0000006", label=15),
        entry("session_info", "n0000009", "n0000008", name=16),
        entry("model_change", "n0000010", "n0000009", provider=17, modelId=18),
        entry("thinking_level_change", "n0000011", "n0000010", thinkingLevel=19),
        entry("compaction", "n0000012", "n0000011", summary=20, firstKeptEntryId=21, tokensBefore="many"),
        entry("branch_summary", "n0000013", "n0000012", summary=22, fromId=23),
        {
            "type": "message",
            "id": "n0000014",
            "parentId": "n0000013",
            "timestamp": "x",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
                "usage": {"input": "1", "cost": 5},
                "stopReason": 1,
                "errorMessage": 2,
            },
        },
    ]


# (id, file bytes, entries, skipped lines, has header)
CASES = [
    pytest.param(b'not json\n[1]\n"s"\n42\n{bad\n\nnull\n\x00\x00\n', 0, 8, False, id="every-line-invalid"),
    pytest.param(H, 0, 0, True, id="only-a-header"),
    pytest.param(dump(U1, U2, U3), 3, 0, False, id="no-header"),
    pytest.param(b"garbage\n" + H + dump(U1), 1, 1, True, id="header-after-garbage"),
    pytest.param(BOM + H + dump(U1, U2), 2, 0, True, id="bom"),
    pytest.param(
        H + dump(U1) + b"\x00" * 100 + b"\n" + dump(U2).replace(b"two", b"t\x00o") + dump(U3) + b"\x00" * 7,
        2,
        3,
        True,
        id="nul-bytes",
    ),
    pytest.param(
        H
        + dump(U1).replace(b"one", b"o\xffe")
        + dump(U2).replace(b"two", b"t\xc3\x28o")
        + dump(U3).replace(b"three", b"thr\xe2\x82"),
        3,
        0,
        True,
        id="invalid-utf8",
    ),
    pytest.param(H.replace(b"\n", b"\r\n") + dump(U1, U2, U3, end=b"\r\n"), 3, 0, True, id="crlf"),
    pytest.param(
        H + dump(U1, end=b"\r\n") + dump(U2) + dump(U3, end=b"\r") + dump(user("a0000004", "a0000002")),
        2,
        1,
        True,
        id="mixed-endings",
    ),
    pytest.param(
        H + dump(U1).replace(b'"one"', b'"cut \\ud83d"') + dump(U2).replace(b'"t":', b'"t":1e400,"t2":'),
        2,
        0,
        True,
        id="lone-surrogate-and-infinity",
    ),
    pytest.param(H + dump(*numbers_for_strings()), 14, 0, True, id="numbers-where-strings-belong"),
    pytest.param(H + dump(*wrong_content_entries()), 6 * len(WRONG_CONTENT), 0, True, id="content-of-every-wrong-type"),
    pytest.param(H + dump(U1, U2) + H + dump(U3), 3, 1, True, id="second-header"),
]


def check_loaded(path: Path, entries: int, skipped: int, has_header: bool) -> None:
    """One-shot parse (what Pi reads): the expected counts, every line accounted for. The loader the CLI and
    TUI use (`load_session_fast`) finds the same, except that it holds back a last line without a newline."""
    data = path.read_bytes()
    whole = load_bytes(data)
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    assert (whole.entry_count, len(whole.skipped), whole.header is not None) == (entries, skipped, has_header)
    assert whole.entry_count + len(whole.skipped) + int(has_header) == lines
    tree, _ = load_session_fast(path, save_cache=False)
    torn = 0 if data.endswith(b"\n") or not data else 1
    assert tree.entry_count + len(tree.skipped) + int(tree.header is not None) == lines - torn
    assert [n.id for n in tree.nodes] == [n.id for n in whole.nodes][: tree.entry_count]
    reader = EntryReader(path, tree)
    assert len(reader.entries(tree.nodes)) == tree.entry_count  # every entry's bytes can be read back
    for mode in FILTERS:
        build_layout(tree, mode, "a")
    build_context(tree, None)


def check_cli(path: Path, entries: int, skipped: int) -> None:
    """Every reading command, text and JSON, exits 0; the JSON counts agree with the loader."""
    for args in (["tree", "--filter", "all"], ["info"], ["context"], ["compactions"]):
        out = pitree(args[0], path, *args[1:])
        assert out.returncode == 0, (args, out.stderr.decode())
        out = pitree(args[0], path, *args[1:], "--json")
        assert out.returncode == 0, (args, out.stderr.decode())
        data = orjson.loads(out.stdout)
        if args[0] in ("tree", "info"):
            assert data["entries"] == entries
    held = 0 if path.read_bytes().endswith(b"\n") else 1
    assert len(orjson.loads(pitree("tree", path, "--json").stdout)["skipped"]) in (skipped, skipped - held)


def make_app(path: Path) -> PitreeApp:
    return PitreeApp(path, watch=False, config_overrides={"summarizer": "extractive"})


async def check_tui(path: Path, entries: int, keys: tuple[str, ...] = ("home", "end", "ctrl+a")) -> PitreeApp:
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None, timeout=60)
        assert app.explorer.stree is not None and app.explorer.stree.entry_count == entries
        for key in keys:
            await pilot.press(key)
        view = app.query_one(TreeView)
        if view.cursor_node is not None:
            entry_view = app.query_one(EntryView)
            await until(pilot, lambda: entry_view.node is view.cursor_node, timeout=30)
        await pilot.pause(0.05)
        assert_screen_safe(app)
    return app


@pytest.mark.parametrize(("data", "entries", "skipped", "has_header"), CASES)
async def test_named_case(tmp_path: Path, data: bytes, entries: int, skipped: int, has_header: bool) -> None:
    path = tmp_path / "case.jsonl"
    path.write_bytes(data)
    check_loaded(path, entries, skipped, has_header)
    check_cli(path, entries, skipped)
    await check_tui(path, entries)


def test_cli_reads_a_last_line_without_newline_as_pi_does(tmp_path: Path) -> None:
    path = tmp_path / "no-final-newline.jsonl"
    path.write_bytes(H + dump(U1, U2).rstrip(b"\n"))  # a hand edit or a crash just before the newline
    info = orjson.loads(pitree("info", path, "--json").stdout)
    assert info["entries"] == 2 and info["leaf"] == "a0000002"


# ---- the big ones ------------------------------------------------------------------------------------------


async def test_a_50_mb_single_line(tmp_path: Path) -> None:
    text = "x" * (50 << 20)
    big = user("b0000001", None, text)
    path = tmp_path / "big.jsonl"
    path.write_bytes(H + dump(big, U1 | {"parentId": "b0000001"}))
    check_loaded(path, 2, 0, True)  # 50 MB: the forked two-process load splits inside the long line
    out = run_cli("tree", path, "--json")
    assert out.returncode == 0 and len(out.stdout) < 10_000  # the row text is Pi's 200 characters, not 50 MB
    assert orjson.loads(out.stdout)["rows"][0]["text"] == "user: " + "x" * 200
    # The same line without its newline (a crash mid-write): it is still read, as Pi reads it.
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(H + dump(big).rstrip(b"\n"))
    whole = load_bytes(torn.read_bytes())
    assert whole.entry_count == 1 and not whole.skipped
    started = time.monotonic()
    await check_tui(path, 2, keys=("home",))  # the entry pane shows the 50 MB message, cut
    assert time.monotonic() - started < 60


def test_a_million_tiny_entries_cli(tmp_path: Path) -> None:
    n = 1_000_000
    path = tmp_path / "million.jsonl"
    rows = [H]
    rows.append(b'{"type":"custom","id":"00000000","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}\n')
    rows.extend(b'{"type":"custom","id":"%08x","parentId":"%08x"}\n' % (i, i - 1) for i in range(1, n))
    path.write_bytes(b"".join(rows))
    out = run_cli("tree", path, "--json", "--filter", "user-only", timeout=300)  # a full load and layout, few rows
    assert out.returncode == 0, out.stderr.decode()
    data = orjson.loads(out.stdout)
    assert data["entries"] == n and data["skipped"] == [] and data["rows"] == []
    assert data["leaf"] == f"{n - 1:08x}" and data["roots"] == ["00000000"]


async def test_a_200000_deep_chain(tmp_path: Path) -> None:
    n = 200_000
    path = tmp_path / "deep.jsonl"
    rows = [H]
    stamp = b"2026-01-01T00:00:00.000Z"
    for i in range(n):
        parent = b"null" if i == 0 else b'"d%07d"' % (i - 1)
        role = b"user" if i % 2 == 0 else b"assistant"
        rows.append(
            b'{"type":"message","id":"d%07d","parentId":%s,"timestamp":"%s","message":{"role":"%s","content":'
            b'[{"type":"text","text":"m%d"}]}}\n' % (i, parent, stamp, role, i)
        )
    path.write_bytes(b"".join(rows))
    tree, _ = load_session_fast(path, save_cache=False)
    assert tree.entry_count == n and tree.depth(tree.leaf) == n - 1  # no recursion anywhere
    layout = build_layout(tree, "all")
    assert len(layout.rows) == n and layout.rows[-1].node is tree.leaf
    assert len(build_context(tree, None).messages) == n
    out = run_cli("context", path, "--json", "--no-tiktoken", "--leaf", "d0150000", timeout=300)
    assert out.returncode == 0 and len(orjson.loads(out.stdout)["messages"]) == 150_001
    await check_tui(path, n, keys=("home", "end"))


async def test_ten_thousand_children_of_one_entry(tmp_path: Path) -> None:
    kids = [user(f"k{i:07d}", "a0000001", f"child {i}", t=i) for i in range(10_000)]
    path = tmp_path / "wide.jsonl"
    path.write_bytes(H + dump(U1, *kids))
    check_loaded(path, 10_001, 0, True)
    tree, _ = load_session_fast(path, save_cache=False)
    assert len(tree.get("a0000001").children) == 10_000
    layout = build_layout(tree)
    assert len(layout.rows) == 10_001 and layout.rows[1].node.id == "k0009999"  # the leaf's branch first
    data = orjson.loads(pitree("tree", path, "--json").stdout)
    assert len(data["rows"]) == 10_001
    await check_tui(path, 10_001, keys=("home", "down", "ctrl+left", "end"))


async def test_images_with_huge_base64(tmp_path: Path) -> None:
    blob = base64.b64encode(b"\x89PNG" + bytes(range(256)) * 24_000).decode()  # ~8 MB of base64
    image = {"type": "image", "data": blob, "mimeType": "image/png"}
    entries = [
        message("i0000001", None, "user", content=[{"type": "text", "text": "look"}, image]),
        message("i0000002", "i0000001", "toolResult", toolCallId="c1", toolName="read", content=[image], isError=False),
        entry("custom_message", "i0000003", "i0000002", customType="shot", content=[image, image]),
    ]
    path = tmp_path / "images.jsonl"
    path.write_bytes(H + dump(*entries))
    check_loaded(path, 3, 0, True)
    out = pitree("context", path, "--json")
    assert out.returncode == 0
    # Pi 1.6: 1,200 per image, a user's too (Pi 0.73 counted only its text)
    assert [m["tokens"] for m in orjson.loads(out.stdout)["messages"]] == [1201, 1200, 2400]
    assert len(pitree("tree", path).stdout) < 5_000  # no base64 in the rows
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.explorer.stree is not None)
        view, entry_view = app.query_one(TreeView), app.query_one(EntryView)
        for target in ("i0000001", "i0000002", "i0000003"):
            view.select_id(target)
            await until(pilot, lambda: entry_view.node is view.cursor_node, timeout=30)
            await pilot.pause(0.05)
            plain = assert_screen_safe(app)
            assert blob[:60] not in plain  # a placeholder, never the data
