"""The consented migration of a pre-v3 session to v3, as Pi does when it opens one: the whole file rewritten
atomically (`store.append.rewrite_atomically`) with a backup kept, refused if the file changed meanwhile."""

from __future__ import annotations

from pathlib import Path

import orjson
from pitree.ops.errors import OpError
from pitree.session.load import SessionBuilder, migrate_entry
from pitree.session.parse import parse_line
from pitree.store.append import AppendError, rewrite_atomically
from pitree.store.session_file import SessionFileError, read_bytes


def migrated_bytes(data: bytes, path: Path) -> bytes:
    """The file as v3: header version 3, pitree's stable ids, parentIds, firstKeptEntryId, role rename.

    Unparseable lines are dropped, as Pi's own rewrite drops them (the backup keeps them)."""
    builder = SessionBuilder()
    builder.feed(data, final=True)
    tree = builder.tree
    if tree.header is None:
        raise OpError(f"{path}: no session header; pitree will not migrate a file Pi would treat as empty")
    out = [orjson.dumps({**tree.header, "version": 3})]
    for node in tree.nodes:
        obj, _note = parse_line(data[node.offset : node.offset + node.length])  # as the loader read it
        assert obj is not None, node  # the loader made a node of it, so it parses
        out.append(orjson.dumps(migrate_entry(obj, node, tree)))
    return b"\n".join(out) + b"\n"


def migrate(path: Path) -> Path | None:
    """Rewrite `path` as a v3 session; returns the backup's path. OpError if refused or failed (file unchanged)."""
    try:
        data = read_bytes(path)
        # expect_size: an entry Pi appends between our read and the rewrite must not be lost.
        return rewrite_atomically(path, migrated_bytes(data, path), expect_size=len(data))
    except (SessionFileError, AppendError, OSError) as exc:
        raise OpError(str(exc)) from None
