"""Builder for oh-my-pi (18.x) session files, written to the dialect as SPEC-pi1.md section B states it.

oh-my-pi needs Bun and packages the registry here does not all have, so its files are made here: the title slot
(line 1, exactly 256 bytes with its newline, rewritten in place by `rewrite_slot`), a header with omp's extras,
omp's entry types, blobs (`<agent>/blobs/<sha256>` plus the `<hash>.<ext>` link beside it) and subagent
transcripts (`<session minus .jsonl>/<agentId>.jsonl`).
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

SLOT_BYTES = 256
SESSION_ID = "019a0000-0000-7000-8000-00000000abcd"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def ts(i: int) -> str:
    return f"2026-03-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"


def title_slot(title: str, source: str | None = "auto", updated: str = "2026-03-01T00:00:09.000Z") -> bytes:
    """omp's `serializeTitleSlot`: the slot object padded with spaces to 256 UTF-8 bytes including `\\n`."""

    def line_for(text: str) -> dict[str, Any]:
        slot: dict[str, Any] = {"type": "title", "v": 1, "title": text}
        if source:
            slot["source"] = source
        slot["updatedAt"] = updated
        slot["pad"] = ""
        return slot

    while len(orjson.dumps(line_for(title))) + 1 > SLOT_BYTES:  # omp keeps the longest prefix that fits
        title = title[:-1]
    slot = line_for(title)
    bare = len(orjson.dumps(slot)) + 1
    slot["pad"] = " " * (SLOT_BYTES - bare)
    line = orjson.dumps(slot) + b"\n"
    assert len(line) == SLOT_BYTES, len(line)
    return line


def ms(i: int) -> int:
    """`ts(i)` as epoch milliseconds (a message's own `timestamp`)."""
    return 1772323200000 + i * 1000


def header(**extra: Any) -> dict[str, Any]:
    h: dict[str, Any] = {"type": "session", "version": 3, "id": SESSION_ID, "timestamp": ts(0), "cwd": "/work/omp"}
    h.update(extra)
    return h


def _base(etype: str, eid: str, parent: str | None, t: int) -> dict[str, Any]:
    return {"type": etype, "id": eid, "parentId": parent, "timestamp": ts(t)}


def entry(etype: str, eid: str, parent: str | None, t: int = 1, **fields: Any) -> dict[str, Any]:
    return {**_base(etype, eid, parent, t), **fields}


def message(eid: str, parent: str | None, msg: dict[str, Any], t: int = 1) -> dict[str, Any]:
    if msg.get("timestamp") == 1:
        msg = {**msg, "timestamp": ms(t)}
    return {**_base("message", eid, parent, t), "message": msg}


def user(eid: str, parent: str | None, text: str = "hi", t: int = 1, images: list[dict] | None = None) -> dict:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += images or []
    return message(eid, parent, {"role": "user", "content": content, "timestamp": 1}, t)


def usage(inp: int = 0, out: int = 0, cr: int = 0, cw: int = 0, cost: float = 0.0) -> dict[str, Any]:
    return {
        "input": inp,
        "output": out,
        "cacheRead": cr,
        "cacheWrite": cw,
        "totalTokens": inp + out + cr + cw,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }


def assistant(
    eid: str,
    parent: str | None,
    text: str = "ok",
    t: int = 1,
    model: str = "c/z",
    stop: str = "stop",
    calls: tuple[tuple[str, str, dict[str, Any]], ...] = (),
    u: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    provider, model_id = model.split("/", 1)
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for cid, name, args in calls:
        content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
    msg = {
        "role": "assistant",
        "content": content,
        "api": "x",
        "provider": provider,
        "model": model_id,
        "usage": u or usage(),
        "stopReason": stop,
        "timestamp": 1,
        **extra,
    }
    return message(eid, parent, msg, t)


def tool_result(
    eid: str, parent: str | None, call_id: str, name: str = "read", text: str = "out", t: int = 1, details: Any = None
) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 1,
    }
    if details is not None:
        msg["details"] = details
    return message(eid, parent, msg, t)


def model_change(eid: str, parent: str | None, model: str, role: str | None = None, t: int = 1) -> dict:
    extra = {"role": role} if role is not None else {}
    return entry("model_change", eid, parent, t, model=model, **extra)


def model_usage(eid: str, parent: str | None, u: dict[str, Any], model: str = "a/tiny", t: int = 1) -> dict:
    provider, model_id = model.split("/", 1)
    return entry(
        "model_usage",
        eid,
        parent,
        t,
        purpose="title",
        role="tiny",
        api="x",
        provider=provider,
        model=model_id,
        usage=u,
        stopReason="stop",
    )


def blob_image(blobs: Path, data: bytes = PNG, ext: str = "png", write: bool = True) -> dict[str, Any]:
    """An image block as omp persists a large one: `data` = `blob:sha256:<hex>`, the bytes in `blobs/`."""
    digest = hashlib.sha256(data).hexdigest()
    if write:
        blobs.mkdir(parents=True, exist_ok=True)
        (blobs / digest).write_bytes(data)
        link = blobs / f"{digest}.{ext}"
        if not link.exists():
            os.link(blobs / digest, link)
    return {"type": "image", "data": f"blob:sha256:{digest}", "mimeType": f"image/{ext}"}


def write_omp(
    path: Path, entries: list[dict[str, Any]], title: str | None = "Fix the parser", head: dict[str, Any] | None = None
) -> Path:
    """Title slot (unless `title` is None), header, entries: a file as omp writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    out = bytearray(title_slot(title) if title is not None else b"")
    out += orjson.dumps(head or header()) + b"\n"
    for e in entries:
        out += orjson.dumps(e) + b"\n"
    path.write_bytes(bytes(out))
    return path


def rewrite_slot(path: Path, title: str, source: str = "user") -> None:
    """What omp does on a rename: the first 256 bytes overwritten in place, nothing else touched."""
    with open(path, "r+b") as fh:
        fh.write(title_slot(title, source, "2026-03-01T01:00:00.000Z"))


def case16(folder: Path) -> tuple[Path, Path]:
    """SPEC-pi1 C.16: slot, header, model_change a/x, model_change b/y (smol), an assistant from c/z, and a
    user message with a blob image. Returns (session path, blobs folder)."""
    blobs = folder / "blobs"
    img = blob_image(blobs)
    entries = [
        model_change("m1", None, "a/x", t=1),
        model_change("m2", "m1", "b/y", role="smol", t=2),
        user("u1", "m2", "look", t=3, images=[img]),
        assistant("a1", "u1", "seen", t=4, model="c/z", u=usage(10, 5, cost=0.01)),
    ]
    return write_omp(folder / "sessions" / "-work-omp" / f"2026-03-01T00-00-00-000Z_{SESSION_ID}.jsonl", entries), blobs
