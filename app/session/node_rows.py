"""Entries as plain tuples (`node_rows`): what the parse child sends and the tree cache keeps, marshal-able.

`SessionBuilder.adopt_segment` reads them back, in the same field order. A tree that keeps its texts apart
(`Columns`) gives them back here as they were read: row texts and (id, text) pairs of tool calls.
"""

from __future__ import annotations

from typing import Any

from pitree.session.entries import Columns, Node


def node_rows(nodes: list[Node]) -> list[tuple[Any, ...]]:
    """Nodes as plain tuples (marshal-able), in the field order `SessionBuilder.adopt_segment` reads back."""
    first = nodes[0] if nodes else None
    texts: list[str | None]
    calls: list[Any]
    if (
        first is not None
        and nodes[-1].idx - first.idx == len(nodes) - 1
        and all(n._at is first._at and n._text is None for n in nodes)
    ):  # a run of one tree's entries, texts in its columns: read them at once
        at = first._at
        texts = at.texts.range(first.idx, first.idx + len(nodes))
        calls = _call_pairs(nodes, at)
    else:
        texts = [n._text for n in nodes]  # `Node.text` and `Node.calls`, inlined (on the entries)
        calls = [n._calls for n in nodes]
    return [
        (
            n.id,
            n.parent_id,
            n.line,
            n.offset,
            n.length,
            n.type,
            n.role,
            n.ts,
            n.text if text is None else text,
            n.flags,
            n.est,
            n._usage,
            n.model,
            n.meta,
            call if call is None or (type(call) is tuple and type(call[0]) is tuple) else n.calls,  # pairs
            n.call_id,
        )
        for n, text, call in zip(nodes, texts, calls, strict=True)
    ]


def _call_pairs(nodes: list[Node], at: Columns) -> list[Any]:
    """Each node's `calls` as (id, text) pairs (None without any), the texts of all read at once."""
    first_call = at.first_call
    base = first_call[nodes[0].idx]
    last = nodes[-1]
    texts = at.call_texts.range(base, first_call[last.idx] + len(last.call_ids()))
    out: list[Any] = []
    for n in nodes:
        calls = n._calls
        if calls is not None:
            k = first_call[n.idx] - base
            if type(calls) is str:
                calls = ((calls, texts[k]),)
            else:
                calls = tuple(zip(calls, texts[k : k + len(calls)], strict=True))
        out.append(calls)
    return out
