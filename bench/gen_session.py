"""Synthetic Pi session files (format version 3) of any size and shape, for benchmarks and scale tests.

Provides `generate(path, entries, ...) -> dict` and a CLI
(`python bench/gen_session.py OUT.jsonl --entries N [--shape S] [--branches B] [--compactions C] [--labels L]
[--seed S] [--avg-bytes A]`). Output is a pure function of the arguments, and it is streamed one line at a time:
entry ids are computed from the entry's index (a 32-bit bijection, so they are unique without a set), and only
the current root-to-leaf path and one byte per entry are kept in memory.

Shapes:
- `normal`: turns of user -> assistant (text/thinking/toolCall) -> toolResult ..., model and thinking-level changes,
  compactions, branches made from earlier entries (some with a branch_summary), labels and a session name.
- `chain`: like normal but never branches: one chain as deep as the file is long.
- `wide`: one root user message with every other entry as its child.
- `tiny`: minimal entries of about 150-200 bytes (for million-entry files); `avg_bytes` is ignored.
"""

from __future__ import annotations

import argparse
import base64
import functools
import math
import random
import sys
import time
from array import array
from pathlib import Path
from typing import Any, BinaryIO

import orjson

SHAPES = ("normal", "chain", "wide", "tiny")

# 2025-12-01T09:00:00.000Z; a fixed epoch keeps the output independent of the clock.
_BASE_MS = 1_764_579_600_000
_MASK = 0xFFFFFFFF

_K_OTHER, _K_USER, _K_ASSISTANT, _K_TOOL, _K_COMPACTION, _K_SUMMARY = range(6)

# (provider, model, api, $/Mtok input, output, cacheRead, cacheWrite)
_MODELS: tuple[tuple[str, str, str, float, float, float, float], ...] = (
    ("anthropic", "claude-sonnet-4-5", "anthropic-messages", 3.0, 15.0, 0.3, 3.75),
    ("anthropic", "claude-opus-4-5", "anthropic-messages", 5.0, 25.0, 0.5, 6.25),
    ("openai", "gpt-5.1-codex", "openai-responses", 1.25, 10.0, 0.125, 0.0),
    ("google", "gemini-2.5-pro", "google-generative-ai", 1.25, 10.0, 0.31, 0.0),
)
_THINKING = ("off", "minimal", "low", "medium", "high", "xhigh")
_TOOLS = ("read", "bash", "edit", "grep", "write")
_TOOL_WEIGHTS = (35, 25, 20, 10, 10)

_PROJECTS = ("acme-api", "pi-mono", "ledger", "weather-cli", "shopfront", "datapipe")
_DIRS = ("src", "src/core", "src/tools", "src/ui", "src/store", "tests", "tests/unit", "docs", "scripts")
_STEMS = (
    "session-manager",
    "agent-session",
    "index",
    "config",
    "utils",
    "tree-view",
    "parser",
    "render",
    "compaction",
    "messages",
    "bash-executor",
    "settings",
    "theme",
    "auth",
    "client",
    "server",
    "queue",
    "cache",
    "logger",
    "cli",
    "router",
    "schema",
    "migrate",
    "export-html",
    "footer",
    "editor",
)
_EXTS = (".ts", ".ts", ".ts", ".py", ".md", ".json")
_COMMANDS = (
    "npm run check",
    "npm test",
    "git status",
    "git diff --stat",
    "git log --oneline -n 20",
    "ls -la src",
    "rg -n 'SessionManager' src",
    "pytest -q tests/unit",
    "npx tsc --noEmit",
    "cat package.json",
    "node dist/cli.js --help",
    "git checkout -b refactor",
    "wc -l src/**/*.ts",
    "find src -name '*.ts' -newer package.json",
    "npm run build 2>&1 | tail -40",
    "make test",
)
_GREP_PATTERNS = (
    "getTree",
    "appendMessage",
    "TODO",
    "leafId",
    "export function",
    "class .*Selector",
    "parentId",
    "firstKeptEntryId",
    "import .* from",
    "thinkingLevel",
    "onKey",
    "renderLine",
)
_ERRORS = (
    '400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.41: `tool_use` ids were '
    'found without `tool_result` blocks immediately after"}}',
    '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    "terminated",
    "Connection error.",
    '429 {"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}',
)
_LABELS = ("checkpoint", "before-refactor", "good", "bug-repro", "api-v2", "try-this", "baseline", "wip")
_NAMES = (
    "Refactor session manager",
    "Port tree selector",
    "Fix compaction cut point",
    "Add HTML export",
    "Investigate flaky tests",
    "Theme cleanup",
)


class _Full(Exception):
    """Raised by `_Gen._emit` once the requested number of entries has been written."""


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _mix32(x: int) -> int:
    # Every step is invertible mod 2**32, so distinct indices give distinct ids.
    x = (x * 0x9E3779B1) & _MASK
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & _MASK
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & _MASK
    x ^= x >> 16
    return x


# ---------------------------------------------------------------------------------------------- text pools

_VERBS = ("refactor", "update", "move", "extract", "rename", "inline", "check", "fix", "test", "split", "wire up")
_NOUNS = (
    "session header",
    "tree builder",
    "label map",
    "leaf pointer",
    "compaction entry",
    "tool call",
    "render loop",
    "selector",
    "branch summary",
    "event handler",
    "settings file",
    "parser",
    "cache",
    "keybinding",
    "footer",
)
_CLAUSES = (
    "the tree stays consistent",
    "we avoid a second pass",
    "the tests keep passing",
    "nothing is rebuilt twice",
    "the leaf follows the last entry",
    "labels survive a reload",
    "we do not block the UI thread",
    "older files still load",
    "the output matches Pi exactly",
    "the diff stays small",
)
_IDENTS = ("entry", "node", "children", "leafId", "byId", "label", "path", "result", "tokens", "summary", "ctx")


def _build_prose(rng: random.Random, size: int) -> str:
    files = [f"{d}/{s}{e}" for d in _DIRS[:5] for s in _STEMS[:8] for e in _EXTS[:1]]
    out: list[str] = []
    total = 0
    while total < size:
        r = rng.random()
        if r < 0.1:
            part = f"## {rng.choice(_VERBS).title()} the {rng.choice(_NOUNS)}\n"
        elif r < 0.3:
            part = "".join(
                f"- **{rng.choice(_NOUNS).title()}**: {rng.choice(_VERBS)} it so that {rng.choice(_CLAUSES)}.\n"
                for _ in range(rng.randint(2, 5))
            )
        elif r < 0.38:
            part = (
                "```ts\n"
                + "".join(
                    f"\tconst {rng.choice(_IDENTS)} = this.{rng.choice(_IDENTS)}.get({rng.choice(_IDENTS)});\n"
                    for _ in range(rng.randint(2, 6))
                )
                + "```\n"
            )
        elif r < 0.42:
            part = "| Step | Status |\n|------|--------|\n" + "".join(
                f"| {rng.choice(_VERBS)} {rng.choice(_NOUNS)} | {rng.choice(('✅', '⏳', '❌'))} |\n"
                for _ in range(rng.randint(2, 4))
            )
        else:
            sentences = []
            for _ in range(rng.randint(2, 6)):
                s = rng.random()
                if s < 0.35:
                    sentences.append(
                        f"I'll {rng.choice(_VERBS)} the {rng.choice(_NOUNS)} in `{rng.choice(files)}` "
                        f"so that {rng.choice(_CLAUSES)}."
                    )
                elif s < 0.65:
                    sentences.append(
                        f"The {rng.choice(_NOUNS)} → {rng.choice(_NOUNS)} step should {rng.choice(_VERBS)} "
                        f"`{rng.choice(_IDENTS)}` first."
                    )
                elif s < 0.95:
                    sentences.append(
                        f"Let me {rng.choice(_VERBS)} the {rng.choice(_NOUNS)} and make sure {rng.choice(_CLAUSES)}."
                    )
                else:
                    sentences.append(f'Note: the café-style "{rng.choice(_NOUNS)}" wording is intentional.')
            part = " ".join(sentences) + "\n"
        out.append(part + "\n")
        total += len(part) + 1
    return "".join(out)


def _build_code(rng: random.Random, size: int) -> str:
    out: list[str] = []
    total = 0
    while total < size:
        name = rng.choice(_IDENTS) + rng.choice(("", "Map", "List", "Entry", "Node")) + str(rng.randint(0, 99))
        r = rng.random()
        if r < 0.1:
            block = [f'import {{ {rng.choice(_IDENTS)}, {name} }} from "./{rng.choice(_STEMS)}.js";']
        elif r < 0.2:
            block = [f"// {rng.choice(_VERBS).title()} the {rng.choice(_NOUNS)} so that {rng.choice(_CLAUSES)}."]
        else:
            block = [f"export function {name}({rng.choice(_IDENTS)}: string, opts?: Options): Result {{"]
            for _ in range(rng.randint(2, 12)):
                a, b, c = rng.choice(_IDENTS), rng.choice(_IDENTS), rng.choice(_IDENTS)
                s = rng.random()
                if s < 0.3:
                    block.append(f"\tconst {a} = {b}.get({c}) ?? null;")
                elif s < 0.5:
                    block.append(f"\tif (!{a}) throw new Error(`missing {b}: ${{{c}}}`);")
                elif s < 0.7:
                    block.append(f"\tfor (const {a} of {b}.values()) {c}.push({a});")
                else:
                    block.append(f'\t{a}.{b} = "{rng.choice(_NOUNS)}";')
            block.append(f"\treturn {{ {rng.choice(_IDENTS)}, ok: true }};")
            block.append("}")
        text = "\n".join(block) + "\n\n"
        out.append(text)
        total += len(text)
    return "".join(out)


@functools.cache
def _pools() -> tuple[str, str]:
    # Fixed seed: the pools are shared scenery, the session seed picks slices of them.
    rng = random.Random(0x5EED)
    return _build_prose(rng, 300_000), _build_code(rng, 300_000)


# ---------------------------------------------------------------------------------------------- generator


class _Gen:
    """Writes one session; all state for the tree is the current path plus one kind byte per entry."""

    def __init__(
        self,
        fh: BinaryIO,
        n: int,
        shape: str,
        branches: int,
        compactions: int,
        labels: int,
        seed: int,
        avg_bytes: int,
    ) -> None:
        self.fh = fh
        self.n = n
        self.shape = shape
        self.avg = max(100, avg_bytes)
        self.rng = random.Random(seed)
        self.key = self.rng.getrandbits(32)
        self.clock = _BASE_MS + self.rng.randrange(0, 90 * 86_400_000)
        self.count = 0
        self.bytes = 0
        self.path = array("q")
        self.kinds = array("B")
        self.forks: set[int] = set()
        self.stats = {"branches": 0, "compactions": 0, "labels": 0, "branch_summaries": 0}
        self.todo_branch = _schedule(branches, n)
        self.todo_compact = _schedule(compactions, n)
        self.todo_label = _schedule(labels, n)
        self.named = False
        self.renamed = n < 2000
        self.labeled: list[int] = []
        self.model = self.rng.choice(_MODELS[:2])
        self.thinking = self.rng.choice(("off", "medium", "high"))
        self.ctx = 4000
        self.cached = 0
        self.reads: set[str] = set()
        self.mods: set[str] = set()
        project = self.rng.choice(_PROJECTS)
        self.cwd = f"/home/dev/work/{project}"
        self.files = [
            f"{self.cwd}/{d}/{s}{e}"
            for d in _DIRS
            for s in self.rng.sample(_STEMS, 6)
            for e in (self.rng.choice(_EXTS),)
        ]

    # -------------------------------------------------------------------------------- primitives

    def _id(self, index: int) -> str:
        return f"{_mix32(index ^ self.key):08x}"

    def _tick(self, lo: int, hi: int) -> int:
        # At least 1 ms per entry keeps file-order timestamps strictly increasing.
        self.clock += max(1, self.rng.randint(lo, hi))
        return self.clock

    def _emit(self, type_: str, fields: dict[str, Any], kind: int = _K_OTHER) -> int:
        if self.count >= self.n:
            raise _Full
        index = self.count
        parent = self.path[-1] if self.path else None
        entry: dict[str, Any] = {
            "type": type_,
            "id": self._id(index),
            "parentId": None if parent is None else self._id(parent),
            "timestamp": _iso(self.clock),
        }
        entry.update(fields)
        line = orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE)
        self.fh.write(line)
        self.bytes += len(line)
        self.count += 1
        self.path.append(index)
        self.kinds.append(kind)
        self.ctx += len(line) // 4
        return index

    def _scale(self) -> float:
        # Proportional control on the byte debt keeps the file near entries * avg_bytes whatever the mix.
        debt = self.count * self.avg - self.bytes
        return min(8.0, max(0.05, 1.0 + debt / (self.avg * 40)))

    def _len(self, frac: float, cap: int, lo: int = 1) -> int:
        mean = self.avg * frac * self._scale()
        draw = mean * math.exp(self.rng.gauss(0.0, 1.0) - 0.5)
        return int(min(cap, max(lo, draw)))

    def _slice(self, pool: str, n: int) -> str:
        if n <= 0:
            return ""
        if n >= len(pool) // 2:
            pool = pool * (n // len(pool) + 2)
        off = self.rng.randrange(0, len(pool) - n)
        nl = pool.find("\n", off, off + 120)
        if nl != -1 and nl + 1 + n <= len(pool):
            off = nl + 1
        return pool[off : off + n]

    def prose(self, n: int) -> str:
        # Start after a sentence or line break and end on a word boundary, so slices read like text.
        text = self._slice(_pools()[0], n + 80)
        head = max(text.find(". ", 0, 80) + 2, text.find("\n", 0, 80) + 1, 0)
        text = text[head : head + n]
        if len(text) > 40:
            cut = text.rfind(" ", len(text) - 40)
            if cut > 0:
                text = text[:cut]
        return text.strip() or "ok"

    def code(self, n: int) -> str:
        return self._slice(_pools()[1], n)

    def _tool_call_id(self) -> str:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        if self.model[0] == "anthropic":
            return "toolu_01" + "".join(self.rng.choices(alphabet, k=22))
        return "call_" + "".join(self.rng.choices(alphabet, k=24))

    def _usage(self, output: int, zero: bool = False) -> dict[str, Any]:
        if zero:
            inp = out = cr = cw = 0
        elif self.model[0] == "anthropic":
            inp, out, cr, cw = self.rng.randint(1, 12), output, self.cached, max(0, self.ctx - self.cached)
        else:
            inp, out, cr, cw = max(1, self.ctx - self.cached), output, self.cached, 0
        self.cached = self.ctx
        _, _, _, p_in, p_out, p_cr, p_cw = self.model
        # `or 0` writes a zero cost as 0, like JSON.stringify, not 0.0.
        cost: dict[str, float] = {
            "input": inp * p_in / 1e6 or 0,
            "output": out * p_out / 1e6 or 0,
            "cacheRead": cr * p_cr / 1e6 or 0,
            "cacheWrite": cw * p_cw / 1e6 or 0,
        }
        cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"] or 0
        return {
            "input": inp,
            "output": out,
            "cacheRead": cr,
            "cacheWrite": cw,
            "totalTokens": inp + out + cr + cw,
            "cost": cost,
        }

    def _assistant(self, content: list[dict[str, Any]], stop: str, error: str | None = None) -> int:
        started = self.clock
        self._tick(800, 40_000)
        chars = sum(len(orjson.dumps(c)) for c in content)
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": self.model[2],
            "provider": self.model[0],
            "model": self.model[1],
            "usage": self._usage(chars // 4 + self.rng.randint(5, 60), zero=stop == "error"),
            "stopReason": stop,
            "timestamp": started + 2,
        }
        if error is not None:
            msg["errorMessage"] = error
        return self._emit("message", {"message": msg}, _K_ASSISTANT)

    # -------------------------------------------------------------------------------- normal turns

    def user_message(self) -> None:
        self._tick(5_000, 600_000)
        text = self.prose(self._len(0.25, 4000, 8))
        if self.rng.random() < 0.2:
            text = f"read {self.rng.choice(self.files)} and {text[:1].lower()}{text[1:]}"
        content: Any
        if self.rng.random() < 0.15:
            content = text
        else:
            content = [{"type": "text", "text": text}]
            if self.rng.random() < 0.004:
                data = b"\x89PNG\r\n\x1a\n" + self.rng.randbytes(self.rng.randint(600, 3000))
                content.append({"type": "image", "data": base64.b64encode(data).decode(), "mimeType": "image/png"})
        self._emit("message", {"message": {"role": "user", "content": content, "timestamp": self.clock - 12}}, _K_USER)

    def _thinking_block(self, frac: float) -> dict[str, Any]:
        sig = base64.b64encode(self.rng.randbytes(self.rng.randint(60, 400))).decode()
        return {"type": "thinking", "thinking": self.prose(self._len(frac, 8000, 20)), "thinkingSignature": sig}

    def _tool_args(self, name: str) -> dict[str, Any]:
        path = self.rng.choice(self.files)
        if name == "read":
            self.reads.add(path)
            args: dict[str, Any] = {"path": path}
            if self.rng.random() < 0.3:
                args["offset"] = self.rng.randint(1, 800)
                args["limit"] = self.rng.choice((50, 100, 200, 400))
            return args
        if name == "write":
            self.mods.add(path)
            return {"path": path, "content": self.code(self._len(1.0, 30_000, 40))}
        if name == "edit":
            self.mods.add(path)
            edits = [
                {"oldText": self.code(self._len(0.1, 3000, 10)), "newText": self.code(self._len(0.12, 3000, 10))}
                for _ in range(self.rng.choice((1, 1, 1, 2)))
            ]
            return {"path": path, "edits": edits}
        if name == "bash":
            args = {"command": self.rng.choice(_COMMANDS)}
            if self.rng.random() < 0.1:
                args["timeout"] = self.rng.choice((60, 120, 300))
            return args
        args = {"pattern": self.rng.choice(_GREP_PATTERNS)}
        if self.rng.random() < 0.7:
            args["path"] = self.rng.choice(_DIRS)
        if self.rng.random() < 0.4:
            args["glob"] = self.rng.choice(("*.ts", "**/*.spec.ts", "*.py", "*.md"))
        if self.rng.random() < 0.2:
            args["ignoreCase"] = True
        return args

    def _tool_result(self, call: dict[str, Any]) -> None:
        name: str = call["name"]
        args: dict[str, Any] = call["arguments"]
        self._tick(3, 4_000 if name == "bash" else 60)
        details: Any = None
        error = False
        r = self.rng.random()
        if name == "read":
            if r < 0.03:
                error, text = True, f"ENOENT: no such file or directory, access '{args['path']}'"
            else:
                text = self.code(self._len(2.2, 50_000, 40))
                if r < 0.06:
                    lines = text.count("\n") + 1
                    details = {
                        "truncation": {
                            "content": text,
                            "truncated": True,
                            "truncatedBy": "lines",
                            "totalLines": lines * 3,
                            "totalBytes": len(text) * 3,
                            "outputLines": lines,
                            "outputBytes": len(text),
                            "lastLinePartial": False,
                            "firstLineExceedsLimit": False,
                            "maxLines": 2000,
                            "maxBytes": 51_200,
                        }
                    }
        elif name == "write":
            text = f"Successfully wrote {len(args['content'])} bytes to {args['path']}"
        elif name == "edit":
            if r < 0.08:
                error, details = True, {}
                text = (
                    f"Could not find the exact text in {args['path']}. The old text must match exactly "
                    "including all whitespace and newlines."
                )
            else:
                n_edits = len(args["edits"])
                text = f"Successfully replaced {n_edits} block(s) in {args['path']}."
                first = self.rng.randint(1, 900)
                diff: list[str] = ["     ..."]
                for e in args["edits"]:
                    diff += [f"-{first + i:4d} {ln}" for i, ln in enumerate(e["oldText"].splitlines()[:40])]
                    diff += [f"+{first + i:4d} {ln}" for i, ln in enumerate(e["newText"].splitlines()[:40])]
                diff.append("     ...")
                details = {"diff": "\n".join(diff), "firstChangedLine": first}
        elif name == "bash":
            text = (
                self.code(self._len(0.6, 30_000, 0))
                if self.rng.random() < 0.5
                else self.prose(self._len(0.4, 20_000, 1))
            )
            if r < 0.1:
                error = True
                text += "\n\nCommand exited with code 1"
        else:
            if r < 0.1:
                text = "No matches found"
            else:
                rows = []
                for _ in range(max(1, self._len(0.02, 100, 1))):
                    line = self.code(self.rng.randint(20, 100)).split("\n", 1)[0]
                    rows.append(
                        f"{self.rng.choice(self.files)[len(self.cwd) + 1 :]}:{self.rng.randint(1, 900)}: {line}"
                    )
                text = "\n".join(rows)
        msg: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": name,
            "content": [{"type": "text", "text": text}],
        }
        if details is not None:
            msg["details"] = details
        msg["isError"] = error
        msg["timestamp"] = self.clock - 1
        self._emit("message", {"message": msg}, _K_TOOL)

    def turn(self) -> None:
        self.user_message()
        thinking = self.thinking != "off"
        for _ in range(40):
            r = self.rng.random()
            if r < 0.012:
                partial = [self._thinking_block(0.05)] if thinking else []
                self._assistant(partial, "aborted", "Request was aborted.")
                return
            if r < 0.024:
                self._assistant([], "error", self.rng.choice(_ERRORS))
                return
            content: list[dict[str, Any]] = []
            if thinking and self.rng.random() < 0.6:
                content.append(self._thinking_block(0.12))
            if self.rng.random() < 0.82:
                if self.rng.random() < 0.4:
                    content.append({"type": "text", "text": self.prose(self._len(0.08, 600, 10))})
                calls = []
                for _ in range(self.rng.choice((1, 1, 1, 1, 1, 2, 2, 3))):
                    name = self.rng.choices(_TOOLS, _TOOL_WEIGHTS)[0]
                    calls.append(
                        {
                            "type": "toolCall",
                            "id": self._tool_call_id(),
                            "name": name,
                            "arguments": self._tool_args(name),
                        }
                    )
                self._assistant(content + calls, "toolUse")
                for call in calls:
                    self._tool_result(call)
                continue
            content.append({"type": "text", "text": self.prose(self._len(0.7, 20_000, 20))})
            self._assistant(content, "length" if self.rng.random() < 0.01 else "stop")
            return

    # -------------------------------------------------------------------------------- events

    def _structured_summary(self, n: int, read: list[str], modified: list[str]) -> str:
        parts = [
            "## Goal\n" + self.prose(max(40, n // 8)),
            "## Constraints & Preferences\n- " + self.prose(max(30, n // 10)),
            "## Progress\n### Done\n- [x] "
            + self.prose(max(30, n // 6))
            + "\n\n### In Progress\n- [ ] "
            + self.prose(max(20, n // 10))
            + "\n\n### Blocked\n- (none)",
            "## Key Decisions\n- **" + self.rng.choice(_NOUNS).title() + "**: " + self.prose(max(30, n // 8)),
            "## Next Steps\n1. " + self.prose(max(20, n // 10)),
            "## Critical Context\n" + self.prose(max(20, n // 8)),
        ]
        text = "\n\n".join(parts)
        sections = []
        if read:
            sections.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
        if modified:
            sections.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
        if sections:
            text += "\n\n" + "\n\n".join(sections)
        return text

    def _file_lists(self) -> tuple[list[str], list[str]]:
        return sorted(self.reads - self.mods), sorted(self.mods)

    def compaction(self) -> bool:
        # Cut at a user message a few turns back, never before the previous compaction on this path.
        users: list[int] = []
        for pos in range(len(self.path) - 1, max(-1, len(self.path) - 600), -1):
            kind = self.kinds[self.path[pos]]
            if kind == _K_COMPACTION:
                break
            if kind == _K_USER:
                users.append(self.path[pos])
                if len(users) >= 4:
                    break
        if not self.path:
            return False
        kept = self.rng.choice(users[1:] or users) if users else self.path[-1]
        read, modified = self._file_lists()
        self._tick(20_000, 90_000)
        tiny = self.shape == "tiny"
        size = 60 if tiny else self._len(3.0, 20_000, 300)
        summary = self._structured_summary(size, [] if tiny else read, [] if tiny else modified)
        self._emit(
            "compaction",
            {
                "summary": summary,
                "firstKeptEntryId": self._id(kept),
                "tokensBefore": self.rng.randint(120_000, 195_000),
                "details": {"readFiles": read, "modifiedFiles": modified},
            },
            _K_COMPACTION,
        )
        self.ctx = len(summary) // 4 + 2000
        self.cached = 0
        self.reads.clear()
        self.mods.clear()
        self.stats["compactions"] += 1
        return True

    def branch(self) -> bool:
        # Like Pi's /tree on a user message: the new leaf is that message's parent, which becomes a fork.
        candidates = []
        top = len(self.path) - 2
        for pos in range(top, max(0, top - 400), -1):
            if self.kinds[self.path[pos]] == _K_USER and self.path[pos - 1] not in self.forks:
                candidates.append(pos)
        if not candidates:
            return False
        pos = candidates[min(len(candidates) - 1, int(self.rng.expovariate(0.5)))]
        old_leaf = self.path[-1]
        fork = self.path[pos - 1]
        self.ctx = max(4000, self.ctx * pos // len(self.path))
        self.cached = 0
        del self.path[pos:]
        self.forks.add(fork)
        self.stats["branches"] += 1
        if self.rng.random() < 0.6:
            read, modified = self._file_lists()
            self._tick(5_000, 60_000)
            tiny = self.shape == "tiny"
            n = 40 if tiny else self._len(1.2, 8000, 200)
            summary = (
                "The user explored a different conversation branch before returning here.\n"
                "Summary of that exploration:\n\n" + self._structured_summary(n, read, modified)
            )
            self._emit(
                "branch_summary",
                {
                    "fromId": self._id(old_leaf),
                    "summary": summary,
                    "details": {"readFiles": read, "modifiedFiles": modified},
                },
                _K_SUMMARY,
            )
            self.stats["branch_summaries"] += 1
        return True

    def label(self) -> None:
        self._tick(1_000, 30_000)
        if self.labeled and self.rng.random() < 0.1:
            self._emit("label", {"targetId": self._id(self.labeled.pop(self.rng.randrange(len(self.labeled))))})
        else:
            back = min(len(self.path) - 1, self.rng.randint(0, 200))
            target = self.path[len(self.path) - 1 - back]
            self.labeled.append(target)
            name = f"{self.rng.choice(_LABELS)}-{self.stats['labels'] + 1}"
            self._emit("label", {"targetId": self._id(target), "label": name})
        self.stats["labels"] += 1

    def boundary(self) -> None:
        """Between turns: scheduled branches, compactions and labels, then the occasional setting change."""
        if self.todo_branch and self.count >= self.todo_branch[-1] and self.branch():
            self.todo_branch.pop()
        if self.todo_compact and self.count >= self.todo_compact[-1] and self.compaction():
            self.todo_compact.pop()
        if self.todo_label and self.count >= self.todo_label[-1] and self.path:
            self.label()
            self.todo_label.pop()
        if not self.named or (not self.renamed and self.count >= self.n // 2):
            # A name after the first turn, and a rename halfway through larger files.
            if self.named:
                self.renamed = True
            self.named = True
            self._tick(500, 5_000)
            self._emit("session_info", {"name": self.rng.choice(_NAMES)})
        r = self.rng.random()
        if r < 0.015:
            self.model = self.rng.choice(_MODELS)
            self._tick(1_000, 30_000)
            self._emit("model_change", {"provider": self.model[0], "modelId": self.model[1]})
        elif r < 0.035:
            self.thinking = self.rng.choice(_THINKING)
            self._tick(1_000, 30_000)
            self._emit("thinking_level_change", {"thinkingLevel": self.thinking})
        elif r < 0.045 and self.shape != "tiny":
            self._tick(5_000, 120_000)
            command = self.rng.choice(_COMMANDS)
            code = self.rng.random() < 0.2
            output = self.code(self._len(0.5, 8000, 0))
            self._emit(
                "message",
                {
                    "message": {
                        "role": "bashExecution",
                        "command": command,
                        "output": output,
                        "exitCode": 1 if code else 0,
                        "cancelled": False,
                        "truncated": False,
                        "timestamp": self.clock,
                    }
                },
            )

    # -------------------------------------------------------------------------------- shapes

    def tiny_turn(self) -> None:
        self._tick(1_000, 60_000)
        words = " ".join(self.rng.choices(_VERBS + _IDENTS, k=self.rng.randint(1, 2)))
        self._emit("message", {"message": {"role": "user", "content": words, "timestamp": self.clock - 3}}, _K_USER)
        r = self.rng.random()
        if r < 0.12:
            # Small token counts keep the one big field, usage, short.
            self.ctx = self.cached = 0
            self._assistant([{"type": "text", "text": self.rng.choice(("Done.", "OK.", "Fixed.", "Yes."))}], "stop")
        elif r < 0.55:
            self._tick(10, 2_000)
            self._emit("custom_message", {"customType": "note", "content": self.rng.choice(_IDENTS), "display": True})

    def write_header(self) -> int:
        ms = self.clock
        # uuid v7 like Pi's: 48-bit ms time, version 7, variant 10, random rest.
        rand = self.rng.getrandbits(74)
        variant = 0x8 | (rand >> 60 & 0x3)
        hexs = f"{ms:012x}7{rand >> 62:03x}{variant:x}{rand >> 48 & 0xFFF:03x}{rand & (2**48 - 1):012x}"
        uuid = f"{hexs[:8]}-{hexs[8:12]}-{hexs[12:16]}-{hexs[16:20]}-{hexs[20:]}"
        header = {"type": "session", "version": 3, "id": uuid, "timestamp": _iso(ms), "cwd": self.cwd}
        line = orjson.dumps(header, option=orjson.OPT_APPEND_NEWLINE)
        self.fh.write(line)
        return len(line)

    def run(self) -> None:
        try:
            if self.shape == "wide":
                self.user_message()
                while True:
                    del self.path[1:]
                    if self.rng.random() < 0.5:
                        self.user_message()
                    else:
                        self._assistant([{"type": "text", "text": self.prose(self._len(0.9, 20_000, 10))}], "stop")
                    if self.count == 2:
                        self.forks.add(self.path[0])
                        self.stats["branches"] = 1
            step = self.tiny_turn if self.shape == "tiny" else self.turn
            while True:
                if self.count:
                    self.boundary()
                step()
        except _Full:
            pass


def _schedule(k: int, n: int) -> list[int]:
    """Entry counts at which the k events fall, spread over the file, latest first (popped from the end)."""
    return sorted((int(n * (0.03 + 0.9 * (j + 0.5) / k)) for j in range(k)), reverse=True)


def _auto(shape: str, n: int, value: int | None, per: int) -> int:
    if value is not None:
        return value
    if shape == "wide" or n < 50:
        return 0
    return max(1, n // per)


def generate(
    path: str | Path,
    entries: int,
    *,
    shape: str = "normal",
    branches: int | None = None,
    compactions: int | None = None,
    labels: int | None = None,
    seed: int = 0,
    avg_bytes: int = 1000,
) -> dict[str, Any]:
    """Write a synthetic v3 session with `entries` entries (plus the header) to `path` and return its stats.

    `None` counts scale with the file: a branch per 1000 entries, a compaction per 5000, a label per 2000.
    `chain` and `wide` never branch beyond their shape. The stats hold the counts actually written, which can
    fall short of a request when the file is too small to fit them. `avg_bytes` is met within a few percent
    from about 500 to 15000; below that the entries' fixed fields alone are bigger, above it the per-field
    caps (a read result stops at 50 KB, as in Pi) hold it back. A branch_summary's `fromId` is the abandoned
    leaf (what Pi's docs say and pitree writes), not the target Pi itself writes.
    """
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; expected one of {', '.join(SHAPES)}")
    if entries < 1:
        raise ValueError("entries must be at least 1")
    b = 0 if shape in ("chain", "wide") else _auto(shape, entries, branches, 1000)
    c = 0 if shape == "wide" else _auto(shape, entries, compactions, 5000)
    lab = 0 if shape == "wide" else _auto(shape, entries, labels, 2000)
    with open(path, "wb", buffering=1 << 20) as fh:
        gen = _Gen(fh, entries, shape, b, c, lab, seed, avg_bytes)
        header_bytes = gen.write_header()
        gen.run()
    return {
        "entries": gen.count,
        "bytes": header_bytes + gen.bytes,
        "leaf": gen._id(gen.count - 1),
        "shape": shape,
        "seed": seed,
        **gen.stats,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate a synthetic Pi session file (version 3).")
    parser.add_argument("out", help="output .jsonl path")
    parser.add_argument("--entries", type=int, required=True, help="number of entries after the header")
    parser.add_argument("--shape", choices=SHAPES, default="normal")
    parser.add_argument("--branches", type=int, default=None, help="fork points (default: entries/1000)")
    parser.add_argument("--compactions", type=int, default=None, help="compactions (default: entries/5000)")
    parser.add_argument("--labels", type=int, default=None, help="label entries (default: entries/2000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--avg-bytes", type=int, default=1000, help="target mean line size (not for tiny)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    stats = generate(
        args.out,
        args.entries,
        shape=args.shape,
        branches=args.branches,
        compactions=args.compactions,
        labels=args.labels,
        seed=args.seed,
        avg_bytes=args.avg_bytes,
    )
    stats["seconds"] = round(time.perf_counter() - started, 3)
    sys.stdout.write(orjson.dumps(stats).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
