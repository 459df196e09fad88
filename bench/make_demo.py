"""Writes assets/demo.jsonl: a realistic, branched Pi v3 session for `pitree --demo` and the tests.

Story (2026-11-28, about two hours): a developer builds `weather`, a small stdlib-only Python CLI, with an
agent. The session holds what pitree has to show:
- four forks: the first request re-edited (typer+httpx gave up on PEP 668, stdlib instead); an abandoned
  sqlite cache attempt that ends in a failing pytest run and an API error (returned from with a branch
  summary); a side question left behind; a refactor request whose answer was aborted, re-edited;
- a compaction with Pi's structured summary, labels (one cleared and set again), a session name, the
  model and thinking-level entries Pi writes at session start plus a later thinking change;
- tool calls (read/write/edit/bash/grep, one message with two parallel calls) with results computed from a
  simulated working tree, a user `!git status`, an image, Rich markup and a code fence in user text.
The active leaf is the last line, on a branch that is not the first one written.

Everything is derived from fixed inputs (no clock, no unseeded randomness): running it again writes the
same bytes. JSON is written the way Pi's `JSON.stringify` writes it, numbers included.
Usage: python bench/make_demo.py [OUT]   (default: assets/demo.jsonl)
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
import math
import random
import struct
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

CWD = "/home/dev/projects/weather-cli"
START = datetime(2026, 11, 28, 9, 3, 41, 217000, tzinfo=UTC)
SEED = "weather-cli-demo"
PROVIDER, MODEL, API = "anthropic", "claude-sonnet-4-5", "anthropic-messages"
# claude-sonnet-4-5 list prices in $ per million tokens, as in Pi's model table.
PRICE = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
# Pi's system prompt, tool schemas and AGENTS.md, in tokens.
SYSTEM_TOKENS = 4312
# The files and outputs quoted here are abridged; token counts are scaled up to what the unabridged session
# would have used, so that usage, the compaction's tokensBefore and the context view tell one story.
CONTEXT_SCALE = 9.3
# Anthropic's prompt cache expires after five minutes without a hit.
CACHE_TTL_MS = 5 * 60 * 1000
PI_IMAGE_CHARS = 4800  # Pi estimates an image as 1200 tokens


# ---- JSON exactly as JavaScript's JSON.stringify writes it ------------------------------------------------


def js_number(x: float | int) -> str:
    if isinstance(x, bool):
        raise TypeError("bool is not a number here")
    if isinstance(x, int) or (x == int(x) and abs(x) < 1e21):
        return str(int(x))
    text = repr(x)  # the shortest digits that round-trip, as in JS
    if "e" not in text:
        return text
    if abs(x) >= 1e-6:  # JS writes plain decimals down to 1e-6; Python's repr switches at 1e-4
        return format(Decimal(text), "f")
    mantissa, exp = text.split("e")
    return f"{mantissa}e{int(exp)}"


def js_dumps(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(js_dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        # JSON.stringify drops keys whose value is undefined; None stands for undefined only via omission.
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{js_dumps(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot serialise {type(value).__name__}")


# ---- small pieces Pi would have produced -----------------------------------------------------------------


def digest(*parts: object) -> bytes:
    return hashlib.sha256("/".join([SEED, *map(str, parts)]).encode()).digest()


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def uuid7(ms: int) -> str:
    rand = digest("session-uuid").hex()
    hexed = f"{ms:012x}7{rand[:3]}{(8 | int(rand[3], 16) & 3):x}{rand[4:19]}"
    return f"{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:32]}"


def base62(data: bytes, n: int) -> str:
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    num, out = int.from_bytes(data, "big"), list[str]()
    while len(out) < n:
        num, r = divmod(num, 62)
        out.append(alphabet[r])
    return "".join(out)


def js_length(text: str) -> int:
    """String.length in JavaScript: UTF-16 code units (Pi's write tool reports this as 'bytes')."""
    return len(text.encode("utf-16-le")) // 2


def pi_diff(old: str, new: str, context: int = 4) -> tuple[str, int | None]:
    """Pi's edit-tool diff (generateDiffString) on a line diff: numbered -/+ lines, 4 lines of context."""
    width = len(str(max(old.count("\n"), new.count("\n")) + 1))
    # jsdiff's lines: a final newline ends the last line rather than starting an empty one.
    old_lines, new_lines = old.removesuffix("\n").split("\n"), new.removesuffix("\n").split("\n")
    parts: list[tuple[str, list[str]]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            parts.append(("=", old_lines[i1:i2]))
        if tag in ("replace", "delete"):
            parts.append(("-", old_lines[i1:i2]))
        if tag in ("replace", "insert"):
            parts.append(("+", new_lines[j1:j2]))
    out: list[str] = []
    old_n = new_n = 1
    first: int | None = None
    last_change = False
    for i, (kind, lines) in enumerate(parts):
        if kind != "=":
            first = new_n if first is None else first
            for line in lines:
                out.append(f"{kind}{(new_n if kind == '+' else old_n):>{width}} {line}")
                new_n, old_n = (new_n + 1, old_n) if kind == "+" else (new_n, old_n + 1)
            last_change = True
            continue
        nxt = i + 1 < len(parts) and parts[i + 1][0] != "="
        shown: list[str | None]  # None: the "..." of skipped lines
        if last_change and nxt and len(lines) > 2 * context:
            shown = [*lines[:context], None, *lines[-context:]]
        elif last_change and nxt:
            shown = list(lines)
        elif last_change:
            shown = [*lines[:context], *([None] if len(lines) > context else [])]
        elif nxt:
            shown = [*([None] if len(lines) > context else []), *lines[-context:]]
        else:
            shown = []
        skipped = len(lines) - sum(1 for row in shown if row is not None)
        for row in shown:
            if row is None:
                out.append(f" {'':>{width}} ...")
                old_n, new_n = old_n + skipped, new_n + skipped
            else:
                out.append(f" {old_n:>{width}} {row}")
                old_n, new_n = old_n + 1, new_n + 1
        if not shown:
            old_n, new_n = old_n + len(lines), new_n + len(lines)
        last_change = False
    return "\n".join(out), first


def tiny_png(rows: list[str], palette: dict[str, tuple[int, int, int]], scale: int) -> bytes:
    """An RGB PNG drawn from character rows, each character a scale×scale block of its palette colour."""
    assert len({len(row) for row in rows}) == 1, "rows of one width"
    raw = b""
    for row in rows:
        line = b"".join(bytes(palette[c]) * scale for c in row)
        raw += (b"\x00" + line) * scale

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    width, height = len(rows[0]) * scale, len(rows) * scale
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


GLYPHS = {  # 3×5 pixel glyphs; "d" blocks stand in for text too small to draw
    "3": ["www", "..w", ".ww", "..w", "www"],
    ".": ["...", "...", "...", "...", ".w."],
    "4": ["w.w", "w.w", "www", "..w", "..w"],
    "C": [".ww", "w..", "w..", "w..", ".ww"],
    "?": ["www", "w.w", "w.w", "w.w", "www"],  # the tofu box a missing glyph is drawn as
    " ": ["..", "..", "..", "..", ".."],
    "d": ["dd", "dd", "dd", "dd", "dd"],
}


def glyph_rows(text: str, width: int) -> list[str]:
    rows = ["." + ".".join(GLYPHS[c][y] for c in text) for y in range(5)]
    return [row.ljust(width, ".") for row in rows]


# A terminal screenshot: the prompt, then "Berlin, DE: 3.4 ▯C, wind …" where the degree sign became tofu.
SCREENSHOT = tiny_png(
    [
        "." * 48,
        ".gg.wwwwwww.www.wwwwww".ljust(48, "."),
        "." * 48,
        *glyph_rows("ddd 3.4 ?C ddd", 48),
        "." * 48,
        ".gg.c".ljust(48, "."),
        ".gg.c".ljust(48, "."),
        "." * 48,
    ],
    {".": (24, 26, 33), "g": (92, 170, 96), "w": (222, 224, 228), "c": (180, 182, 190), "d": (120, 124, 132)},
    scale=3,
)


# ---- the session builder ---------------------------------------------------------------------------------


@dataclass
class Entry:
    line: dict[str, Any]
    ms: int
    prompt_tokens: int = 0  # for assistants: tokens sent in that request


@dataclass
class Session:
    entries: list[Entry] = field(default_factory=list)
    by_id: dict[str, Entry] = field(default_factory=dict)
    leaf: str | None = None
    clock: int = int(START.timestamp() * 1000)
    files: dict[str, str] = field(default_factory=dict)  # the simulated working tree
    rng: random.Random = field(default_factory=lambda: random.Random(SEED))

    # -- ids, time, tree

    def new_id(self) -> str:
        n = len(self.entries)
        while True:
            eid = digest("entry", n).hex()[:8]
            if eid not in self.by_id:
                return eid
            n += 1000

    def wait(self, seconds: float) -> int:
        self.clock += int(seconds * 1000) + self.rng.randint(0, 999)
        return self.clock

    def add(self, etype: str, fields: dict[str, Any], after: float) -> str:
        eid = self.new_id()
        ms = self.wait(after)
        line = {"type": etype, "id": eid, "parentId": self.leaf, "timestamp": iso(ms), **fields}
        self.entries.append(entry := Entry(line, ms))
        self.by_id[eid] = entry
        self.leaf = eid
        return eid

    def goto(self, eid: str | None) -> None:
        """Move the leaf like Pi's /tree does (in memory); the next entry hangs below it."""
        self.leaf = eid

    def path(self) -> list[Entry]:
        out, cur = [], self.leaf
        while cur is not None:
            out.append(self.by_id[cur])
            cur = out[-1].line["parentId"]
        return out[::-1]

    # -- token accounting, so usage numbers add up along each branch

    @staticmethod
    def chars(line: dict[str, Any]) -> int:
        if line["type"] in ("compaction", "branch_summary"):
            return len(line["summary"])
        if line["type"] != "message":
            return 0
        msg = line["message"]
        if msg["role"] == "bashExecution":
            return len(msg["command"]) + len(msg["output"])
        content = msg["content"]
        if isinstance(content, str):
            return len(content)
        total = 0
        for block in content:
            kind = block["type"]
            total += {
                "text": lambda b: len(b["text"]),
                "thinking": lambda b: len(b["thinking"]),
                "toolCall": lambda b: len(b["name"]) + len(js_dumps(b["arguments"])),
                "image": lambda b: PI_IMAGE_CHARS,
            }[kind](block)
        return total

    def context(self) -> list[Entry]:
        """The entries Pi's buildSessionContext would send from the current leaf (compaction-aware)."""
        path = self.path()
        comp = max((i for i, e in enumerate(path) if e.line["type"] == "compaction"), default=None)
        if comp is None:
            return path
        kept_from = next(
            (i for i, e in enumerate(path[:comp]) if e.line["id"] == path[comp].line["firstKeptEntryId"]),
            comp,
        )
        return [path[comp], *path[kept_from:comp], *path[comp + 1 :]]

    def usage(self, output_chars: int, *, output_tokens: int | None = None) -> tuple[dict[str, Any], int]:
        ctx = self.context()
        prompt = SYSTEM_TOKENS + math.ceil(sum(self.chars(e.line) for e in ctx) * CONTEXT_SCALE / 4)
        # The cached prefix is the previous request on this path, unless a compaction or a pause broke it.
        cached = 0
        for e in reversed(ctx):
            if e.line["type"] == "compaction":
                cached = SYSTEM_TOKENS if self.clock - e.ms < CACHE_TTL_MS else 0
                break
            if e.prompt_tokens:
                cached = e.prompt_tokens if self.clock - e.ms < CACHE_TTL_MS else 0
                break
        fresh = prompt - cached
        tokens = {
            "input": min(fresh, self.rng.randint(1, 9)),
            "output": output_tokens if output_tokens is not None else max(12, math.ceil(output_chars / 3.7)),
            "cacheRead": cached,
        }
        tokens["cacheWrite"] = fresh - tokens["input"]
        tokens["totalTokens"] = tokens["input"] + tokens["output"] + tokens["cacheRead"] + tokens["cacheWrite"]
        # The same float arithmetic as pi-ai's calculateCost, so the digits match what Pi writes.
        cost = {k: (PRICE[k] / 1000000) * tokens[k] for k in ("input", "output", "cacheRead", "cacheWrite")}
        cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
        return {**tokens, "cost": cost}, prompt

    # -- messages

    def user(self, text: str, after: float, image: bytes | None = None) -> str:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if image is not None:
            content.append({"type": "image", "data": base64.b64encode(image).decode(), "mimeType": "image/png"})
        msg: dict[str, Any] = {"role": "user", "content": content}
        eid = self.add("message", {"message": msg}, after)
        msg["timestamp"] = self.by_id[eid].ms - self.rng.randint(3, 19)
        return eid

    def assistant(
        self,
        blocks: list[dict[str, Any]],
        stop: str,
        *,
        error: str | None = None,
        aborted_after: float | None = None,
    ) -> str:
        for i, block in enumerate(blocks):
            if block["type"] == "thinking":
                block["thinkingSignature"] = base64.b64encode(digest("sig", len(self.entries)) * 5).decode()
            if block["type"] == "toolCall":
                # Key order as Pi writes it: type, id, name, arguments.
                blocks[i] = {
                    "type": "toolCall",
                    "id": "toolu_01" + base62(digest("call", len(self.entries), i), 22),
                    "name": block["name"],
                    "arguments": block["arguments"],
                }
        started = self.clock + self.rng.randint(2, 9)
        out_chars = sum(
            self.chars({"type": "message", "message": {"role": "assistant", "content": [b]}}) for b in blocks
        )
        if error is not None:
            usage: dict[str, Any] = {
                "input": 0,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            }
            prompt, seconds = 0, 4.0
        elif aborted_after is not None:
            # message_start reported the prompt; the final output count never arrived.
            usage, prompt = self.usage(0, output_tokens=self.rng.randint(2, 5))
            seconds = aborted_after
        else:
            usage, prompt = self.usage(out_chars)
            seconds = 1.4 + usage["output"] / 62
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": blocks,
            "api": API,
            "provider": PROVIDER,
            "model": MODEL,
            "usage": usage,
            "stopReason": stop,
            "timestamp": started,
        }
        if error is None:
            msg["responseId"] = "msg_01" + base62(digest("response", len(self.entries)), 22)
        if stop == "aborted":
            msg["errorMessage"] = "Request was aborted"
        if error is not None:
            msg["errorMessage"] = error
        eid = self.add("message", {"message": msg}, seconds)
        self.by_id[eid].prompt_tokens = prompt
        return eid

    def reply(self, text: str, thinking: str | None = None) -> str:
        blocks = ([{"type": "thinking", "thinking": thinking}] if thinking else []) + [{"type": "text", "text": text}]
        return self.assistant(blocks, "stop")

    def tools(
        self, calls: list[tuple[str, dict[str, Any]]], text: str | None = None, thinking: str | None = None
    ) -> str:
        """One assistant turn calling tools (in parallel if several), then one result per call."""
        blocks: list[dict[str, Any]] = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking})
        if text:
            blocks.append({"type": "text", "text": text})
        blocks += [{"type": "toolCall", "name": name, "arguments": args} for name, args in calls]
        self.assistant(blocks, "toolUse")
        last = ""
        for block in blocks:
            if block["type"] == "toolCall":
                last = self.tool_result(block)
        return last

    def tool_result(self, call: dict[str, Any]) -> str:
        name, args = call["name"], call["arguments"]
        details: dict[str, Any] | None = None
        error = False
        seconds = 0.05
        if name == "read":
            lines = self.files[args["path"]].split("\n")
            start = args.get("offset", 1) - 1
            end = min(start + args["limit"], len(lines)) if "limit" in args else len(lines)
            text = "\n".join(lines[start:end])
            if end < len(lines):
                text += f"\n\n[{len(lines) - end} more lines in file. Use offset={end + 1} to continue.]"
        elif name == "write":
            self.files[args["path"]] = args["content"]
            text = f"Successfully wrote {js_length(args['content'])} bytes to {args['path']}"
        elif name == "edit":
            before = self.files[args["path"]]
            after = before
            for edit in args["edits"]:
                assert before.count(edit["oldText"]) == 1, (args["path"], edit["oldText"])
                after = after.replace(edit["oldText"], edit["newText"])
            self.files[args["path"]] = after
            diff, first = pi_diff(before, after)
            text = f"Successfully replaced {len(args['edits'])} block(s) in {args['path']}."
            details = {"diff": diff, "firstChangedLine": first}
        elif name == "grep":
            # Pi prints paths relative to the directory searched.
            root = args["path"].rstrip("/") + "/"
            text = (
                "\n".join(
                    f"{path.removeprefix(root)}:{n}: {line}"
                    for path, body in sorted(self.files.items())
                    if path.startswith(root)
                    for n, line in enumerate(body.split("\n"), 1)
                    if args["pattern"] in line
                )
                or "No matches found"
            )
        elif name == "bash":
            output, code, seconds = BASH[args["command"]](self)
            text = (
                output
                if code == 0
                else f"{output}\n\nCommand exited with code {code}"
                if output
                else f"Command exited with code {code}"
            )
            error = code != 0
            details = {} if error else None
        else:
            raise ValueError(name)
        msg: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": name,
            "content": [{"type": "text", "text": text}],
        }
        if details is not None:
            msg["details"] = details
        msg["isError"] = error
        eid = self.add("message", {"message": msg}, seconds)
        msg["timestamp"] = self.by_id[eid].ms - self.rng.randint(0, 3)
        return eid

    def bash_execution(self, command: str, output: str, after: float) -> str:
        msg: dict[str, Any] = {
            "role": "bashExecution",
            "command": command,
            "output": output,
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
        eid = self.add("message", {"message": msg}, after)
        msg["timestamp"] = self.by_id[eid].ms - self.rng.randint(1, 6)
        return eid


# ---- the project being built: file contents and command outputs -----------------------------------------

README = "# weather-cli\n\nA tiny command line weather tool. Work in progress.\n"
PYPROJECT = """[project]
name = "weather-cli"
version = "0.1.0"
requires-python = ">=3.11"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

API_PY = '''"""Open-Meteo client: geocoding and current weather, standard library only."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

GEOCODE_URL = "https://geocoding-api.open-meteo.com/v1/search"
FORECAST_URL = "https://api.open-meteo.com/v1/forecast"
USER_AGENT = "weather-cli/0.1"


class WeatherError(Exception):
    """A city that cannot be found, or an API that keeps failing."""


def _get_json(url: str, params: dict[str, str | float], timeout: float = 10.0) -> dict:
    query = urllib.parse.urlencode(params)
    req = urllib.request.Request(f"{url}?{query}", headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.load(resp)


def geocode(city: str) -> tuple[str, float, float]:
    data = _get_json(GEOCODE_URL, {"name": city, "count": 1, "language": "en", "format": "json"})
    results = data.get("results") or []
    if not results:
        raise WeatherError(f"city not found: {city}")
    top = results[0]
    return f"{top['name']}, {top.get('country_code', '?')}", top["latitude"], top["longitude"]


def current(lat: float, lon: float) -> dict:
    params = {"latitude": lat, "longitude": lon, "current": "temperature_2m,wind_speed_10m"}
    return _get_json(FORECAST_URL, params)["current"]
'''

CLI_PY = '''"""Command line entry point: `weather now CITY`."""

from __future__ import annotations

import argparse
import sys

from weather import api


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="weather", description="Current weather from open-meteo.com")
    sub = parser.add_subparsers(dest="command", required=True)
    now = sub.add_parser("now", help="current conditions for a city")
    now.add_argument("city")
    args = parser.parse_args(argv)
    try:
        name, lat, lon = api.geocode(args.city)
        cur = api.current(lat, lon)
    except api.WeatherError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    temp, wind = cur["temperature_2m"], cur["wind_speed_10m"]
    print(f"{name}: {temp:.1f} °C, wind {wind:.0f} km/h")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

SQLITE_CACHE_PY = '''"""Response cache in SQLite, with a TTL."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path


class Cache:
    def __init__(self, path: Path, ttl: float = 600.0) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, stored REAL, body TEXT)")
        self.ttl = ttl

    def get(self, key: str) -> dict | None:
        row = self.db.execute("SELECT stored, body FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return json.loads(row[1])

    def put(self, key: str, value: dict) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO responses VALUES (?, ?, ?)",
            (key, time.monotonic(), json.dumps(value)),
        )
        self.db.commit()
'''

SQLITE_TEST_PY = """import time
from concurrent.futures import ThreadPoolExecutor

from weather.cache import Cache


def test_roundtrip(tmp_path):
    cache = Cache(tmp_path / "cache.sqlite3")
    cache.put("52.52,13.41", {"temperature_2m": 3.4})
    assert cache.get("52.52,13.41") == {"temperature_2m": 3.4}


def test_cache_expires(tmp_path, monkeypatch):
    cache = Cache(tmp_path / "cache.sqlite3", ttl=600)
    cache.put("52.52,13.41", {"temperature_2m": 3.4})
    monkeypatch.setattr(time, "monotonic", lambda: 10_000_000.0)
    assert cache.get("52.52,13.41") is None


def test_cache_from_thread(tmp_path):
    cache = Cache(tmp_path / "cache.sqlite3")
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(cache.put, "k", {"v": 1}).result()
    assert cache.get("k") == {"v": 1}
"""

SQLITE_PYTEST = """.FF                                                                      [100%]
=================================== FAILURES ===================================
______________________________ test_cache_expires ______________________________

tmp_path = PosixPath('/tmp/pytest-of-dev/pytest-14/test_cache_expires0')
monkeypatch = <_pytest.monkeypatch.MonkeyPatch object at 0x7f3a2c1e9b50>

    def test_cache_expires(tmp_path, monkeypatch):
        cache = Cache(tmp_path / "cache.sqlite3", ttl=600)
        cache.put("52.52,13.41", {"temperature_2m": 3.4})
        monkeypatch.setattr(time, "monotonic", lambda: 10_000_000.0)
>       assert cache.get("52.52,13.41") is None
E       AssertionError: assert {'temperature_2m': 3.4} is None
E        +  where {'temperature_2m': 3.4} = get('52.52,13.41')
E        +    where get = <weather.cache.Cache object at 0x7f3a2c1e9d10>.get

tests/test_cache.py:17: AssertionError
____________________________ test_cache_from_thread ____________________________

tmp_path = PosixPath('/tmp/pytest-of-dev/pytest-14/test_cache_from_thread0')

    def test_cache_from_thread(tmp_path):
        cache = Cache(tmp_path / "cache.sqlite3")
        with ThreadPoolExecutor(max_workers=1) as pool:
>           pool.submit(cache.put, "k", {"v": 1}).result()

tests/test_cache.py:23:\x20
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\x20
/usr/lib/python3.11/concurrent/futures/_base.py:456: in result
    return self.__get_result()
/usr/lib/python3.11/concurrent/futures/_base.py:401: in __get_result
    raise self._exception
/usr/lib/python3.11/concurrent/futures/thread.py:58: in run
    result = self.fn(*self.args, **self.kwargs)
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\x20

self = <weather.cache.Cache object at 0x7f3a2c1ea110>, key = 'k', value = {'v': 1}

    def put(self, key: str, value: dict) -> None:
>       self.db.execute(
            "INSERT OR REPLACE INTO responses VALUES (?, ?, ?)",
            (key, time.monotonic(), json.dumps(value)),
        )
E       sqlite3.ProgrammingError: SQLite objects created in a thread can only be used in that same thread. \
The object was created in thread id 139887551092544 and this is thread id 139887520462400.

weather/cache.py:25: ProgrammingError
=========================== short test summary info ============================
FAILED tests/test_cache.py::test_cache_expires - AssertionError: assert {'tem...
FAILED tests/test_cache.py::test_cache_from_thread - sqlite3.ProgrammingError...
2 failed, 1 passed in 0.11s
"""

PIP_ERROR = """error: externally-managed-environment

× This environment is externally managed
╰─> To install Python packages system-wide, try apt install
    python3-xyz, where xyz is the package you are trying to
    install.

    If you wish to install a non-Debian-packaged Python package,
    create a virtual environment using python3 -m venv path/to/venv.
    Then use path/to/venv/bin/python and path/to/venv/bin/pip. Make
    sure you have python3-full installed.

    See /usr/share/doc/python3.11/README.venv for more information.

note: If you believe this is a mistake, please contact your Python installation or OS distribution provider. \
You can override this, at the risk of breaking your Python installation or OS, by passing \
--break-system-packages.
hint: See PEP 668 for the detailed specification.
"""

RETRY_IMPORTS = (
    "import json\nimport urllib.parse\nimport urllib.request\n",
    "import json\nimport time\nimport urllib.error\nimport urllib.parse\nimport urllib.request\n",
)
RETRY_OLD = """def _get_json(url: str, params: dict[str, str | float], timeout: float = 10.0) -> dict:
    query = urllib.parse.urlencode(params)
    req = urllib.request.Request(f"{url}?{query}", headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.load(resp)
"""
RETRY_NEW = """RETRY_STATUS = {429, 500, 502, 503, 504}


def _get_json(url: str, params: dict[str, str | float], timeout: float = 10.0, attempts: int = 4) -> dict:
    query = urllib.parse.urlencode(params)
    req = urllib.request.Request(f"{url}?{query}", headers={"User-Agent": USER_AGENT})
    delay = 0.5
    for attempt in range(1, attempts + 1):
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as exc:
            if exc.code not in RETRY_STATUS or attempt == attempts:
                raise WeatherError(f"HTTP {exc.code} from {urllib.parse.urlsplit(url).netloc}") from exc
            retry_after = exc.headers.get("Retry-After", "")
            time.sleep(float(retry_after) if retry_after.isdigit() else delay)
        except (urllib.error.URLError, TimeoutError) as exc:
            if attempt == attempts:
                raise WeatherError(f"network error: {exc}") from exc
            time.sleep(delay)
        delay *= 2
    raise AssertionError("unreachable")
"""

TEST_API_PY = """import io
import urllib.error

import pytest

from weather import api


class FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def http_error(code, headers=None):
    return urllib.error.HTTPError(api.FORECAST_URL, code, "error", headers or {}, None)


@pytest.fixture(autouse=True)
def slept(monkeypatch):
    calls = []
    monkeypatch.setattr(api.time, "sleep", calls.append)
    return calls


def serve(monkeypatch, *answers):
    queue = list(answers)

    def fake_urlopen(req, timeout):
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(api.urllib.request, "urlopen", fake_urlopen)


def test_retries_then_succeeds(monkeypatch, slept):
    ok = FakeResponse(b'{"current": {"temperature_2m": 3.4}}')
    serve(monkeypatch, http_error(503), http_error(429), ok)
    assert api._get_json(api.FORECAST_URL, {}) == {"current": {"temperature_2m": 3.4}}
    assert slept == [0.5, 1.0]


def test_honours_retry_after(monkeypatch, slept):
    serve(monkeypatch, http_error(429, {"Retry-After": "3"}), FakeResponse(b"{}"))
    api._get_json(api.FORECAST_URL, {})
    assert slept == [3.0]


def test_gives_up_after_four_attempts(monkeypatch, slept):
    serve(monkeypatch, *[http_error(503)] * 4)
    with pytest.raises(api.WeatherError, match="HTTP 503"):
        api._get_json(api.FORECAST_URL, {})
    assert slept == [0.5, 1.0, 2.0]


def test_404_is_not_retried(monkeypatch, slept):
    serve(monkeypatch, http_error(404))
    with pytest.raises(api.WeatherError, match="HTTP 404"):
        api._get_json(api.FORECAST_URL, {})
    assert slept == []
"""

DEGREE_OLD = """    print(f"{name}: {temp:.1f} °C, wind {wind:.0f} km/h")
    return 0
"""
DEGREE_NEW = '''    print(f"{name}: {temp:.1f}{_degree()}C, wind {wind:.0f} km/h")
    return 0


def _degree() -> str:
    """' °' where stdout can encode it, ' deg' elsewhere (LANG=C, cron mails, old consoles)."""
    try:
        "°".encode(sys.stdout.encoding or "ascii")
    except UnicodeEncodeError:
        return " deg"
    return " °"
'''

ERROR_OLD = """    except api.WeatherError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
"""
ERROR_NEW = """    except api.WeatherError as exc:
        print(f"{_red('error:')} {exc}", file=sys.stderr)
        return 1
"""
RED_OLD = """def _degree() -> str:"""
RED_NEW = '''def _red(text: str) -> str:
    """Bold red on a terminal that wants colour (https://no-color.org), plain text otherwise."""
    if sys.stderr.isatty() and not os.environ.get("NO_COLOR"):
        return f"\\033[1;31m{text}\\033[0m"
    return text


def _degree() -> str:'''

JSON_CACHE_PY = '''"""A tiny on-disk cache: one JSON file per location, expired by age."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

TTL_SECONDS = 600


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "weather-cli"


def _path(lat: float, lon: float) -> Path:
    return cache_dir() / f"{lat:.2f},{lon:.2f}.json"


def load(lat: float, lon: float, ttl: float = TTL_SECONDS) -> dict | None:
    path = _path(lat, lon)
    try:
        if time.time() - path.stat().st_mtime > ttl:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def store(lat: float, lon: float, data: dict) -> None:
    path = _path(lat, lon)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)
'''

JSON_CACHE_TEST_PY = """import os

import pytest

from weather import cache


@pytest.fixture(autouse=True)
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def test_store_then_load():
    cache.store(52.52, 13.41, {"temperature_2m": 3.4})
    assert cache.load(52.52, 13.41) == {"temperature_2m": 3.4}


def test_rounds_coordinates(cache_home):
    cache.store(52.5200066, 13.404954, {"t": 1})
    assert (cache_home / "weather-cli" / "52.52,13.40.json").exists()


def test_expired_entry_is_ignored(cache_home):
    cache.store(52.52, 13.41, {"t": 1})
    path = cache_home / "weather-cli" / "52.52,13.41.json"
    os.utime(path, (0, 0))
    assert cache.load(52.52, 13.41) is None


def test_corrupt_file_is_a_miss(cache_home):
    (cache_home / "weather-cli").mkdir()
    (cache_home / "weather-cli" / "52.52,13.41.json").write_text("{not json")
    assert cache.load(52.52, 13.41) is None
"""

CLI_CACHE_EDITS = [
    ("from weather import api\n", "from weather import api, cache\n"),
    (
        """    now.add_argument("city")
    args = parser.parse_args(argv)
    try:
        name, lat, lon = api.geocode(args.city)
        cur = api.current(lat, lon)
""",
        """    now.add_argument("city")
    now.add_argument("--no-cache", action="store_true", help="always ask the API")
    args = parser.parse_args(argv)
    try:
        name, lat, lon = api.geocode(args.city)
        cur = None if args.no_cache else cache.load(lat, lon)
        if cur is None:
            cur = api.current(lat, lon)
            cache.store(lat, lon, cur)
""",
    ),
]

UNITS_API = (
    """def current(lat: float, lon: float) -> dict:
    params = {"latitude": lat, "longitude": lon, "current": "temperature_2m,wind_speed_10m"}
    return _get_json(FORECAST_URL, params)["current"]
""",
    """def current(lat: float, lon: float, units: str = "metric") -> dict:
    params = {"latitude": lat, "longitude": lon, "current": "temperature_2m,wind_speed_10m"}
    if units == "imperial":
        params |= {"temperature_unit": "fahrenheit", "wind_speed_unit": "mph"}
    return _get_json(FORECAST_URL, params)["current"]
""",
)
UNITS_CLI = [
    (
        """    now.add_argument("--no-cache", action="store_true", help="always ask the API")
""",
        """    now.add_argument("--no-cache", action="store_true", help="always ask the API")
    now.add_argument("--units", choices=["metric", "imperial"], default="metric")
""",
    ),
    (
        """        cur = None if args.no_cache else cache.load(lat, lon)
        if cur is None:
            cur = api.current(lat, lon)
            cache.store(lat, lon, cur)
""",
        """        cur = None if args.no_cache else cache.load(lat, lon, args.units)
        if cur is None:
            cur = api.current(lat, lon, args.units)
            cache.store(lat, lon, cur, args.units)
""",
    ),
    (
        """    print(f"{name}: {temp:.1f}{_degree()}C, wind {wind:.0f} km/h")
""",
        """    temp_unit, wind_unit = ("F", "mph") if args.units == "imperial" else ("C", "km/h")
    print(f"{name}: {temp:.1f}{_degree()}{temp_unit}, wind {wind:.0f} {wind_unit}")
""",
    ),
]
UNITS_CACHE = [
    (
        """def _path(lat: float, lon: float) -> Path:
    return cache_dir() / f"{lat:.2f},{lon:.2f}.json"


def load(lat: float, lon: float, ttl: float = TTL_SECONDS) -> dict | None:
    path = _path(lat, lon)""",
        """def _path(lat: float, lon: float, units: str) -> Path:
    # Metric keeps the original name, so cache files written before --units stay valid.
    suffix = "" if units == "metric" else f",{units}"
    return cache_dir() / f"{lat:.2f},{lon:.2f}{suffix}.json"


def load(lat: float, lon: float, units: str = "metric", ttl: float = TTL_SECONDS) -> dict | None:
    path = _path(lat, lon, units)""",
    ),
    (
        """def store(lat: float, lon: float, data: dict) -> None:
    path = _path(lat, lon)""",
        """def store(lat: float, lon: float, data: dict, units: str = "metric") -> None:
    path = _path(lat, lon, units)""",
    ),
]

GIT_STATUS = """On branch main
Changes not staged for commit:
  (use "git add <file>..." to update what will be committed)
  (use "git restore <file>..." to discard changes in working directory)
\tmodified:   pyproject.toml

Untracked files:
  (use "git add <file>..." to include in what will be committed)
\ttests/
\tweather/api.py
\tweather/cli.py

no changes added to commit (use "git add" and/or "git commit -a")
"""


def pytest_ok(names: dict[str, int], seconds: float) -> Callable[[Session], tuple[str, int, float]]:
    total = sum(names.values())

    def run(_: Session) -> tuple[str, int, float]:
        body = "".join(f"{'.' * n}" for n in names.values())
        return f"{body:<74}[100%]\n{total} passed in {seconds:.2f}s\n", 0, 0.9 + seconds

    return run


# Command -> (output, exit code, seconds); a command can look at the simulated tree through the Session.
BASH: dict[str, Callable[[Session], tuple[str, int, float]]] = {
    "python3 -m pip install typer httpx": lambda s: (PIP_ERROR, 1, 1.7),
    "ls -la && git log --oneline -5": lambda s: (
        "total 20\n"
        "drwxr-xr-x  4 dev dev 4096 Nov 28 09:58 .\n"
        "drwxr-xr-x 11 dev dev 4096 Nov 27 18:20 ..\n"
        "drwxr-xr-x  8 dev dev 4096 Nov 28 09:58 .git\n"
        "-rw-r--r--  1 dev dev   72 Nov 27 18:21 README.md\n"
        "-rw-r--r--  1 dev dev  111 Nov 27 18:21 pyproject.toml\n"
        "drwxr-xr-x  2 dev dev 4096 Nov 27 18:21 weather\n"
        "3f9c2d1 Initial commit\n",
        0,
        0.1,
    ),
    "python -m weather.cli now Berlin": lambda s: ("Berlin, DE: 3.4 °C, wind 14 km/h\n", 0, 1.3),
    "python -m pytest -q tests/test_cache.py": lambda s: (SQLITE_PYTEST, 1, 1.4),
    "python -m pytest -q": pytest_ok({"tests/test_api.py": 4}, 0.06),
    "LANG=C python -m weather.cli now Berlin; python -m weather.cli now Berlin | cat": lambda s: (
        "Berlin, DE: 3.1 degC, wind 13 km/h\nBerlin, DE: 3.1 °C, wind 13 km/h\n",
        0,
        2.2,
    ),
    'python -m weather.cli now Atlantis; echo "exit=$?"': lambda s: (
        "error: city not found: Atlantis\nexit=1\n",
        0,
        0.8,
    ),
    "python -m pytest -q && XDG_CACHE_HOME=/tmp/wc python -m weather.cli now Berlin "
    "&& ls /tmp/wc/weather-cli": lambda s: (
        pytest_ok({"tests/test_api.py": 4, "tests/test_cache.py": 4}, 0.08)(s)[0]
        + "Berlin, DE: 2.9 °C, wind 12 km/h\n52.52,13.41.json\n",
        0,
        2.4,
    ),
    "python -m pytest -q && python -m weather.cli now Boston --units imperial": lambda s: (
        pytest_ok({"tests/test_api.py": 4, "tests/test_cache.py": 4}, 0.08)(s)[0] + "Boston, US: 41.4 °F, wind 9 mph\n",
        0,
        2.1,
    ),
}


COMPACTION_SUMMARY = """## Goal
Build `weather`, a small Python 3.11 command line tool (`weather now CITY`) that prints the current \
temperature and wind from open-meteo.com, with retries and, later, an on-disk cache.

## Constraints & Preferences
- Standard library only (`urllib`, `argparse`, `json`); no pip installs: the system Python is \
externally managed (PEP 668)
- Tests with pytest and no network: `urlopen` and `time.sleep` are monkeypatched
- No sqlite for the cache (tried in another branch and dropped)

## Progress
### Done
- [x] `weather/api.py`: `geocode()`, `current()`, `_get_json()` against geocoding-api.open-meteo.com and \
api.open-meteo.com; `WeatherError` for unknown cities
- [x] `weather/cli.py`: argparse with the `now CITY` subcommand; errors go to stderr with exit code 1
- [x] `pyproject.toml`: `[project.scripts] weather = "weather.cli:main"`
- [x] Retries in `_get_json()`: 4 attempts, backoff 0.5/1/2 s, honours `Retry-After`, retries \
429/500/502/503/504 and `URLError`/`TimeoutError`
- [x] `tests/test_api.py`: 4 tests, all passing (`python -m pytest -q`)

### In Progress
- [ ] (none)

### Blocked
- (none)

## Key Decisions
- **Stdlib instead of typer + httpx**: pip refused to install into the system Python, and two GET requests \
do not justify a virtualenv
- **Retries before the cache**: open-meteo answers bursts with HTTP 429
- **sqlite cache abandoned**: `Cache.get()` ignored the TTL and the connection could not be used from \
another thread (`sqlite3.ProgrammingError`); the user deleted `weather/cache.py` and `tests/test_cache.py`

## Next Steps
1. Handle whatever the user reports about the output (see the kept messages)
2. Bring the cache back as plain JSON files with a TTL and a `--no-cache` flag

## Critical Context
- `python -m weather.cli now Berlin` prints `Berlin, DE: 3.4 °C, wind 14 km/h`

<read-files>
README.md
</read-files>

<modified-files>
pyproject.toml
tests/test_api.py
weather/api.py
weather/cli.py
</modified-files>"""

BRANCH_SUMMARY = """The user explored a different conversation branch before returning here.
Summary of that exploration:

## Goal
Add an on-disk cache with a TTL so that repeated `weather now CITY` calls do not hit open-meteo.

## Constraints & Preferences
- Standard library only (`sqlite3` is fine)
- Cache under `~/.cache/weather-cli`

## Progress
### Done
- [x] Wrote `weather/cache.py`: `Cache` class on sqlite3 (table `responses`: key, stored, body)
- [x] Wrote `tests/test_cache.py` with 3 tests

### In Progress
- [ ] Wiring `Cache` into `weather/cli.py` (not started)

### Blocked
- `test_cache_expires`: `Cache.get()` never compares `stored` with the TTL \
(`AssertionError: assert {'temperature_2m': 3.4} is None`)
- `test_cache_from_thread`: `sqlite3.ProgrammingError: SQLite objects created in a thread can only be used \
in that same thread`
- The next model request failed with `overloaded_error` (HTTP 529) before a fix was tried

## Key Decisions
- **sqlite3 over JSON files**: one file and atomic updates; in hindsight more code and thread affinity

## Next Steps
1. Compare `stored` with the TTL in `Cache.get()`, using `time.time()` rather than `time.monotonic()`
2. Open the connection per call, or with `check_same_thread=False`

<modified-files>
tests/test_cache.py
weather/cache.py
</modified-files>"""


# ---- the story -------------------------------------------------------------------------------------------


def build() -> tuple[dict[str, Any], Session, dict[str, str]]:
    s = Session()
    s.files = {"README.md": README, "pyproject.toml": PYPROJECT, "weather/__init__.py": ""}
    header = {"type": "session", "version": 3, "id": uuid7(s.clock), "timestamp": iso(s.clock), "cwd": CWD}
    anchors: dict[str, str] = {}

    # Pi records the model and thinking level of a new session before the first prompt.
    s.add("model_change", {"provider": PROVIDER, "modelId": MODEL}, after=0)
    start = s.add("thinking_level_change", {"thinkingLevel": "medium"}, after=0)

    # First attempt, later re-edited: typer + httpx, which pip refuses to install.
    anchors["first_request"] = s.user(
        "Let's build a small weather CLI: `weather now Berlin` should print the current temperature and "
        "wind. "
        "Use typer for the CLI and httpx for requests. open-meteo.com needs no API key.",
        after=52,
    )
    s.tools(
        [("bash", {"command": "python3 -m pip install typer httpx"})],
        text="I'll install the two dependencies first.",
        thinking="typer + httpx, open-meteo has a geocoding endpoint and a forecast endpoint. Install first.",
    )
    s.reply(
        'pip refuses to install into the system Python (PEP 668, "externally managed environment"). '
        "Three ways forward:\n\n"
        "1. a virtualenv: `python3 -m venv .venv && .venv/bin/pip install typer httpx`\n"
        "2. `pipx` — but that is for applications, not for developing one\n"
        "3. no dependencies at all: `argparse` + `urllib.request` are plenty for two GET requests\n\n"
        "Which do you prefer?"
    )

    # The user goes back to the first message and asks again, stdlib only: the branch everything else is on.
    s.goto(start)
    anchors["reedited_request"] = s.user(
        "Let's build a small weather CLI in Python 3.11: `weather now Berlin` should print the current "
        "temperature and wind from open-meteo.com (geocoding API for the city, then the forecast API). "
        "Standard library only — argparse and urllib, no pip installs.",
        after=262,
    )
    s.tools(
        [("bash", {"command": "ls -la && git log --oneline -5"})],
        text="Let me look at the project first.",
        thinking="Stdlib only: urllib.request + json + argparse. Check what is already in the repo.",
    )
    s.tools([("read", {"path": "README.md"}), ("read", {"path": "pyproject.toml"})])
    s.tools(
        [("write", {"path": "weather/api.py", "content": API_PY})],
        text="I'll keep the HTTP code in `weather/api.py` and the argument parsing in `weather/cli.py`.",
    )
    s.tools([("write", {"path": "weather/cli.py", "content": CLI_PY})])
    s.tools(
        [
            (
                "edit",
                {
                    "path": "pyproject.toml",
                    "edits": [
                        {
                            "oldText": 'requires-python = ">=3.11"\n',
                            "newText": 'requires-python = ">=3.11"\n\n'
                            '[project.scripts]\nweather = "weather.cli:main"\n',
                        }
                    ],
                },
            )
        ]
    )
    s.tools([("bash", {"command": "python -m weather.cli now Berlin"})])
    working = s.reply(
        "It works:\n\n```\n$ python -m weather.cli now Berlin\nBerlin, DE: 3.4 °C, wind 14 km/h\n```\n\n"
        "- `weather/api.py`: `geocode()` and `current()` on top of a small `_get_json()` helper\n"
        "- `weather/cli.py`: `weather now CITY`; unknown cities print `error: …` and exit 1\n"
        "- `pyproject.toml`: a `weather` console script, so `pip install -e .` gives you the command",
        thinking="Geocoding returns latitude/longitude/country_code; the forecast's `current` block has "
        "temperature_2m and wind_speed_10m. Output verified against the live API.",
    )
    anchors["working_api"] = working
    s.add("label", {"targetId": working, "label": "working-api"}, after=214)

    # Abandoned branch: a sqlite cache, two failing tests, then the API is overloaded.
    thinking_high = s.add("thinking_level_change", {"thinkingLevel": "high"}, after=655)
    anchors["cache_request"] = s.user(
        "Nice. Now add a disk cache with a TTL so repeated calls don't hit the API every time. sqlite3 in "
        "~/.cache/weather-cli is fine.",
        after=71,
    )
    s.tools(
        [("write", {"path": "weather/cache.py", "content": SQLITE_CACHE_PY})],
        thinking="One sqlite file, a `responses` table keyed by rounded coordinates, store the insertion "
        "time and compare it with the TTL on read. Tests first for expiry and thread use.",
    )
    s.tools([("write", {"path": "tests/test_cache.py", "content": SQLITE_TEST_PY})])
    anchors["failing_pytest"] = s.tools([("bash", {"command": "python -m pytest -q tests/test_cache.py"})])
    anchors["abandoned_leaf"] = s.assistant(
        [],
        "error",
        error='529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},'
        '"request_id":"req_011CWk7fR3mXq2bVYh9sLpTd"}',
    )

    # Back to the cache request in /tree (its parent becomes the leaf), with a summary of the attempt.
    s.goto(thinking_high)
    anchors["branch_summary"] = s.add(
        "branch_summary",
        {
            "fromId": anchors["abandoned_leaf"],
            "summary": BRANCH_SUMMARY,
            "details": {"readFiles": [], "modifiedFiles": ["tests/test_cache.py", "weather/cache.py"]},
        },
        after=388,
    )
    del s.files["weather/cache.py"], s.files["tests/test_cache.py"]  # the user deleted them by hand
    s.user(
        "Let's park the cache — sqlite is overkill here, I deleted weather/cache.py and tests/test_cache.py. "
        "Retries first: open-meteo sometimes answers 429 or 503 when I run it in a loop. Exponential "
        "backoff, respect Retry-After, give up after a few attempts.",
        after=163,
    )
    s.tools(
        [("grep", {"pattern": "urlopen", "path": "weather"})],
        thinking="All requests go through one helper if I did this right; check where urlopen is called.",
    )
    s.tools([("read", {"path": "weather/api.py", "offset": 1, "limit": 30})])
    s.tools(
        [
            (
                "edit",
                {
                    "path": "weather/api.py",
                    "edits": [{"oldText": RETRY_IMPORTS[0], "newText": RETRY_IMPORTS[1]}],
                },
            ),
            ("edit", {"path": "weather/api.py", "edits": [{"oldText": RETRY_OLD, "newText": RETRY_NEW}]}),
        ],
        text="`_get_json()` is the only caller of `urlopen`, so the retry loop goes there.",
    )
    s.tools([("write", {"path": "tests/test_api.py", "content": TEST_API_PY})])
    s.tools([("bash", {"command": "python -m pytest -q"})])
    retries = s.reply(
        "Retries are in `_get_json()`:\n\n- up to 4 attempts, sleeping 0.5 s, 1 s, 2 s in between\n"
        "- retried: HTTP 429/500/502/503/504, `URLError`, timeouts; a numeric `Retry-After` wins over "
        "the backoff\n"
        "- anything else (e.g. 404) raises `WeatherError` at once\n\n"
        "`tests/test_api.py` fakes `urlopen` and `time.sleep`, so the 4 tests run in 0.06 s without network."
    )
    anchors["retries_done"] = retries
    s.add("label", {"targetId": working}, after=407)  # cleared, then set on the newer working state
    s.add("label", {"targetId": retries, "label": "working-api"}, after=6)
    named = s.add("session_info", {"name": "weather-cli: caching & retries"}, after=29)

    # A side question, left behind: the user goes back to it in /tree and runs a shell command instead.
    anchors["side_question"] = s.user("Quick question: would asyncio make the retries any faster?", after=366)
    s.reply(
        "Not for a single lookup. The attempts are sequential by design — each retry waits for the previous "
        "failure plus the backoff — so the time is spent sleeping, not waiting on sockets in parallel. "
        "asyncio (with `asyncio.to_thread` around `urlopen`, since urllib is blocking) would only pay "
        "off for "
        "`weather now Berlin Paris Rome`, fetching several cities at once.",
        thinking="Sequential retries, latency bound by sleeps. Concurrency helps only across cities.",
    )
    s.goto(named)
    anchors["git_status"] = s.bash_execution("git status", GIT_STATUS, after=104)

    anchors["image_message"] = s.user(
        "This is how it looks on my Raspberry Pi over serial — the degree sign turns into a box. "
        "And from cron "
        "(LANG=C) it crashed once with UnicodeEncodeError. Can you make the output robust?",
        after=1490,
        image=SCREENSHOT,
    )
    s.tools(
        [("read", {"path": "weather/cli.py"})],
        thinking="The screenshot shows '3.4 ▯C': the terminal cannot render U+00B0. Under LANG=C Python's "
        "stdout encoding is ascii in 3.11 unless UTF-8 mode is on, so print() raises. Fall back to "
        "'deg' when stdout's encoding cannot encode the sign.",
    )
    s.tools([("edit", {"path": "weather/cli.py", "edits": [{"oldText": DEGREE_OLD, "newText": DEGREE_NEW}]})])
    s.tools(
        [
            (
                "bash",
                {"command": "LANG=C python -m weather.cli now Berlin; python -m weather.cli now Berlin | cat"},
            )
        ]
    )
    s.reply(
        "`_degree()` checks whether stdout's encoding can encode `°` and falls back to ` deg`:\n\n```\n"
        "$ LANG=C python -m weather.cli now Berlin\nBerlin, DE: 3.1 degC, wind 13 km/h\n```\n\n"
        "With a UTF-8 locale nothing changes. On the Raspberry Pi the box means the *font* lacks the glyph "
        "while the encoding is fine, so there you still get `°`; `LANG=C` or `PYTHONIOENCODING=ascii` "
        "switches to `deg` if you prefer."
    )

    anchors["compaction"] = s.add(
        "compaction",
        {
            "summary": COMPACTION_SUMMARY,
            "firstKeptEntryId": anchors["image_message"],
            "tokensBefore": s.entries[-1].prompt_tokens + s.entries[-1].line["message"]["usage"]["output"],
            "details": {
                "readFiles": ["README.md"],
                "modifiedFiles": ["pyproject.toml", "tests/test_api.py", "weather/api.py", "weather/cli.py"],
            },
        },
        after=223,
    )

    anchors["markup_message"] = s.user(
        "Errors should stand out. In another project I did it with rich:\n\n"
        "```python\nfrom rich.console import Console\n\n"
        'Console(stderr=True).print("[bold red]error:[/bold red] city not found: [i]Atlantis[/i]")\n'
        "```\n\nWe're stdlib-only here, so do the same with plain ANSI codes — but only when stderr is a "
        "terminal and NO_COLOR isn't set.",
        after=341,
    )
    s.tools(
        [
            (
                "edit",
                {
                    "path": "weather/cli.py",
                    "edits": [
                        {
                            "oldText": "import argparse\nimport sys\n",
                            "newText": "import argparse\nimport os\nimport sys\n",
                        },
                        {"oldText": ERROR_OLD, "newText": ERROR_NEW},
                        {"oldText": RED_OLD, "newText": RED_NEW},
                    ],
                },
            )
        ],
        thinking="`\\033[1;31m` … `\\033[0m` around the prefix only; check isatty() on stderr, "
        "not stdout, since "
        "that is where the message goes. NO_COLOR: any non-empty value disables colour.",
    )
    s.tools([("bash", {"command": 'python -m weather.cli now Atlantis; echo "exit=$?"'})])
    s.reply(
        "Done: `error:` is bold red when stderr is a terminal and `NO_COLOR` is unset. The run above was "
        "captured through a pipe, so it correctly stayed plain; the exit code is still 1."
    )

    # The cache again, as JSON files this time.
    s.user(
        "Now back to the cache, properly this time: one JSON file per location under $XDG_CACHE_HOME/"
        "weather-cli (fallback ~/.cache/weather-cli), keyed by lat/lon rounded to 2 decimals, 10 minute TTL, "
        "and a --no-cache flag. No sqlite.",
        after=1080,
    )
    s.tools(
        [("write", {"path": "weather/cache.py", "content": JSON_CACHE_PY})],
        thinking="Age from the file's mtime, so no timestamp inside the JSON; write to a temp file and "
        "os.replace it so a crash never leaves half a file. A corrupt file is just a miss.",
    )
    s.tools(
        [
            (
                "edit",
                {
                    "path": "weather/cli.py",
                    "edits": [{"oldText": a, "newText": b} for a, b in CLI_CACHE_EDITS],
                },
            )
        ]
    )
    s.tools([("write", {"path": "tests/test_cache.py", "content": JSON_CACHE_TEST_PY})])
    s.tools(
        [
            (
                "bash",
                {
                    "command": "python -m pytest -q && "
                    "XDG_CACHE_HOME=/tmp/wc python -m weather.cli now Berlin "
                    "&& ls /tmp/wc/weather-cli"
                },
            )
        ]
    )
    anchors["cache_done"] = s.reply(
        "The cache is back, without sqlite:\n\n- `weather/cache.py`: `load()` / `store()`, one file per "
        "location (`52.52,13.41.json`), age taken from the file's mtime, written atomically via "
        "`os.replace`\n"
        "- a corrupt or unreadable file counts as a miss\n- `weather now CITY --no-cache` skips the lookup "
        "(the fresh answer is still stored)\n\nAll 8 tests pass."
    )
    s.add("label", {"targetId": anchors["cache_done"], "label": "before-refactor"}, after=512)
    before_refactor = s.leaf

    # A refactor request whose answer the user aborted (Esc), then re-edited into something smaller.
    anchors["refactor_request"] = s.user(
        "Let's refactor cli.py into a plugin system: every subcommand its own module in weather/commands/, "
        "discovered through entry points, so other packages can add commands.",
        after=133,
    )
    anchors["aborted"] = s.assistant(
        [
            {
                "type": "thinking",
                "thinking": "Entry points group `weather.commands`, importlib.metadata.entry_points"
                "(group=...), each module exposes register(subparsers). Move `now` first.",
            },
            {
                "type": "text",
                "text": "Good idea if the tool grows. The plan:\n\n1. `weather/commands/__init__.py` with "
                "a small `Command` protocol (`name`, `register(subparsers)`, `run(args)`)\n2. move "
                "`now` into `weather/commands/now.py`\n3. discover commands with `importlib.",
            },
        ],
        "aborted",
        aborted_after=6.3,
    )
    s.goto(before_refactor)
    anchors["units_request"] = s.user(
        "Scratch the plugin idea, too much for a 100-line tool. Just add --units metric|imperial "
        "(°F and mph) "
        "and we're done.",
        after=97,
    )
    s.tools(
        [("edit", {"path": "weather/api.py", "edits": [{"oldText": UNITS_API[0], "newText": UNITS_API[1]}]})],
        thinking="open-meteo takes temperature_unit=fahrenheit and wind_speed_unit=mph. The cache key must "
        "include the units or a metric answer would be served for --units imperial.",
    )
    s.tools(
        [
            (
                "edit",
                {"path": "weather/cli.py", "edits": [{"oldText": a, "newText": b} for a, b in UNITS_CLI]},
            ),
            (
                "edit",
                {"path": "weather/cache.py", "edits": [{"oldText": a, "newText": b} for a, b in UNITS_CACHE]},
            ),
        ]
    )
    s.tools([("bash", {"command": "python -m pytest -q && python -m weather.cli now Boston --units imperial"})])
    anchors["leaf"] = s.reply(
        "`--units imperial` asks open-meteo for °F and mph directly (no conversion on our side):\n\n```\n"
        "$ weather now Boston --units imperial\nBoston, US: 41.4 °F, wind 9 mph\n```\n\nImperial answers are "
        "cached under their own name (`42.36,-71.06,imperial.json`), so a metric answer is never served for "
        "`--units imperial`; metric keeps the old file name, so existing cache files stay valid. "
        "All 8 tests pass. Summary of the session's work: stdlib-only client with retries, readable "
        "output on "
        "any terminal, red errors on a TTY, a 10-minute JSON cache with `--no-cache`, and `--units`."
    )
    return header, s, anchors


def main(out: Path) -> None:
    header, session, anchors = build()
    lines = [header, *(e.line for e in session.entries)]
    out.write_text("".join(js_dumps(line) + "\n" for line in lines), encoding="utf-8")
    span = (session.entries[-1].ms - session.entries[0].ms) / 60000
    print(f"wrote {out}: {len(lines) - 1} entries over {span:.0f} minutes, leaf {anchors['leaf']}")
    width = max(map(len, anchors))
    for name, eid in anchors.items():
        print(f"  {name:<{width}}  {eid}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "assets" / "demo.jsonl")
