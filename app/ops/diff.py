"""Compare two entries of a session: where their branches split and what each did from there (issue #22).

`compare(tree, a, b, read)` is pure over the tree: it walks the two parent chains to the deepest common ancestor,
builds each side from the compact nodes (`diff_turns`), sizes the context at each end as Pi 1.6 does, and reads
entries' JSON (through `read`, e.g. `EntryReader.entries`) only for the shown replies' tool calls and the last
answers. The CLI (`pitree diff`), the TUI's compare screen and the Markdown export all render a `BranchDiff`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import zip_longest
from typing import Any

from pitree.ops.diff_turns import TURNS_MAX, ReadEntries, Side, Turn, build_side
from pitree.session.context import ContextSize, build_context, project, usage_tokens
from pitree.session.dialect_omp import OMP
from pitree.session.entries import Node
from pitree.session.tree import SessionTree

MUCH_LONGER = 3  # one side has at least this many times the other's entries (and 10 more): say so


@dataclass
class BranchDiff:
    """Two ends of a session, their fork point and their sides, turns aligned by index."""

    a: Node
    b: Node
    ancestor: Node | None
    side_a: Side
    side_b: Side
    context_a: ContextSize
    context_b: ContextSize
    notes: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # "a", "b", "ancestor": Pi's row text of each

    @property
    def relation(self) -> str:
        """`same`, `a-before-b` (A is on B's path), `b-before-a`, `siblings`, or `unrelated` (different roots)."""
        if self.a is self.b:
            return "same"
        if self.ancestor is self.a:
            return "a-before-b"
        if self.ancestor is self.b:
            return "b-before-a"
        return "siblings" if self.ancestor is not None else "unrelated"

    def rows(self) -> list[tuple[Turn | None, Turn | None]]:
        """The shown turns side by side, by index."""
        return list(zip_longest(self.side_a.turns, self.side_b.turns))

    def files_only(self) -> dict[str, dict[str, list[str]]]:
        """Per side, the files it read (only read) and modified that the other side did not touch the same way."""
        ra, ma = self.side_a.files.lists()
        rb, mb = self.side_b.files.lists()
        return {
            "a": {"read": sorted(set(ra) - set(rb)), "modified": sorted(set(ma) - set(mb))},
            "b": {"read": sorted(set(rb) - set(ra)), "modified": sorted(set(mb) - set(ma))},
        }


def context_size(tree: SessionTree, tip: Node) -> ContextSize:
    """Pi 1.6's estimateProjectedContextTokens at `tip`, equal to `build_context(tree, tip).size`: in the common
    case (the last valid reply's usage, no compaction or context edit after it and no edit naming what follows
    it) from a walk back to that reply and one look at the path's types, without projecting the whole path;
    otherwise by `build_context`."""
    if tree.dialect == OMP:
        return build_context(tree, tip).size
    trailing: list[Node] = []
    node: Node | None = tip
    while node is not None:
        if node.type == "compaction" or node.type == "context_edit":
            return build_context(tree, tip).size
        if node.type == "message" and node.role == "assistant" and usage_tokens(node):
            break
        trailing.append(node)
        node = node.parent
    if node is None:
        return build_context(tree, tip).size
    source = node
    after = {n.id for n in trailing} | {source.id}
    walk = source.parent
    while walk is not None:
        if walk.type == "context_edit" and walk.meta is not None and walk.meta.get("targetId") in after:
            return build_context(tree, tip).size
        walk = walk.parent
    used = usage_tokens(source)
    more = sum(m.tokens for n in reversed(trailing) for m in project(n, None))
    return ContextSize(used + more, used, more, source)


def compare(
    tree: SessionTree, a: Node, b: Node, read: ReadEntries | None = None, turns_max: int = TURNS_MAX
) -> BranchDiff:
    """The comparison of the branches ending at `a` and `b` (either may be an inner entry)."""
    ancestor = tree.common_ancestor(a, b)
    diff = BranchDiff(
        a,
        b,
        ancestor,
        build_side(a, tree.branch(a, after=ancestor), read, turns_max),
        build_side(b, tree.branch(b, after=ancestor), read, turns_max),
        context_size(tree, a),
        context_size(tree, b),
    )
    diff.texts = {"a": tree.row_text(a), "b": tree.row_text(b)}
    if ancestor is not None:
        diff.texts["ancestor"] = tree.row_text(ancestor)
    diff.notes.extend(_notes(diff))
    return diff


def _notes(diff: BranchDiff) -> list[str]:
    notes: list[str] = []
    relation = diff.relation
    if relation == "same":
        notes.append("A and B are the same entry: nothing differs")
    elif relation == "a-before-b":
        notes.append("A is on B's path: B continues from A")
    elif relation == "b-before-a":
        notes.append("B is on A's path: A continues from B")
    elif relation == "unrelated":
        notes.append("A and B share no ancestor (they start at different roots)")
    ea, eb = diff.side_a.entries, diff.side_b.entries
    longer, shorter = ("A", "B") if ea > eb else ("B", "A")
    big, small = max(ea, eb), min(ea, eb)
    if small and big >= MUCH_LONGER * small and big - small >= 10:
        notes.append(f"branch {longer} is much longer than {shorter}: {big:,} entries against {small:,}")
    for name, side in (("A", diff.side_a), ("B", diff.side_b)):
        if side.truncated:
            notes.append(f"{name}: the first {len(side.turns):,} of {side.turn_count:,} turns are shown")
        if side.truncated and side.calls:
            notes.append(f"{name}: files are those of the shown turns")
    return notes


def _when(ms: float) -> str | None:
    if ms != ms:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")


def side_dict(side: Side, ctx: ContextSize, only: dict[str, list[str]], text: str) -> dict[str, Any]:
    read, modified = side.files.lists()
    duration = side.duration_ms
    last = side.last_answer
    return {
        "tipId": side.tip.id,
        "tipLine": side.tip.line,
        "tipText": text,
        "entries": side.entries,
        "turnCount": side.turn_count,
        "turnsShown": len(side.turns),
        "toolCalls": side.calls,
        "errors": side.errors,
        "tokens": int(side.tokens) if side.tokens == side.tokens and abs(side.tokens) < 2**63 else side.tokens,
        "cost": round(side.cost, 6),
        "start": _when(side.start_ms),
        "end": _when(side.end_ms),
        "durationMs": int(duration) if duration is not None else None,
        "compactions": [{"entryId": i, "text": t} for i, t in side.compactions],
        "branchSummaries": [{"entryId": i, "text": t} for i, t in side.summaries],
        "files": {"read": read, "modified": modified, "complete": side.files_complete, "only": only},
        "context": ctx.as_dict(),
        "lastAnswer": None if last is None else {"entryId": last[0], "text": last[1]},
        "turns": [t.as_dict() for t in side.turns],
    }


def diff_dict(diff: BranchDiff) -> dict[str, Any]:
    """`pitree diff --json`."""
    anc = diff.ancestor
    only = diff.files_only()
    return {
        "a": diff.a.id,
        "b": diff.b.id,
        "relation": diff.relation,
        "ancestor": None if anc is None else {"entryId": anc.id, "line": anc.line, "text": diff.texts.get("ancestor")},
        "notes": diff.notes,
        "sides": {
            "a": side_dict(diff.side_a, diff.context_a, only["a"], diff.texts["a"]),
            "b": side_dict(diff.side_b, diff.context_b, only["b"], diff.texts["b"]),
        },
    }
