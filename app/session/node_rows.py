"""Entries as plain tuples (`node_rows`): what the parse child sends and the tree cache keeps, marshal-able.

`SessionBuilder.adopt_segment` reads them back, in the same field order. A tree that keeps its texts apart
(`Columns`) gives them back here as they were read: row texts and (id, text) pairs of tool calls.
"""

from __future__ import annotations

from typing import Any

from pitree.session.entries import Columns, Node


def node_rows(nodes: list[Node]) -> list[tuple[Any, ...]]:
    """Nodes as plain tuples (marshal-able), in the field order `SessionBuilder.adopt_segment` reads back."""
    if not nodes:
        return []
    first = nodes[0]
    placed, at = type(first), first._at
    a, b = first.idx, first.idx + len(nodes)
    if nodes[-1].idx != b - 1 or not all(type(n) is placed for n in nodes):  # not a run of one tree's entries
        return [
            (n.id, n.parent_id, n.line, n.offset, n.length, n.type, n.role, n.ts, n.text, n.flags, n.est, n._usage)
            + (n.model, n.meta, n.calls, n.call_id)
            for n in nodes
        ]
    # a run of one tree's entries: their columns read at once, the rest inlined (`Node`'s properties)
    if all(n._text is None for n in nodes):  # texts in the columns
        texts = at.texts.range(a, b)
        calls = _call_pairs(nodes, at)
    else:
        texts = [n.text for n in nodes]
        calls = [n.calls for n in nodes]  # (id, text) pairs, wherever the texts are
    pairs = at.models
    models = [pairs[k - 1] if k else None for k in at.model[a:b]]
    ends = at.usage_end
    starts = ends[a - 1 : b - 1] if a else [0, *ends[: b - 1]]
    base = starts[0] if starts else 0
    blob = bytes(at.usage_blob[base : ends[b - 1]])  # one copy; each usage a slice of it
    usages = [blob[s - base : e - base] if e > s else None for s, e in zip(starts, ends[a:b], strict=True)]
    get_meta = at.meta.get if at.meta else _none
    return [
        (n.id, n.parent_id, line, offset, length, tag[0], tag[1], ts, text, tag[2], est, usage, model, get_meta(i))
        + (call, n._calls if tag[1] == "toolResult" else None)  # `call_id`
        for n, tag, i, line, offset, length, ts, text, est, usage, model, call in zip(
            nodes,
            [n._tag for n in nodes],  # (type, role, flags)
            range(a, b),
            at.line[a:b].tolist(),
            at.offset[a:b].tolist(),
            at.length[a:b].tolist(),
            at.ts[a:b].tolist(),
            texts,
            at.est[a:b].tolist(),
            usages,
            models,
            calls,
            strict=True,
        )
    ]


def _none(_: int) -> None:
    return None


def _call_pairs(nodes: list[Node], at: Columns) -> list[Any]:
    """Each node's `calls` as (id, text) pairs (None without any), the texts of all read at once."""
    first_call = at.first_call
    base = first_call[nodes[0].idx]
    last = nodes[-1]
    texts = at.call_texts.range(base, first_call[last.idx] + len(last.call_ids()))
    out: list[Any] = []
    for n in nodes:
        calls = n._calls
        if calls is not None and n._tag[1] != "toolResult":  # `role`
            k = first_call[n.idx] - base
            if type(calls) is str:
                calls = ((calls, texts[k]),)
            else:
                calls = tuple(zip(calls, texts[k : k + len(calls)], strict=True))
        else:
            calls = None
        out.append(calls)
    return out
