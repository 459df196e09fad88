"""Tiny builders for session files and entries used across the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

HEADER = {
    "type": "session",
    "version": 3,
    "id": "11111111-2222-3333-4444-555555555555",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/work/x",
}


def ts(i: int) -> str:
    return f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000Z"


def user(eid: str, parent: str | None, text: str = "hi", t: int = 0) -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": ts(t),
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
    }


def assistant(
    eid: str,
    parent: str | None,
    text: str = "ok",
    t: int = 0,
    calls: list[tuple[str, str, dict]] = (),
    stop: str = "stop",
    **extra: Any,
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for call_id, name, args in calls:
        content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
    msg = {
        "role": "assistant",
        "content": content,
        "provider": "anthropic",
        "model": "claude",
        "usage": {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 10, "cost": {"total": 0.5}},
        "stopReason": stop,
        **extra,
    }
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts(t), "message": msg}


def tool_result(
    eid: str, parent: str | None, call_id: str, name: str = "read", text: str = "x", t: int = 0, error: bool = False
) -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": ts(t),
        "message": {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": error,
        },
    }


def entry(etype: str, eid: str, parent: str | None, t: int = 0, **fields: Any) -> dict[str, Any]:
    return {"type": etype, "id": eid, "parentId": parent, "timestamp": ts(t), **fields}


def chain(n: int, prefix: str = "e") -> list[dict[str, Any]]:
    """n alternating user/assistant entries in one line."""
    out, parent = [], None
    for i in range(n):
        eid = f"{prefix}{i:07d}"
        out.append(user(eid, parent, f"u{i}", t=i) if i % 2 == 0 else assistant(eid, parent, f"a{i}", t=i))
        parent = eid
    return out


def to_bytes(entries: list[dict[str, Any]], header: dict[str, Any] | None = HEADER) -> bytes:
    lines = ([header] if header is not None else []) + entries
    return b"".join(orjson.dumps(x) + b"\n" for x in lines)


def write_session(
    path: Path, entries: list[dict[str, Any]], header: dict[str, Any] | None = HEADER, raw_tail: bytes = b""
) -> Path:
    path.write_bytes(to_bytes(entries, header) + raw_tail)
    return path
