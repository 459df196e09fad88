"""A new Pi session holding one path, as Pi's `SessionManager.createBranchedSession(leafId)` writes it.

Pi's fork: a fresh header (version 3, a new UUIDv7 id, the time now, the same cwd, `parentSession` = the
source file), then the entries root -> leaf without the label entries, then one new label entry per label
that (after replaying every label entry of the file in order) is set on an entry of that path, chained
under the last path entry; so the new file's leaf is the last of those.

Where pitree differs, on purpose:
- Each entry's line is copied byte for byte from the source when it is already what Pi would hold. It is
  re-serialized only when it must change: a v1/v2 source (entries come out migrated, with pitree's stable
  ids, so the output is a valid v3 file), an entry without a usable id, or a `parentId` that is not the
  entry before it in the output.
- That last case is Pi's bug: an entry whose parent is a dropped label entry keeps pointing at it, so in
  Pi's fork the path is cut there (the context loses everything before). pitree points it at the previous
  kept entry, so the fork has the same context as the source. The same rewrite turns a self-parent or a
  missing parent at the root into `null`.
Pure: the caller passes how to read an entry's raw line; lines are made one at a time (`iter_fork_lines`).
"""

from __future__ import annotations

import os
import secrets
import time
import uuid
from collections.abc import Callable, Container, Iterator
from datetime import UTC, datetime
from typing import Any

import orjson
from pitree.ops.export.doc import ExportError
from pitree.session.entries import Node
from pitree.session.load import migrate_entry
from pitree.session.parse import parse_line
from pitree.session.tree import SessionTree


class ForkError(ExportError):
    """The path cannot be written as a session; one line for the user."""


def uuid7() -> str:
    """A version 7 UUID (Pi's createSessionId): 48 bits of Unix milliseconds, then random bits."""
    ms = time.time_ns() // 1_000_000
    value = (ms & ((1 << 48) - 1)) << 80 | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    return str(uuid.UUID(int=value))


def now_iso() -> str:
    """JavaScript's `new Date().toISOString()`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _new_id(taken: Container[str]) -> str:
    while True:  # Pi's generateId: 8 hex characters not used yet
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value (an empty list or object is truthy there)."""
    if isinstance(value, list | dict):
        return True
    return bool(value)


def resolved_labels(tree: SessionTree) -> dict[str, tuple[Any, Any]]:
    """Pi's labelsById (with their timestamps): every label entry replayed in file order, in Map order."""
    labels: dict[str, tuple[Any, Any]] = {}
    for node in tree.nodes:
        if node.type != "label" or node.meta is None:
            continue
        target, label = node.meta.get("targetId"), node.meta.get("label")
        if not isinstance(target, str):
            continue
        if js_truthy(label):
            # Like a JavaScript Map, a dict keeps a key's first position when it is set again.
            labels[target] = (label, node.meta.get("timestamp"))
        else:
            labels.pop(target, None)
    return labels


def entry_line(node: Node, raw: bytes, tree: SessionTree, parent_id: str | None) -> bytes:
    """The entry's output line: its own bytes when nothing must change, else migrated and re-serialized."""
    obj, why = parse_line(raw)
    if obj is None:
        raise ForkError(f"line {node.line} no longer parses ({why}); the file changed since it was loaded")
    out = migrate_entry(obj, node, tree)
    if out.get("parentId", object()) != parent_id:
        out = {**out, "parentId": parent_id}
    if out == obj:
        try:
            raw.decode("utf-8")
            return bytes(raw)
        except UnicodeDecodeError:  # Pi reads such bytes as U+FFFD; write what it reads, as valid UTF-8
            pass
    return orjson.dumps(out)


PROGRESS_EVERY = 4096  # lines between two progress calls


def fork_lines(tree: SessionTree, raw: Callable[[Node], bytes], leaf: Node | None, **options: Any) -> list[bytes]:
    """The lines (no newlines) of a new session holding root -> `leaf` (see `iter_fork_lines`)."""
    return list(iter_fork_lines(tree, raw, leaf, **options))


def iter_fork_lines(
    tree: SessionTree,
    raw: Callable[[Node], bytes],
    leaf: Node | None,
    *,
    parent_session: str,
    cwd: Any,
    session_id: str | None = None,
    timestamp: str | None = None,
    new_id: Callable[[Container[str]], str] = _new_id,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[bytes]:
    """The lines (no newlines) of a new session holding root -> `leaf` (the file's leaf when None), one at a
    time: a line is read (`raw`), checked and made when it is asked for. `progress` hears (lines done, lines of
    the path) every PROGRESS_EVERY lines and may raise to stop."""
    if tree.header is None:
        raise ForkError("the file has no session header (Pi treats it as empty); there is nothing to fork")
    leaf = leaf if leaf is not None else tree.leaf
    if leaf is None:
        raise ForkError("the session has no entries; there is nothing to fork")
    path = [n for n in tree.branch(leaf) if n.type != "label"]
    header = {
        "type": "session",
        "version": 3,
        "id": session_id or uuid7(),
        "timestamp": timestamp or now_iso(),
        "cwd": cwd,
        "parentSession": parent_session,
    }
    yield orjson.dumps(header)
    parent_id: str | None = None
    total = len(path)
    for done, node in enumerate(path, 1):
        yield entry_line(node, raw(node), tree, parent_id)
        parent_id = node.id
        if progress is not None and (done % PROGRESS_EVERY == 0 or done == total):
            progress(done, total)
    labels = resolved_labels(tree)
    on_path = {n.id for n in path if n.id in labels}  # the labels' targets only: a path can hold millions
    made: set[str] = set()
    taken = _Taken(tree, made)
    for target, (label, ts) in labels.items():
        if target not in on_path:
            continue
        label_id = new_id(taken)
        entry: dict[str, Any] = {"type": "label", "id": label_id, "parentId": parent_id}
        if ts is not None:
            entry["timestamp"] = ts
        entry["targetId"] = target
        entry["label"] = label
        yield orjson.dumps(entry)
        made.add(label_id)
        parent_id = label_id


class _Taken:
    """The ids a new label entry must not take: every id of the source (a superset of the path's, with no
    set of a million ids made for it) and the labels made so far."""

    def __init__(self, tree: SessionTree, made: set[str]) -> None:
        self.tree, self.made = tree, made

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and (entry_id in self.made or self.tree.get(entry_id) is not None)
