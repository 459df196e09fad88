"""A run of a tree's entries as one marshal-able tuple of columns (`pack`), and back (`unpack`): what the parse child
sends and the tree cache keeps, `SessionBuilder.adopt_segment` reads.

Columns, not a tuple an entry: numbers travel as array bytes, the few kinds of entry (type, role, flags) and
models once each, so reading a segment back makes about a third of the objects a row each made (ids, texts
and tool calls stay objects: the tree keeps them). A tree that keeps its texts apart (`Columns`) gives them
back here as they were read: row texts and (id, text) pairs of tool calls.

The fields, in order (`FIELDS`); n entries, their numbers in the array type named: ids, parentIds (lists); line
numbers ('q'; a parse child counts from its chunk's first line, `unpack`'s `shift` away from the file's),
offsets, lengths ('q'), timestamps ('d'); kinds (a list of distinct (type, role, flags)) and each entry's number
in it ('I'); row texts (a list); estimates ((array type, bytes)); usage (one bytes of every `pack_usage`, and
where each ends in it, 'q'); models (a list of distinct (provider, model) pairs) and each entry's number in it
from 1 ('I', 0 for none); metas ({position in the segment: meta}); calls (a tool result's toolCallId, another
entry's (id, text) pairs or None).
"""

from __future__ import annotations

from array import array
from typing import Any

from pitree.session.columns import Columns
from pitree.session.entries import SYNTHETIC_ID, Node, node_class, shared_string, shared_strings, tag_of

FIELDS = (
    "ids",
    "parent_ids",
    "lines",
    "offsets",
    "lengths",
    "ts",
    "kinds",
    "kind_of",
    "texts",
    "est",
    "usage_blob",
    "usage_ends",
    "models",
    "model_of",
    "metas",
    "calls",
)

Segment = tuple[Any, ...]


def line_id(line: int) -> str:
    """The id pitree gives an entry that has no usable one: after its line."""
    return f"~L{line}"


def pack(nodes: list[Node], shift: int = 0) -> Segment:
    """`nodes`, a run of one tree's entries (consecutive in file order), as a segment's columns; with `shift`, its
    lines counted from line `shift` + 1 (as `unpack` reads a segment that follows `shift` lines)."""
    if not nodes:
        return ([], [], b"", b"", b"", b"", [], b"", [], ("I", b""), b"", b"", [], b"", {}, [])
    first = nodes[0]
    at, a, b = first._at, first.idx, first.idx + len(nodes)
    if nodes[-1].idx != b - 1 or nodes[-1]._at is not at:
        raise ValueError("a segment holds a run of one tree's entries")
    if all(n._text is None for n in nodes):  # texts in the columns
        texts = at.texts.range(a, b)
        calls = _call_pairs(nodes, at)
    else:
        texts = [n.text for n in nodes]
        calls = [n.calls for n in nodes]  # (id, text) pairs, wherever the texts are
    tags = [n._tag for n in nodes]
    kinds: dict[tuple[Any, ...], int] = {}
    kind_of = array("I", [kinds.setdefault(tag, len(kinds)) for tag in tags])
    ends = at.usage_end
    base = ends[a - 1] if a else 0
    numbers: dict[int, int] = {0: 0}  # the columns' model numbers, numbered again for this segment
    model_of = array("I", [numbers.setdefault(k, len(numbers)) for k in at.model[a:b]])
    pairs, metas = at.models, at.meta
    ids = [n.id for n in nodes]
    lines = at.line[a:b]
    if shift:
        lines = array("q", [line - shift for line in lines])
        for k, (n, tag) in enumerate(zip(nodes, tags, strict=True)):
            if tag[2] & SYNTHETIC_ID and n.id == line_id(lines[k] + shift):
                ids[k] = line_id(lines[k])  # named after its line: as a segment counts it
    return (
        ids,
        [n.parent_id for n in nodes],
        _q(lines),
        _q(at.offset[a:b]),
        _q(at.length[a:b]),
        at.ts[a:b].tobytes(),
        list(kinds),
        kind_of.tobytes(),
        texts,
        (at.est.typecode, at.est[a:b].tobytes()),
        at.usage_blob.read(base, ends[b - 1]),
        array("q", [end - base for end in ends[a:b]]).tobytes(),
        [pairs[k - 1] for k in list(numbers)[1:]],
        model_of.tobytes(),
        {i - a: metas[i] for i in range(a, b) if i in metas} if metas else {},
        [n._calls if tag[1] == "toolResult" else call for n, tag, call in zip(nodes, tags, calls, strict=True)],
    )


def _q(column: array) -> bytes:
    return column.tobytes() if column.typecode == "q" else array("q", column).tobytes()


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


def unpack(segment: Segment, at: Columns, base: int, shift: int) -> list[Node]:
    """The nodes of `segment`, placed in `at` from `base` on (not linked into a tree); its line numbers count
    from `shift` + 1. An entry pitree named after its line (`line_id`) is named after its real line."""
    (ids, parent_ids, lines, offsets, lengths, ts, kinds, kind_of, texts, est, usage_blob, usage_ends, models,
     model_of, metas, calls) = segment  # fmt: skip
    at.extend_packed(base, _array("q", lines), shift, offsets, lengths, ts, est, usage_blob, usage_ends)
    at.extend_models(base, models, _array("I", model_of))
    known, intern = shared_strings(), shared_string
    tags = [
        tag_of(known.get(etype) or intern(etype), None if role is None else known.get(role) or intern(role), flags)
        for etype, role, flags in kinds
    ]
    placed, new_node = node_class(at), Node.__new__
    nodes = []
    for idx, nid, pid, text, k, call in zip(
        range(base, base + len(ids)), ids, parent_ids, texts, _array("I", kind_of), calls, strict=True
    ):
        node = new_node(placed)
        node.id, node.parent_id, node._text, node._calls, node._tag = nid, pid, text, call, tags[k]
        node.idx, node._kids, node.parent = idx, None, None
        nodes.append(node)
    if metas:
        at.meta.update({base + i: meta for i, meta in metas.items()})
    if shift and any(tag[2] & SYNTHETIC_ID for tag in tags):
        for node in nodes:
            line = at.line[node.idx] - shift
            if node.flags & SYNTHETIC_ID and node.id == line_id(line):
                node.id = line_id(line + shift)  # named in a segment whose lines counted from 1
    return nodes


def _array(typecode: str, data: bytes) -> array:
    column = array(typecode)
    column.frombytes(data)
    return column
