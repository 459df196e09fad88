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
    if first is not None and nodes[-1].idx - first.idx == len(nodes) - 1 and all(n._at is first._at for n in nodes):
        # a run of one tree's entries: read their columns at once
        at = first._at
        a, b = first.idx, first.idx + len(nodes)
        if all(n._text is None for n in nodes):  # texts in the columns
            texts = at.texts.range(a, b)
            calls = _call_pairs(nodes, at)
        else:
            texts, calls = [n._text for n in nodes], [n.calls for n in nodes]
        ests = at.est[a:b].tolist()
        pairs = at.models
        models = [pairs[k - 1] if k else None for k in at.model[a:b]]
        ends, blob = at.usage_end, at.usage_blob
        starts = ends[a - 1 : b - 1] if a else [0, *ends[: b - 1]]
        usages = [bytes(blob[s:e]) if e > s else None for s, e in zip(starts, ends[a:b], strict=True)]
    else:
        texts = [n._text for n in nodes]  # `Node.text` and `Node.calls`, inlined (on the entries)
        calls = [n.calls for n in nodes]
        ests, models, usages = [n.est for n in nodes], [n.model for n in nodes], [n._usage for n in nodes]
    metas = first._at.meta if first is not None else {}
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
            est,
            usage,
            model,
            metas.get(n.idx) if n._at is first._at else n.meta,  # type: ignore[union-attr]
            call,  # (id, text) pairs
            n.call_id,
        )
        for n, text, call, est, usage, model in zip(nodes, texts, calls, ests, usages, models, strict=True)
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
        if calls is not None and n.role != "toolResult":
            k = first_call[n.idx] - base
            if type(calls) is str:
                calls = ((calls, texts[k]),)
            else:
                calls = tuple(zip(calls, texts[k : k + len(calls)], strict=True))
        else:
            calls = None
        out.append(calls)
    return out
