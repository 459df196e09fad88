"""What every write to a session shares: may pitree append here (`check_writable`), the new entry's id and
timestamp as Pi makes them, and the one append (`append_entry`): a whole line, refused when the file is not
the size the caller parsed. The torn-tail and rollback rules are `store.append`'s; this turns its refusals
into `OpError`s.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import orjson
from pitree.ops.errors import NeedsMigration, OpError
from pitree.session.entries import Node
from pitree.session.tree import SessionTree
from pitree.store.append import AppendError, append_line


def check_writable(tree: SessionTree, path: Path) -> None:
    """OpError when Pi would treat the file as empty; NeedsMigration for a pre-v3 file."""
    if tree.header is None:
        raise OpError(f"{path}: no session header; Pi treats this file as empty, so pitree will not write to it")
    if tree.version < 3:
        raise NeedsMigration(
            f"{path} is a version {tree.version:g} session. Pi rewrites such files to version 3 when it opens "
            "them; to append, pitree must do the same",
            tree.version,
        )


def new_entry_id(tree: SessionTree) -> str:
    """8 hex characters not used in the session (Pi's generateId)."""
    for _ in range(100):
        candidate = secrets.token_hex(4)
        if candidate not in tree.by_id:
            return candidate
    return secrets.token_hex(16)


def now_iso(now: float | None = None) -> str:
    t = time.time() if now is None else now
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int((t % 1) * 1000):03d}Z"


def append_entry(path: Path, entry: dict[str, Any], expect_size: int | None) -> int:
    """Append `entry` as one line; `expect_size` is the size the caller parsed (refused if the file differs).
    Returns the offset where the line starts."""
    try:
        return append_line(path, orjson.dumps(entry), expect_size=expect_size).offset
    except (AppendError, OSError) as exc:
        raise OpError(str(exc)) from None


def resolve(tree: SessionTree, id_or_prefix: str) -> Node:
    """The entry with that id or unique id prefix; OpError when there is none or several."""
    try:
        return tree.resolve(id_or_prefix)
    except ValueError as exc:
        raise OpError(str(exc)) from None
