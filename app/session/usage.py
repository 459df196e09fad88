"""Tokens and cost as Pi 1.x totals them (`getSessionStats`, `getUsageCostBreakdown`), per model and per branch
segment (`pitree usage`, the `u` view, `pitree info`).

Sources, over every entry of the file: assistant `usage`, tool-result `usage`, `usage` entries, `compaction.usage`
and `branch_summary.usage`. Tokens are input + output + cacheRead + cacheWrite (a stored `totalTokens` is not
used); cost is the sum of `cost.total`. Per model: an assistant reply under `provider/(responseModel ?? model)`,
a usage entry under `provider/model`, the rest under `Tools/summaries`; models with no tokens and no cost are
left out and the rest ordered by cost, as Pi's breakdown does.

A *segment* is a run of entries between forks: it starts at a root or at a child of an entry with several
children and ends at the next fork or at a leaf. Every entry in the tree belongs to exactly one segment, so the
segments' figures add up to the session's. (An entry that a later duplicate id replaced is counted in the
total, as Pi counts every line, but is in no segment.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pitree.session.entries import Node, UsageNumbers
from pitree.session.text import js_string
from pitree.session.tree import SessionTree

FIELDS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost")


@dataclass
class Usage:
    """Summed usage of some assistant messages."""

    messages: int = 0
    values: list[float] = field(default_factory=lambda: [0.0] * len(FIELDS))

    def add(self, usage: UsageNumbers | tuple[float, ...]) -> None:
        self.messages += 1
        values = self.values
        inp, out, read, write, _stored_total, cost = usage  # unpacked: six lookups by name cost ~1 s at 1M
        values[0] += inp
        values[1] += out
        values[2] += read
        values[3] += write
        values[4] += inp + out + read + write  # Pi's tokens.total (`UsageNumbers.tokens`), not the stored one
        values[5] += cost

    def merge(self, other: Usage) -> None:
        self.messages += other.messages
        self.values = [a + b for a, b in zip(self.values, other.values, strict=True)]

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"messages": self.messages}
        for name, v in zip(FIELDS, self.values, strict=True):
            out[name] = round(v, 6) if name == "cost" else _count(v)
        return out


def _count(v: float) -> int | float:
    # A hand-edited usage can hold 1e300 or Infinity: int() of those raises or outgrows what JSON output holds.
    return int(v) if math.isfinite(v) and abs(v) < 2**63 else v


@dataclass
class Segment:
    start: Node
    end: Node
    entries: int = 0
    usage: Usage = field(default_factory=Usage)
    models: dict[str, Usage] = field(default_factory=dict)
    forks: int = 0  # forks above the segment's start: its nesting level in the tree


TOOLS_AND_SUMMARIES = "Tools/summaries"


def _js(value: Any) -> str:
    return "undefined" if value is None else js_string(value)


class _ModelKeys:
    """`model_key` of the entries of one tree, made once for each kind of entry, model and responseModel (a walk
    asks for hundreds of thousands of keys, of a few dozen values)."""

    def __init__(self, tree: SessionTree) -> None:
        self._at = tree.at
        self._made: dict[tuple[Any, ...], str] = {}

    def __call__(self, node: Node) -> str:
        tag = node._tag
        meta = self._at.meta.get(node.idx) if tag[1] == "assistant" else None  # `Node.meta`: responseModel
        response = meta.get("responseModel") if meta else None
        key = (tag[0], tag[1], self._at.model[node.idx], type(response), response)  # `1` and `true` apart
        try:
            return self._made[key]
        except KeyError:
            made = self._made[key] = model_key(node)
            return made
        except TypeError:  # an unhashable responseModel (a list, an object): not kept
            return model_key(node)


def model_key(node: Node) -> str:
    """Pi's getUsageCostBreakdown key of an entry that carries usage."""
    provider, model = node.model or (None, None)
    if node.type == "usage":
        return f"{_js(provider)}/{_js(model)}"
    if node.role == "assistant" and node.type == "message":
        response = node.meta.get("responseModel") if node.meta else None
        return f"{_js(provider)}/{_js(response if response is not None else model)}"
    return TOOLS_AND_SUMMARIES


def source_of(node: Node) -> str:
    """Which of Pi's usage sources an entry is: assistant, toolResult, usage, compaction, branch_summary."""
    return node.role or "message" if node.type == "message" else node.type


def segments(tree: SessionTree) -> list[Segment]:
    """Every segment, in the tree's pre-order (the order Pi's /tree lists them)."""
    # Segment by segment down each chain of only children: a map from every entry to its segment held ~100 MB
    # at 1,000,000 entries.
    out: list[Segment] = []
    at, key_of = tree.at, _ModelKeys(tree)
    stack = [(root, 0) for root in reversed(tree.roots)]
    while stack:
        node, forks = stack.pop()
        seg = Segment(start=node, end=node, forks=forks)
        out.append(seg)
        models, count = seg.models, 0
        while True:
            count += 1
            usage = at.usage_numbers(node.idx)
            if usage is not None:
                seg.usage.add(usage)
                key = key_of(node)
                found = models.get(key)
                if found is None:
                    found = models[key] = Usage()
                found.add(usage)
            children = node.children
            if len(children) != 1:
                break
            node = children[0]
        seg.end, seg.entries = node, count
        stack.extend((child, forks + 1) for child in reversed(children))
    return out


def _first_text(tree: SessionTree, seg: Segment) -> str:
    """The segment's first user message (what the branch was about), else its first row."""
    node: Node | None = seg.end
    first_user = None
    while node is not None:
        if node.type == "message" and node.role == "user":
            first_user = node
        if node is seg.start:
            break
        node = node.parent
    return tree.row_text(first_user or seg.start)


def usage_report(tree: SessionTree) -> dict[str, Any]:
    """`pitree usage --json`: totals, per model, per segment, and the active path's share."""
    total = Usage()
    per_model: dict[str, Usage] = {}
    sources: dict[str, int] = {}
    at, key_of, nodes = tree.at, _ModelKeys(tree), tree.nodes
    # every line, as Pi's getEntries has them, those with usage; the entries in the tree when the walk began (the
    # explorer's live tail may be putting the next one in the columns meanwhile)
    for idx, usage in at.usages(len(nodes)):
        node = nodes[idx]
        total.add(usage)
        key = key_of(node)
        found = per_model.get(key)
        if found is None:
            found = per_model[key] = Usage()
        found.add(usage)
        source = source_of(node)
        sources[source] = sources.get(source, 0) + 1
    segs = segments(tree)
    starts = {id(seg.start) for seg in segs}
    active: set[int] = set()  # the segments' starts on the active path (a set of the whole path: ~60 MB at 1M)
    path_usage = Usage()
    for node in tree.active_path():
        if id(node) in starts:
            active.add(id(node))
        usage = at.usage_numbers(node.idx)
        if usage is not None:
            path_usage.add(usage)
    leaf = tree.leaf
    return {
        "total": {**total.as_dict(), "sources": sources},
        "activePath": path_usage.as_dict(),
        "models": {
            k: v.as_dict()
            for k, v in sorted(per_model.items(), key=lambda kv: -kv[1].values[5])
            if v.values[5] > 0 or v.values[4] > 0
        },
        "segments": [
            {
                "startId": seg.start.id,
                "endId": seg.end.id,
                "entries": seg.entries,
                "forks": seg.forks,
                "text": _first_text(tree, seg),
                "onActivePath": id(seg.start) in active,
                "endsAtLeaf": not seg.end.children,
                "holdsLeaf": seg.end is leaf,
                **seg.usage.as_dict(),
                "models": {k: v.as_dict() for k, v in seg.models.items()},
            }
            for seg in segs
        ],
    }
