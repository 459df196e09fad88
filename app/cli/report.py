"""The data behind the scripting commands (`tree`, `context`, `compactions`, `info`) as JSON-ready dicts.

Shared by the CLI (which prints them) and the TUI (which shows the same numbers), so both always agree.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

import orjson
from pitree.cli.report_context import (
    CompactionSplit,
    compaction_audit,
    compaction_split,
    compactions_report,
    context_agent_message,
    context_report,
    head_tiktoken,
    tiktoken_counts,
)
from pitree.session.entries import IS_ERROR
from pitree.session.layout import Layout, RowStream
from pitree.session.layout_rows import ActivePath, Row, RowTuple
from pitree.session.tree import SessionTree
from pitree.session.usage import usage_report

__all__ = [  # the context and compaction reports live in report_context
    "CompactionSplit",
    "compaction_audit",
    "compaction_split",
    "compactions_report",
    "context_agent_message",
    "context_report",
    "head_tiktoken",
    "tiktoken_counts",
]


_HEADER_KNOWN = {"type", "id", "version", "cwd", "timestamp", "parentSession"}


def _file_version(tree: SessionTree) -> int | float | None:
    if tree.header is None:
        return None
    return int(tree.version) if tree.version == int(tree.version) else tree.version


def session_header(tree: SessionTree) -> dict[str, Any]:
    h = tree.header or {}
    out = {
        "id": h.get("id"),
        "version": _file_version(tree),  # the file's own (a v1 header has none): Pi migrates it in memory
        "cwd": h.get("cwd"),
        "name": tree.name,
        "parentSession": h.get("parentSession"),
    }
    if tree.dialect != "pi":  # oh-my-pi: say so, with its header's extra fields and the title slot
        out["agent"] = tree.dialect
        out["extras"] = {k: v for k, v in h.items() if k not in _HEADER_KNOWN}
        out["titleSlot"] = tree.title_slot and {k: v for k, v in tree.title_slot.items() if k != "pad"}
    return out


def skipped_list(tree: SessionTree) -> list[dict[str, Any]]:
    return [{"line": s.line, "reason": s.reason} for s in tree.skipped]


def problems_list(tree: SessionTree) -> list[dict[str, Any]]:
    return [{"line": p.line, "message": p.message} for p in tree.problems]


def _rows(tree: SessionTree, rows: Iterable[Row | RowTuple], active: ActivePath) -> list[dict[str, Any]]:
    """The JSON rows. Inlined (`SessionTree.row_text`, `ActivePath`): this runs once per row of the session."""
    on, text_of, call_of = active.mask(), tree.at.texts.get, tree.calls.get
    last = len(on)
    out = []
    for row in rows:
        node = row[0]
        parent = node.parent
        kind, role, _ = node._tag  # `Node.type` and `Node.role`, inlined
        idx = node.idx
        text = node._text  # `Node.text`, inlined
        if text is None:
            text = text_of(idx)
        if role == "toolResult":  # `SessionTree.row_text`, inlined: the call it answers, when that is known
            call_id = node._calls
            call = call_of(call_id) if type(call_id) is str else None
            if call is not None:
                shown = call[1] if type(call) is tuple else call.call_text(call_id)
                if shown is not None:
                    text = shown
        out.append(
            {
                "id": node.id,
                "parentId": parent.id if parent is not None else None,
                "type": kind,
                "role": role,
                "text": text,
                "depth": row[1],
                "onActivePath": idx < last and on[idx] == 1,
            }
        )
    return out


def _tree_head(tree: SessionTree, layout: Layout | RowStream) -> dict[str, Any]:
    leaf = tree.leaf
    return {
        "session": session_header(tree),
        "entries": tree.entry_count,
        "skipped": skipped_list(tree),
        "problems": problems_list(tree),
        "leaf": leaf.id if leaf else None,
        "roots": [r.id for r in tree.roots],
        "labels": dict(tree.labels),
        "filter": layout.mode,
        "search": layout.query or None,
    }


def tree_report(tree: SessionTree, layout: Layout) -> dict[str, Any]:
    """`pitree tree --json` as one dict (`rows` in display order)."""
    return {**_tree_head(tree, layout), "rows": _rows(tree, layout.rows, layout.active)}


def tree_report_json(tree: SessionTree, layout: Layout | RowStream, chunk: int = 5000) -> Iterator[bytes]:
    """The same JSON as `tree_report`, in pieces of `chunk` rows, so the output never exists whole in memory
    (and, from a `RowStream`, neither does the row list)."""
    head = orjson.dumps({**_tree_head(tree, layout), "rows": []}, option=orjson.OPT_NON_STR_KEYS)
    assert head.endswith(b"[]}")
    yield head[:-2]
    rows = iter(layout.rows)
    first = True
    while part := _rows(tree, islice(rows, chunk), layout.active):
        yield (b"" if first else b",") + orjson.dumps(part)[1:-1]
        first = False
    yield b"]}\n"


def info_report(tree: SessionTree, size: int | None = None) -> dict[str, Any]:
    types: Counter[str] = Counter()
    roles: Counter[str] = Counter()
    errors = 0
    error_kinds: Counter[str] = Counter()  # assistant (error replies), toolResult (isError), bashExecution
    # by kind of entry (its shared (type, role, flags) tag): a few kinds, where four reads an entry took ~1 s at 1M
    for (etype, role, flags), k in Counter(node._tag for node in tree.nodes).items():
        types[etype] += k
        if etype == "message":
            roles[role or "unknown"] += k
        if flags & IS_ERROR:
            errors += k
            error_kinds[role or etype] += k
    stamps = tree.at.ts
    first_ts = min((t for t in (stamps[n.idx] for n in tree.nodes) if t == t), default=math.nan)
    last_ts = max((t for t in (stamps[n.idx] for n in tree.nodes) if t == t), default=math.nan)
    leaves = tree.leaves()
    leaf = tree.leaf
    usage = usage_report(tree)
    return {
        "session": {**session_header(tree), "migratedInMemory": tree.header is not None and tree.version < 3},
        "header": tree.header,
        "bytes": size,
        "entries": tree.entry_count,
        "lines": tree.entry_count + len(tree.skipped) + (tree.header is not None) + (tree.title_slot is not None),
        "skipped": len(tree.skipped),
        "problems": len(tree.problems),
        "types": dict(sorted(types.items())),
        "roles": dict(sorted(roles.items())),
        "errors": errors,
        "errorKinds": dict(sorted(error_kinds.items())),
        "branches": len(leaves),
        "leaves": [n.id for n in leaves],
        "leaf": leaf.id if leaf else None,
        "labels": len(tree.labels),
        "compactions": types.get("compaction", 0),
        "usage": {k: v for k, v in usage["total"].items() if k != "messages"},
        "models": {
            k: {f: v[f] for f in ("messages", "input", "output", "totalTokens", "cost")}
            for k, v in usage["models"].items()
        },
        "firstTimestamp": None if first_ts != first_ts else first_ts,
        "lastTimestamp": None if last_ts != last_ts else last_ts,
    }
