"""The one builder of session files for tests: entry constructors, a header per version, bytes and files.

Entries are plain dicts so a test can break them any way it likes. `to_bytes(entries)` is header + entries as
JSONL; `write_session(folder, entries, name=...)` writes them to folder/name and `write_session_file(path,
entries)` to a path of the test's choosing; both return the path. v1 entries have no id/parentId (pass
`eid=None` to the constructors, or build dicts by hand).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis.strategies import integers

SESSION_ID = "11111111-2222-3333-4444-555555555555"


def ts(i: int) -> str:
    """An ISO timestamp `i` seconds after 2026-01-01T00:00:00Z (so order follows i)."""
    return f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"


def header(version: Any = 3, **extra: Any) -> dict[str, Any]:
    h: dict[str, Any] = {"type": "session", "id": SESSION_ID, "timestamp": ts(0), "cwd": "/work/x"}
    if version is not None:
        h["version"] = version
    h.update(extra)
    return h


def _base(etype: str, eid: str | None, parent: str | None, t: int) -> dict[str, Any]:
    out: dict[str, Any] = {"type": etype}
    if eid is not None:
        out["id"] = eid
        out["parentId"] = parent
    out["timestamp"] = ts(t)
    return out


def user(eid: str | None, parent: str | None = None, text: str = "hi", t: int = 1, blocks: bool = True) -> dict:
    content: Any = [{"type": "text", "text": text}] if blocks else text
    return {**_base("message", eid, parent, t), "message": {"role": "user", "content": content}}


def assistant(
    eid: str | None,
    parent: str | None = None,
    text: str = "ok",
    t: int = 1,
    calls: tuple[tuple[str, str, dict[str, Any]], ...] = (),
    stop: str = "stop",
    thinking: str | None = None,
    provider: str = "anthropic",
    model: str = "claude",
    **extra: Any,
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking})
    if text:
        content.append({"type": "text", "text": text})
    for call_id, name, args in calls:
        content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
    msg = {
        "role": "assistant",
        "content": content,
        "provider": provider,
        "model": model,
        "usage": {
            "input": 1,
            "output": 2,
            "cacheRead": 3,
            "cacheWrite": 4,
            "totalTokens": 10,
            "cost": {"total": 0.5},
        },
        "stopReason": stop,
        **extra,
    }
    return {**_base("message", eid, parent, t), "message": msg}


def tool_result(
    eid: str | None,
    parent: str | None,
    call_id: str,
    name: str = "read",
    text: str = "x",
    t: int = 1,
    error: bool = False,
) -> dict[str, Any]:
    msg = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": error,
    }
    return {**_base("message", eid, parent, t), "message": msg}


def message(eid: str | None, parent: str | None, role: str, t: int = 1, **fields: Any) -> dict[str, Any]:
    return {**_base("message", eid, parent, t), "message": {"role": role, **fields}}


def entry(etype: str, eid: str | None, parent: str | None = None, t: int = 1, **fields: Any) -> dict[str, Any]:
    return {**_base(etype, eid, parent, t), **fields}


def chain(n: int, prefix: str = "e", start: str | None = None, t0: int = 1) -> list[dict[str, Any]]:
    """n alternating user/assistant entries, each the child of the one before (ids `<prefix><i:07d>`)."""
    out: list[dict[str, Any]] = []
    parent = start
    for i in range(n):
        eid = f"{prefix}{i:07d}"
        out.append(user(eid, parent, f"u{i}", t=t0 + i) if i % 2 == 0 else assistant(eid, parent, f"a{i}", t=t0 + i))
        parent = eid
    return out


def tool_turns(turns: int) -> list[dict[str, Any]]:
    """A user's prompt, then `turns` replies each making one tool call (`c<i>`) and that call's result."""
    out: list[dict[str, Any]] = [user("u0", None, "go", t=0)]
    for i in range(1, turns + 1):
        out.append(assistant(f"a{i}", out[-1]["id"], text=f"turn {i}", t=i, calls=((f"c{i}", "read", {}),)))
        out.append(tool_result(f"r{i}", f"a{i}", f"c{i}", text=f"out {i}", t=i))
    return out


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj)


def to_bytes(
    entries: list[dict[str, Any]],
    version: int | None = 3,
    head: dict[str, Any] | None = None,
    with_header: bool = True,
) -> bytes:
    lines = ([head if head is not None else header(version)] if with_header else []) + entries
    return b"".join(orjson.dumps(x) + b"\n" for x in lines)


def write_session_file(
    path: Path,
    entries: list[dict[str, Any]],
    version: int | None = 3,
    *,
    head: dict[str, Any] | None = None,
    with_header: bool = True,
    raw_tail: bytes = b"",
) -> Path:
    """Write header + entries (+ raw bytes) to `path` and return it."""
    path.write_bytes(to_bytes(entries, version, head, with_header) + raw_tail)
    return path


def write_session(
    folder: Path,
    entries: list[dict[str, Any]],
    version: int | None = 3,
    *,
    name: str = "session.jsonl",
    head: dict[str, Any] | None = None,
    with_header: bool = True,
    raw_tail: bytes = b"",
) -> Path:
    """Write header + entries (+ raw bytes) to folder/name and return the path."""
    return write_session_file(folder / name, entries, version, head=head, with_header=with_header, raw_tail=raw_tail)


def fork_session() -> list[dict[str, Any]]:
    """u1 → a1 → {u3 → a3 (older), u2 → a2 (newer, last in file: the leaf)}."""
    return [
        user("u1", None, "start", t=1),
        assistant("a1", "u1", "first", t=2),
        user("u3", "a1", "other way", t=3),
        assistant("a3", "u3", "other answer", t=4),
        user("u2", "a1", "main way", t=5),
        assistant("a2", "u2", "main answer", t=6),
    ]


PI1_KINDS = ["user", "assistant", "zero", "error", "compaction", "model", "system", "omit", "replace", "bash"]


def random_pi1_path(kinds: list[tuple[str, int]], data: Any) -> list[dict[str, Any]]:
    """Pi 1.x paths (`kinds`: (one of PI1_KINDS, a size) each; `data`: hypothesis's `st.data()`): system
    messages, edits that omit or replace earlier entries (or later ones: Pi maps every selected edit first),
    replies with no usable usage, compactions that keep any earlier entry or themselves."""
    entries: list[dict[str, Any]] = []
    for i, (kind, size) in enumerate(kinds):
        eid, parent = f"e{i:07d}", (f"e{i - 1:07d}" if i else None)
        other = f"e{data.draw(integers(0, len(kinds))):07d}"
        if kind == "user":
            entries.append(user(eid, parent, "u" * size, t=i))
        elif kind in ("assistant", "zero", "error"):
            made = assistant(eid, parent, "a" * size, t=i, stop="error" if kind == "error" else "stop")
            if kind == "zero":
                made["message"]["usage"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
            entries.append(made)
        elif kind == "model":
            entries.append(entry("model_change", eid, parent, t=i, provider="p", modelId="m"))
        elif kind == "system":
            sections = {"s": "x" * size} if size % 3 else {"s": None, "t": "y" * size}
            tools = [{"name": f"t{size % 4}", "description": "d" * size}] if size % 2 else []
            msg = {"role": "system", "content": "c" * (size % 5), "sections": sections, "timestamp": i}
            if tools:
                msg["toolsAdded"] = tools
            if size % 5 == 1:
                msg["toolsRemoved"] = [{"name": "t1"}]
            entries.append({"type": "message", "id": eid, "parentId": parent, "timestamp": ts(i), "message": msg})
        elif kind in ("omit", "replace"):
            replacement = None if kind == "omit" else {"content": "r" * size}
            entries.append(entry("context_edit", eid, parent, t=i, targetId=other, replacement=replacement))
        elif kind == "bash":
            entries.append(
                entry(
                    "message",
                    eid,
                    parent,
                    t=i,
                    message={
                        "role": "bashExecution",
                        "command": "ls",
                        "output": "o" * size,
                        "excludeFromContext": size % 2 == 0,
                    },
                )
            )
        else:
            kept = data.draw(integers(0, i)) if i else 0
            fields: dict[str, Any] = {"summary": "s" * size, "firstKeptEntryId": f"e{kept:07d}", "tokensBefore": 1}
            if size % 2:
                fields["systemMessage"] = {
                    "role": "system",
                    "content": "",
                    "sections": {"p": "P" * size},
                    "timestamp": i,
                }
            entries.append(entry("compaction", eid, parent, t=i, **fields))
    return entries
