"""Writes the small named sessions in tests/data/ (see README.md there for what each one tests).

Every byte is spelled out here, so the odd ones (blank, torn, CRLF and invalid-UTF-8 lines, terminal escapes)
are reproducible and reviewable: run it again and the files come out identical.
Usage: python tests/data/make_data.py [OUT_DIR]   (default: this directory)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CWD = "/home/dev/projects/sample"
HEADER_V3 = {
    "type": "session",
    "version": 3,
    "id": "0199d0a1-2b3c-7d4e-8f50-617283940a1b",
    "timestamp": "2026-11-28T12:00:00.000Z",
    "cwd": CWD,
}
USAGE = {
    "input": 12,
    "output": 40,
    "cacheRead": 3000,
    "cacheWrite": 200,
    "totalTokens": 3252,
    "cost": {
        "input": 0.000036,
        "output": 0.0006,
        "cacheRead": 0.0009,
        "cacheWrite": 0.00075,
        "total": 0.002286,
    },
}


def dumps(value: Any) -> bytes:
    """One JSON line as Pi writes it: compact, UTF-8, control characters escaped (JSON.stringify's rules)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def ts(second: int) -> str:
    return f"2026-11-28T12:{second // 60:02d}:{second % 60:02d}.000Z"


def ms(second: int) -> int:
    return 1795867200000 + second * 1000  # 2026-11-28T12:00:00Z


def entry(etype: str, eid: str, parent: str | None, second: int, **fields: Any) -> dict[str, Any]:
    return {"type": etype, "id": eid, "parentId": parent, "timestamp": ts(second), **fields}


def user(eid: str, parent: str | None, second: int, text: str) -> dict[str, Any]:
    msg = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms(second)}
    return entry("message", eid, parent, second, message=msg)


def assistant(
    eid: str,
    parent: str | None,
    second: int,
    text: str | None = None,
    calls: Sequence[tuple[str, str, dict[str, Any]]] = (),
    stop: str = "stop",
    thinking: str | None = None,
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if thinking:
        content.append({"type": "thinking", "thinking": thinking})
    if text:
        content.append({"type": "text", "text": text})
    content += [{"type": "toolCall", "id": cid, "name": name, "arguments": args} for cid, name, args in calls]
    msg = {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": USAGE,
        "stopReason": "toolUse" if calls else stop,
        "timestamp": ms(second),
    }
    return entry("message", eid, parent, second, message=msg)


def result(
    eid: str, parent: str, second: int, call_id: str, name: str, text: str, error: bool = False
) -> dict[str, Any]:
    msg = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": error,
        "timestamp": ms(second),
    }
    return entry("message", eid, parent, second, message=msg)


def jsonl(*values: dict[str, Any]) -> bytes:
    return b"".join(dumps(v) + b"\n" for v in values)


# ---- the files -------------------------------------------------------------------------------------------


def v1_linear() -> bytes:
    """Version 1: no version key, no ids; one chain in file order; compaction by line index."""
    header = {
        "type": "session",
        "id": "5f0c6a52-1d2e-4b3a-9c8d-7e6f5a4b3c2d",
        "timestamp": "2026-11-28T12:00:00.000Z",
        "cwd": CWD,
        "provider": "anthropic",
        "modelId": "claude-sonnet-4-5",
        "thinkingLevel": "off",
    }
    lines: list[dict[str, Any]] = [
        user("", None, 5, "List the files in src/."),
        assistant("", None, 8, calls=[("toolu_01V1aaaaaaaaaaaaaaaaaaaa", "bash", {"command": "ls src"})]),
        result("", "", 9, "toolu_01V1aaaaaaaaaaaaaaaaaaaa", "bash", "main.py\nutil.py\n"),
        assistant("", None, 12, "There are two files: `main.py` and `util.py`."),
        {"type": "thinking_level_change", "timestamp": ts(20), "thinkingLevel": "low"},
        user("", None, 30, "Read util.py and explain it."),  # line 6: kept by the compaction below
        assistant("", None, 33, calls=[("toolu_01V1bbbbbbbbbbbbbbbbbbbb", "read", {"path": "src/util.py"})]),
        result("", "", 34, "toolu_01V1bbbbbbbbbbbbbbbbbbbb", "read", "def add(a, b):\n    return a + b\n"),
        assistant("", None, 37, "`util.py` defines `add(a, b)`, which returns the sum."),
        {
            "type": "compaction",
            "timestamp": ts(60),
            "summary": "## Goal\nUnderstand the files in src/.\n\n## Progress\n### Done\n- [x] Listed src/",
            "firstKeptEntryIndex": 6,
            "tokensBefore": 5120,
        },
        user("", None, 70, "Now add a docstring to add()."),
        assistant("", None, 74, "Added a docstring to `add()`."),
    ]
    for line in lines:  # v1 entries carry no id and no parentId
        line.pop("id", None)
        line.pop("parentId", None)
    return jsonl(header, *lines)


def v2_hookmessage() -> bytes:
    """Version 2: ids and parentIds, and the pre-v3 message role "hookMessage" (v3 calls it "custom")."""
    header = {**HEADER_V3, "version": 2, "id": "0199d0a1-0000-7000-8000-000000000002"}
    hook = {
        "role": "hookMessage",
        "customType": "todo-reminder",
        "content": "Reminder: run the tests before you commit.",
        "display": True,
        "timestamp": ms(14),
    }
    return jsonl(
        header,
        user("e0000001", None, 5, "Rename util.add to util.plus."),
        assistant("e0000002", "e0000001", 9, "Renamed `add` to `plus` in src/util.py."),
        entry("message", "e0000003", "e0000002", 14, message=hook),
        user("e0000004", "e0000003", 20, "Thanks, run them."),
        assistant("e0000005", "e0000004", 25, "All 3 tests pass."),
    )


def branched() -> bytes:
    """Version 3 with two forks, labels (one cleared) and a session name; the leaf is on a later branch."""
    read = ("toolu_01BRaaaaaaaaaaaaaaaaaaaa", "read", {"path": "app.py"})
    bash = ("toolu_01BRbbbbbbbbbbbbbbbbbbbb", "bash", {"command": "flask --app app run --port 5001"})
    return jsonl(
        HEADER_V3,
        entry("model_change", "b0000001", None, 1, provider="anthropic", modelId="claude-sonnet-4-5"),
        entry("thinking_level_change", "b0000002", "b0000001", 1, thinkingLevel="medium"),
        user("b0000003", "b0000002", 10, "Add a /health endpoint to app.py."),
        assistant("b0000004", "b0000003", 14, "Let me read app.py.", calls=[read]),
        result("b0000005", "b0000004", 15, read[0], "read", "from flask import Flask\n\napp = Flask(__name__)\n"),
        assistant("b0000006", "b0000005", 22, 'Added `GET /health` returning `{"ok": true}`.'),
        entry("label", "b0000007", "b0000006", 30, targetId="b0000006", label="health"),
        # Fork 1, first branch (written first, later abandoned): a database.
        user("b0000008", "b0000007", 40, "Now store visits in SQLite."),
        assistant("b0000009", "b0000008", 46, "Added a `visits` table and a counter in `/`."),
        # Fork 1, second branch: the user went back and asked for something else.
        user("b000000a", "b0000007", 70, "Instead, add request logging."),
        assistant("b000000b", "b000000a", 75, "Logging every request with method, path and status.", calls=[bash]),
        result("b000000c", "b000000b", 80, bash[0], "bash", " * Running on http://127.0.0.1:5001\n"),
        assistant("b000000d", "b000000c", 84, "The server starts and logs `GET /health 200`."),
        entry("label", "b000000e", "b000000d", 90, targetId="b0000006", label=""),  # cleared
        entry("label", "b000000f", "b000000e", 91, targetId="b000000d", label="logging"),
        # Fork 2 under the label entry: a side question, then the line the leaf is on.
        user("b0000010", "b000000f", 100, "Should I use structlog?"),
        assistant("b0000011", "b0000010", 104, "Not for an app this size; the stdlib logger is enough."),
        user("b0000012", "b000000f", 130, "Write a test for /health."),
        assistant("b0000013", "b0000012", 136, "Added tests/test_health.py; it passes."),
        entry("session_info", "b0000014", "b0000013", 140, name="flask app: health & logging"),
        user("b0000015", "b0000014", 150, "Commit it."),
        assistant("b0000016", "b0000015", 155, "Committed as `Add /health and request logging`."),
    )


def malformed() -> bytes:
    """Version 3 with every kind of line a reader must skip or survive, and a torn last line."""
    good = [
        user("c0000001", None, 5, "first"),
        assistant("c0000002", "c0000001", 8, "second"),
        user("c0000003", "c0000002", 12, "third"),
        assistant("c0000004", "c0000003", 15, "fourth"),
    ]
    # A string holding raw bytes that are not UTF-8 (\xff never is; \xc3\x28 is a broken 2-byte sequence).
    bad_utf8 = dumps(user("c0000005", "c0000004", 20, "caf@@ and @@")).replace(b"@@", b"\xff", 1)
    bad_utf8 = bad_utf8.replace(b"@@", b"\xc3\x28", 1)
    crlf = dumps(assistant("c0000006", "c0000005", 24, "this line ends in CRLF")) + b"\r\n"
    torn = dumps(user("c0000007", "c0000006", 30, "this line was cut off mid-write"))[:70]  # no newline
    return b"".join(
        [
            dumps(HEADER_V3) + b"\n",
            dumps(good[0]) + b"\n",
            b"\n",  # blank line
            dumps(good[1]) + b"\n",
            b"this is not json {\n",  # not JSON
            dumps(good[2]) + b"\n",
            b'[1, 2, {"type": "message"}]\n',  # JSON, but an array
            dumps(good[3]) + b"\n",
            b'"just a string"\n',  # JSON, but a string
            bad_utf8 + b"\n",  # invalid UTF-8 inside a string value
            crlf,  # \r\n line ending
            torn,  # torn last line: no trailing newline
        ]
    )


def cycle() -> bytes:
    """Version 3 whose parent links are broken: a 2-cycle, a self-parent, an orphan, a duplicate id."""
    return jsonl(
        HEADER_V3,
        user("d0000001", None, 5, "the real root"),
        assistant("d0000002", "d0000001", 8, "answer on the real root"),
        user("d0000003", "d0000004", 12, "cycle member A (parent is B)"),
        assistant("d0000004", "d0000003", 14, "cycle member B (parent is A)"),
        user("d0000005", "d0000005", 16, "my parent is myself"),
        user("d0000006", "ffff0000", 18, "orphan: my parent ffff0000 is not in the file"),
        user("d0000007", "d0000002", 20, "first entry with id d0000007"),
        assistant("d0000007", "d0000002", 22, "second entry with the same id d0000007"),
        assistant("d0000008", "d0000007", 25, "the last line: a normal child of the duplicated id"),
    )


def wrong_types() -> bytes:
    """Version 3, one linear chain, each entry with one field of the wrong type (and one unknown type)."""
    weird_calls = assistant("f0000008", "f0000007", 40, "reading", calls=[("toolu_01WTaaaa", "read", {})])
    weird_calls["message"]["content"][1]["arguments"] = '{"path": "src/main.py"}'  # a JSON string, not an object
    entries = [
        user("f0000001", None, 5, "a normal first message"),
        assistant("f0000002", "f0000001", 8, "content is a dict"),
        user("f0000003", "f0000002", 12, "content is a number"),
        assistant("f0000004", "f0000003", 15, "usage is a string"),
        user("f0000005", "f0000004", 20, "timestamp is a number"),
        entry(
            "message",
            "f0000006",
            "f0000005",
            25,
            message={"content": "there is no role", "timestamp": ms(25)},
        ),
        entry("message", "f0000007", "f0000006", 30, message=[{"role": "user", "content": "message is a list"}]),
        weird_calls,
        result("f0000009", "f0000008", 41, "toolu_01WTaaaa", "read", "print('hi')\n"),
        entry("telemetry", "f000000a", "f0000009", 45, payload={"cpu": 0.3}),  # unknown entry type
        entry("label", "f000000b", "f000000a", 50, targetId="f0000002", label=42),  # label not a string
        assistant("f000000c", "f000000b", 55, "the last line, a normal assistant message"),
    ]
    entries[1]["message"]["content"] = {"type": "text", "text": "content is a dict"}
    entries[2]["message"]["content"] = 42
    entries[3]["message"]["usage"] = "lots"
    entries[4]["timestamp"] = ms(20)
    return jsonl(HEADER_V3, *entries)


def no_header() -> bytes:
    """Entries with ids but no session header line (Pi treats the file as empty and overwrites it)."""
    return jsonl(
        user("a0000001", None, 5, "hello without a header"),
        assistant("a0000002", "a0000001", 8, "hi"),
        user("a0000003", "a0000002", 12, "still no header"),
        assistant("a0000004", "a0000003", 15, "indeed"),
    )


ESC = "\u001b"
HOSTILE = {
    "csi": f"{ESC}[31mred{ESC}[0m {ESC}[2J{ESC}[H",
    "osc52": f"{ESC}]52;c;aGVsbG8=\u0007",
    "osc8": f"{ESC}]8;;http://evil.example{ESC}\\click{ESC}]8;;{ESC}\\",
    "dcs": f"{ESC}P1$qm{ESC}\\",
    "c1": "\u009b31m C1-CSI \u009d0;title\u009c \u0085",
    "bidi": "abc\u202edcba\u202c",
    "zero_width": "zero\u200bwidth\u200d\ufeff",
    "markup": "[bold]x[/bold] [link=http://x]y[/link] [red on white]z",
    "misc": "bell\u0007 backspace\u0008 del\u007f cr\rnul\u0000",
}


def hostile() -> bytes:
    """Version 3 whose text, names, paths and labels carry terminal escapes, C1 controls, bidi and markup."""
    everything = " | ".join(HOSTILE.values())
    call = ("toolu_01HOaaaaaaaaaaaaaaaaaaaa", "read", {"path": f"src/{HOSTILE['csi']}{HOSTILE['bidi']}.py"})
    bash_msg = {
        "role": "bashExecution",
        "command": f"echo '{HOSTILE['osc52']}'",
        "output": HOSTILE["dcs"] + HOSTILE["osc8"] + "\n",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": ms(40),
    }
    return jsonl(
        {**HEADER_V3, "cwd": f"/home/dev/{HOSTILE['csi']}{HOSTILE['bidi']}"},
        user("9a000001", None, 5, everything),
        assistant(
            "9a000002",
            "9a000001",
            9,
            f"answer {HOSTILE['markup']} {HOSTILE['osc52']}",
            calls=[call],
            thinking=f"thinking {HOSTILE['c1']} {HOSTILE['zero_width']}",
        ),
        result("9a000003", "9a000002", 10, call[0], "read", HOSTILE["csi"] + HOSTILE["misc"]),
        assistant("9a000004", "9a000003", 14, f"{HOSTILE['dcs']} {HOSTILE['bidi']} {HOSTILE['osc8']}"),
        entry("label", "9a000005", "9a000004", 20, targetId="9a000004", label=f"lbl {HOSTILE['osc52']}"),
        entry("session_info", "9a000006", "9a000005", 25, name=f"{HOSTILE['csi']}name{HOSTILE['markup']}"),
        entry("model_change", "9a000007", "9a000006", 30, provider="anthropic", modelId=HOSTILE["c1"]),
        entry(
            "compaction",
            "9a000008",
            "9a000007",
            35,
            summary=f"## Goal\n{everything}",
            firstKeptEntryId="9a000004",
            tokensBefore=9000,
            details={"readFiles": [call[2]["path"]], "modifiedFiles": [HOSTILE["osc8"]]},
        ),
        entry("message", "9a000009", "9a000008", 40, message=bash_msg),
        entry(
            "custom_message",
            "9a00000a",
            "9a000009",
            45,
            customType=HOSTILE["csi"],
            content=everything,
            display=True,
        ),
        user("9a00000b", "9a00000a", 50, f"last {HOSTILE['markup']} {HOSTILE['c1']}"),
    )


FILES = {
    "v1_linear.jsonl": v1_linear,
    "v2_hookmessage.jsonl": v2_hookmessage,
    "branched.jsonl": branched,
    "malformed.jsonl": malformed,
    "cycle.jsonl": cycle,
    "wrong_types.jsonl": wrong_types,
    "no_header.jsonl": no_header,
    "hostile.jsonl": hostile,
}


def main(out: Path) -> None:
    for name, make in FILES.items():
        data = make()
        (out / name).write_bytes(data)
        newlines = data.count(b"\n")
        print(f"wrote {out / name} ({len(data)} bytes, {newlines} newlines)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
