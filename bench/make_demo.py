"""Writes assets/demo.jsonl: a realistic, branched Pi v3 session for `pitree --demo` and the tests.

Story: building a small weather CLI with an agent. It has forks (one re-edits an earlier user message,
one abandoned branch ends in a failing test run and an API error), a compaction, a branch summary,
labels, a session name, model and thinking changes, tool calls with results and errors, a user `!cmd`,
an image, and text with Rich markup and a code fence. Deterministic: run it again, get the same bytes.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

START = datetime(2026, 11, 28, 9, 0, 0, tzinfo=UTC)
CWD = "/home/dev/projects/weather-cli"
PNG_1PX = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class Demo:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.t = START
        self.n = 0
        self.leaf: str | None = None

    def _id(self) -> str:
        self.n += 1
        return f"{(self.n * 2654435761) % 2**32:08x}"

    def _ts(self, seconds: int) -> tuple[str, int]:
        self.t += timedelta(seconds=seconds)
        return self.t.isoformat(timespec="milliseconds").replace("+00:00", "Z"), int(self.t.timestamp() * 1000)

    def add(self, entry: dict[str, Any], seconds: int = 20, parent: str | None | bool = True) -> str:
        eid = self._id()
        iso, ms = self._ts(seconds)
        pid = self.leaf if parent is True else parent
        full = {"type": entry.pop("type"), "id": eid, "parentId": pid, "timestamp": iso, **entry}
        if "message" in full:
            full["message"]["timestamp"] = ms
        self.lines.append(full)
        self.leaf = eid
        return eid

    def user(self, text: str, **kw: Any) -> str:
        return self.add({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}, **kw)

    def assistant(self, blocks: list[dict[str, Any]], stop: str = "toolUse", tokens: int = 3000, **extra: Any) -> str:
        usage = {
            "input": 40,
            "output": tokens // 10,
            "cacheRead": tokens,
            "cacheWrite": 600,
            "totalTokens": tokens + 640 + tokens // 10,
            "cost": {"input": 0.0001, "output": 0.0045, "cacheRead": 0.0009, "cacheWrite": 0.0022, "total": 0.0077},
        }
        msg = {
            "role": "assistant",
            "content": blocks,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": extra.pop("model", "claude-sonnet-4-5"),
            "usage": usage,
            "stopReason": stop,
            **extra,
        }
        return self.add({"type": "message", "message": msg}, seconds=35)

    def call(self, name: str, args: dict[str, Any], result: str, error: bool = False, text: str | None = None) -> str:
        call_id = f"toolu_{self.n:04d}{name}"
        blocks: list[dict[str, Any]] = []
        if text:
            blocks.append({"type": "text", "text": text})
        blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
        self.assistant(blocks)
        return self.add(
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name,
                    "content": [{"type": "text", "text": result}],
                    "isError": error,
                },
            },
            seconds=4,
        )

    def say(self, text: str, thinking: str | None = None, tokens: int = 4000) -> str:
        blocks: list[dict[str, Any]] = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking})
        blocks.append({"type": "text", "text": text})
        return self.assistant(blocks, stop="stop", tokens=tokens)


CLI_PY = '''import argparse
import json
import urllib.request

API = "https://api.open-meteo.com/v1/forecast"


def fetch(lat: float, lon: float) -> dict:
    url = f"{API}?latitude={lat}&longitude={lon}&current_weather=true"
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.load(resp)


def main() -> None:
    parser = argparse.ArgumentParser(prog="weather")
    parser.add_argument("lat", type=float)
    parser.add_argument("lon", type=float)
    args = parser.parse_args()
    print(fetch(args.lat, args.lon)["current_weather"])
'''

TRACEBACK = """============================= test session starts ==============================
collected 4 items

tests/test_cache.py ..F.                                                 [100%]

=================================== FAILURES ===================================
___________________________ test_cache_expires ___________________________

    def test_cache_expires(tmp_path, monkeypatch):
        cache = DiskCache(tmp_path, ttl=60)
        cache.put("k", {"t": 1})
        monkeypatch.setattr(time, "time", lambda: 10_000)
>       assert cache.get("k") is None
E       AssertionError: assert {'t': 1} is None

tests/test_cache.py:31: AssertionError
=========================== short test summary info ============================
FAILED tests/test_cache.py::test_cache_expires - AssertionError: assert {'t': 1} is None
========================= 1 failed, 3 passed in 0.12s =========================="""

COMPACTION_SUMMARY = """## Goal
Build `weather`, a small Python CLI that prints the current weather for a latitude/longitude, with an on-disk cache and retries.

## Constraints & Preferences
- Standard library only (no requests); Python 3.11
- Tests with pytest; no network in tests

## Progress
### Done
- [x] `weather/cli.py` with argparse and `fetch()` against open-meteo
- [x] `pyproject.toml` with a `weather` console script
- [x] First tests in `tests/test_cli.py` (fetch mocked)

### In Progress
- [ ] On-disk cache `weather/cache.py` (`DiskCache` with a TTL)

### Blocked
- (none)

## Key Decisions
- **Cache as JSON files keyed by rounded coordinates**: simple to inspect, no sqlite needed
- **Retries with exponential backoff in `fetch()`**: open-meteo rate-limits bursts

## Next Steps
1. Write `DiskCache.get/put` with expiry
2. Add `--no-cache` flag
3. Retries for HTTP 429/5xx

<read-files>
README.md
</read-files>

<modified-files>
pyproject.toml
tests/test_cli.py
weather/cli.py
</modified-files>"""


def build() -> list[dict[str, Any]]:
    d = Demo()
    d.add({"type": "session", "version": 3}, parent=None)
    d.lines.pop()  # the header is written separately below
    d.leaf = None
    d.n = 0
    root = d.user("Let's build a tiny weather CLI in Python: `weather LAT LON` prints the current weather. Stdlib only.")
    d.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"}, seconds=1)
    d.call("bash", {"command": "ls -la && cat README.md"}, "total 8\n-rw-r--r-- 1 dev dev 42 README.md\n# weather-cli\nA tiny CLI.",
           text="Let me look at the project first.")
    d.call("read", {"path": "README.md"}, "# weather-cli\nA tiny CLI.")
    d.call("write", {"path": "weather/cli.py", "content": CLI_PY}, "Successfully wrote 612 bytes to weather/cli.py")
    d.call("write", {"path": "pyproject.toml", "content": "[project]\nname = \"weather\"\n"}, "Successfully wrote 180 bytes")
    d.say("I created `weather/cli.py` with an argparse entry point and `fetch()` using `urllib`. "
          "Try `python -m weather.cli 52.52 13.41`.",
          thinking="The user wants stdlib only, so urllib.request. open-meteo needs no API key.")
    d.add({"type": "label", "targetId": d.leaf, "label": "first-working"}, seconds=5)
    fork = d.user("Add tests. Mock the network.")
    d.call("write", {"path": "tests/test_cli.py", "content": "def test_fetch(monkeypatch): ..."}, "Successfully wrote 830 bytes")
    d.call("bash", {"command": "python -m pytest -q"}, "..\n2 passed in 0.05s")
    tests_ok = d.say("Both tests pass. `fetch` is mocked with monkeypatch, so no network is used.")

    # Branch A (abandoned): a cache that fails its test, then an API error.
    d.user("Now add a disk cache with a TTL so we don't hit the API every time.")
    d.add({"type": "thinking_level_change", "thinkingLevel": "high"}, seconds=2)
    d.call("write", {"path": "weather/cache.py", "content": "class DiskCache: ..."}, "Successfully wrote 1204 bytes",
           text="I'll store JSON files keyed by rounded coordinates.")
    d.call("edit", {"path": "weather/cli.py", "oldText": "print(fetch(", "newText": "print(cached_fetch("},
           "Successfully replaced text in weather/cli.py")
    d.call("bash", {"command": "python -m pytest -q tests/test_cache.py"}, TRACEBACK, error=True)
    d.assistant([], stop="error", tokens=0, errorMessage="overloaded_error: Overloaded (HTTP 529)")
    abandoned = d.leaf

    # Branch B: back to the passing tests, with a branch summary of the cache attempt.
    d.add(
        {
            "type": "branch_summary",
            "fromId": abandoned,
            "summary": "The user explored a different conversation branch before returning here.\n"
            "Summary of that exploration:\n\n## Goal\nAdd an on-disk cache with a TTL.\n\n"
            "## Progress\n### Done\n- [x] Wrote `weather/cache.py` (`DiskCache`)\n\n### Blocked\n"
            "- `test_cache_expires` fails: `DiskCache.get` ignores the TTL (`assert {'t': 1} is None`)\n\n"
            "## Next Steps\n1. Compare stored time with `time.time()` in `get`\n\n"
            "<read-files>\nREADME.md\n</read-files>\n\n<modified-files>\nweather/cache.py\nweather/cli.py\n</modified-files>",
            "details": {"readFiles": ["README.md"], "modifiedFiles": ["weather/cache.py", "weather/cli.py"]},
        },
        seconds=60,
        parent=tests_ok,
    )
    d.user("Let's do retries first instead, the cache can wait.")
    d.call("edit", {"path": "weather/cli.py", "oldText": "def fetch(", "newText": "def fetch_once("},
           "Successfully replaced text in weather/cli.py", text="Adding exponential backoff for 429 and 5xx.")
    d.call("bash", {"command": "python -m pytest -q"}, "...\n3 passed in 0.07s")
    d.say("Retries are in: up to 4 attempts with 0.5 s, 1 s, 2 s backoff on HTTP 429/5xx.")
    d.add({"type": "label", "targetId": d.leaf, "label": "retries-done"}, seconds=5)
    d.add({"type": "session_info", "name": "weather-cli: caching & retries"}, seconds=3)
    compaction_kept = d.user("Here is a screenshot of the output, does the formatting look right? Also note that "
                             "[bold red]this is not markup[/bold red] and:\n```python\nprint('code fence')\n```")
    d.lines[-1]["message"]["content"].append({"type": "image", "data": PNG_1PX, "mimeType": "image/png"})
    d.say("The output is the raw dict. I'll format it as `12.3 °C, wind 10 km/h`.", tokens=46000)
    d.call("edit", {"path": "weather/cli.py", "oldText": "print(fetch(", "newText": "print(format_weather(fetch("},
           "Successfully replaced text in weather/cli.py")
    d.add(
        {
            "type": "compaction",
            "summary": COMPACTION_SUMMARY,
            "firstKeptEntryId": compaction_kept,
            "tokensBefore": 48213,
            "details": {"readFiles": ["README.md"], "modifiedFiles": ["pyproject.toml", "tests/test_cli.py", "weather/cli.py"]},
        },
        seconds=30,
    )
    d.add({"type": "message", "message": {"role": "bashExecution", "command": "git status --short",
           "output": " M weather/cli.py\n?? tests/", "exitCode": 0, "cancelled": False, "truncated": False}}, seconds=40)
    d.user("Now the cache, properly this time: respect the TTL.")
    d.call("write", {"path": "weather/cache.py", "content": "class DiskCache: ... # compares time.time()"},
           "Successfully wrote 1388 bytes")
    d.call("bash", {"command": "python -m pytest -q"}, "....\n4 passed in 0.09s")
    d.assistant([{"type": "text", "text": "Let me also add a `--no-cache` fl"}], stop="aborted", tokens=200)
    aborted = d.leaf

    # Branch C: the user re-edited the very first request (a fork at the root's parent would be a new
    # root; Pi re-edits by branching from the message's parent, here the model_change under the root).
    d.user("Actually, make it a Rust CLI instead?", parent=root)
    d.say("Sure — but a Python stdlib version is already half done. Rust would mean `reqwest` + `clap`; "
          "do you want me to start over?", tokens=2500)

    # Back on the main line: the user answers after the aborted reply (the last line is the leaf).
    d.user("Yes, add --no-cache, then we're done.", parent=aborted)
    d.call("edit", {"path": "weather/cli.py", "oldText": "args = parser.parse_args()",
                    "newText": "parser.add_argument('--no-cache', action='store_true')\n    args = parser.parse_args()"},
           "Successfully replaced text in weather/cli.py")
    d.call("bash", {"command": "python -m pytest -q && weather 52.52 13.41 --no-cache"},
           "....\n4 passed in 0.09s\n12.3 °C, wind 10 km/h")
    d.add({"type": "label", "targetId": fork, "label": "tests"}, seconds=2)
    d.say("Done: `--no-cache` skips the cache. All 4 tests pass and the CLI prints `12.3 °C, wind 10 km/h`.",
          tokens=52000)
    return d.lines


def main(out: Path) -> None:
    header = {"type": "session", "version": 3, "id": "019ac4d2-7e31-7b40-9a0c-5f3e2d1c0b9a",
              "timestamp": "2026-11-28T08:59:58.120Z", "cwd": CWD}
    lines = [header, *build()]
    out.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    print(f"wrote {out} ({len(lines) - 1} entries)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "assets" / "demo.jsonl")
