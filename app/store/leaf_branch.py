"""`read_leaf_branch`: the leaf's branch of a big session, read backwards from the end of its file, in a moment.

A cold open of a big session reads the whole file before the tree can be drawn (seconds at a million entries).
The leaf is the file's last entry and Pi writes an entry right after its parent, so the last entries of the
leaf's path are almost always the last lines of the file: reading lines from the end, following `parentId`
from the leaf, finds them after a few megabytes. The explorer shows them while the tree is read.

Every line read is parsed (orjson; a few tens of milliseconds per 32 MB), which also finds the label entries that
name an entry of the path: a label comes after its target, so those between the oldest entry found and the end
are all of them. The entries go through `SessionBuilder` with the file's header, so each row says what the tree's
will (the same text, figures and filter). What it cannot know without the whole file is left out: where the
path sits among the other branches (no guides), and a compaction's size after it.

It reads at most `budget` bytes and stops at a root, at an id it cannot find within the budget (a parent written
further up, a hand-written file), at an id seen twice (a cycle), or when `cancelled()`. v1 files (no ids) and
files without a session header give None.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pitree.session.load import SessionBuilder
from pitree.session.tree import SessionTree

CHUNK = 1 << 20  # bytes read at a time, backwards
BUDGET = 64 << 20  # bytes read at most: ~0.1 s of parsing
HEAD_BYTES = 1 << 20  # the header (and oh-my-pi's title slot before it) must be within this


@dataclass(frozen=True)
class LeafBranch:
    """The last `len(path)` entries of the leaf's path, in a tree of their own (a chain, the leaf last)."""

    tree: SessionTree
    complete: bool  # the path reaches its root: nothing of it is left out
    read: int  # bytes read from the end of the file


def read_leaf_branch(
    path: Path,
    entries: int = 400,
    budget: int = BUDGET,
    cancelled: Callable[[], bool] | None = None,
) -> LeafBranch | None:
    """The leaf's path, up to its last `entries` entries (None: no header, a v1 file, nothing found, cancelled)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
            size = os.fstat(fh.fileno()).st_size
            found = _walk_back(fh, size, entries, budget, cancelled)
    except OSError:
        return None
    if found is None:
        return None
    lines, labels, complete, read = found
    builder = SessionBuilder()
    header_end = _header_end(head)
    if header_end is None:
        return None
    builder.feed(head[:header_end], final=False)
    tree = builder.tree
    if tree.header is None or tree.version < 2:
        return None  # v1 ids are made from every earlier line
    builder.feed(b"".join(raw + b"\n" for raw in reversed(lines)), final=False)
    for obj in reversed(labels):  # in file order: the latest label of an entry wins, an empty one clears it
        tree.apply_label(obj.get("targetId"), obj.get("label"), None)
    if not tree.nodes:
        return None
    return LeafBranch(tree, complete, read)


def _header_end(head: bytes) -> int | None:
    """The end (after its newline) of the session header's line, oh-my-pi's title slot line before it allowed."""
    end = 0
    for _ in range(2):
        newline = head.find(b"\n", end)
        if newline < 0:
            return None
        try:
            obj = orjson.loads(head[end:newline])
        except orjson.JSONDecodeError:
            return None
        end = newline + 1
        if isinstance(obj, dict) and obj.get("type") == "session":
            return end
    return None


def _walk_back(
    fh: Any, size: int, entries: int, budget: int, cancelled: Callable[[], bool] | None
) -> tuple[list[bytes], list[dict[str, Any]], bool, int] | None:
    """(the path's lines, newest first; the labels naming them, newest first; reached a root; bytes read)."""
    lines: list[bytes] = []
    labels: list[dict[str, Any]] = []
    on_path: set[str] = set()
    want: str | None = None  # the id looked for: None while looking for the leaf
    after: list[bytes] = []  # pieces of the line that goes on after `pos`, the nearest last
    pos = size
    first = True
    while pos > 0 and size - pos < budget:
        if cancelled is not None and cancelled():
            return None
        start = max(0, pos - min(CHUNK, budget - (size - pos)))
        fh.seek(start)
        chunk = fh.read(pos - start)
        pos = start
        if start > 0 and b"\n" not in chunk:  # inside one long line: joined once its start is read
            after.append(chunk)
            continue
        parts = (chunk + b"".join(reversed(after))).split(b"\n")
        after = [parts[0]] if start > 0 else []
        whole = parts[1:] if start > 0 else parts
        if first:  # what follows the last newline is a line being written: the tail holds it back too
            whole.pop()
            first = False
        for raw in reversed(whole):
            if not raw or raw[0] != 0x7B:
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if type(obj) is not dict or obj.get("type") == "session":
                continue
            entry_id = obj.get("id")
            if obj.get("type") == "label":
                labels.append(obj)
            if not isinstance(entry_id, str) or (want is not None and entry_id != want):
                continue
            if entry_id in on_path:
                return lines, labels, False, size - pos  # a cycle: what was found is shown
            lines.append(raw)
            on_path.add(entry_id)
            parent = obj.get("parentId")
            if not isinstance(parent, str) or parent == entry_id:
                return lines, _naming(labels, on_path), True, size - pos
            if len(lines) >= entries:
                return lines, _naming(labels, on_path), False, size - pos
            want = parent
    if not lines:
        return None
    return lines, _naming(labels, on_path), False, size - pos  # the budget or the file ended before a root


def _naming(labels: list[dict[str, Any]], ids: set[str]) -> list[dict[str, Any]]:
    return [obj for obj in labels if obj.get("targetId") in ids]
