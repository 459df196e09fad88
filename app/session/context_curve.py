"""The context size at every entry of a path (the context view's plot), in one pass: what
`build_context(tree, n).size.tokens` gives for each `n` on root → leaf, without building each context.

The state carried along the path is Pi's projection at the current entry: the selected entries' estimates
(the system messages folded into a `SystemHead`), the edits among them, the last entry that invalidates a
usage (context edit or compaction), and the last assistant usage after it with the estimates that follow it.
A compaction restarts the state from its kept range; an edit changes its target's share in place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pitree.session.context import ContextMessage, project, usage_tokens
from pitree.session.entries import Node
from pitree.session.estimate import SystemHead
from pitree.session.tree import SessionTree

CHECK_EVERY = 65_536  # entries between two asks whether to stop


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """The context size (Pi's rule) if the leaf were `node`: one point per entry of a path."""

    node: Node
    tokens: int
    compaction: bool  # `node` is a compaction: the size drops here


class _State:
    """Pi's projection at one entry of the path, kept up to date as the path goes on."""

    def __init__(self) -> None:
        self.shares: dict[str, tuple[Node, int]] = {}  # selected entry id -> (entry, its non-system tokens)
        self.edits: dict[str, Node] = {}
        self.nonsys = 0
        # Selected system messages, in order, even those an edit omits now: a later edit may bring one back.
        self.systems: list[Node] = []
        self.head = SystemHead()
        self.usage = 0  # the last usable assistant usage after the last invalidating entry (0: none)
        self.trailing = 0

    def _messages(self, node: Node) -> list[ContextMessage]:
        return project(node, self.edits.get(node.id))

    def take(self, node: Node, contributes: bool = True) -> None:
        """A newly selected entry (an older compaction in a kept range is selected but contributes nothing)."""
        messages = self._messages(node) if contributes else []
        is_system = node.type == "message" and node.role == "system"
        if contributes and (is_system or any(m.role == "system" for m in messages)):  # or a checkpoint
            self.systems.append(node)
        share = 0
        for m in messages:
            if m.role == "system":
                self._add_to_head(m)
            else:
                share += m.tokens
        self.nonsys += share
        if contributes:
            self.shares[node.id] = (node, share)
        used = usage_tokens(node) if messages and node.role == "assistant" else 0
        if used:
            self.usage, self.trailing = used, 0
        elif self.usage:
            self.trailing += sum(m.tokens for m in messages)

    def _add_to_head(self, m: ContextMessage) -> None:
        if m.facts is not None:
            self.head.add(m.facts, m)

    def edit(self, edit: Node) -> None:
        """A context edit joined the selection: its target's share changes (last edit per target wins)."""
        self.usage = self.trailing = 0  # no usage before an edit sizes the context
        target = edit.meta.get("targetId") if edit.meta else None
        if not isinstance(target, str):
            return
        had = self.shares.get(target)
        self.edits[target] = edit
        if had is None:
            return
        node, old = had
        new = sum(m.tokens for m in self._messages(node) if m.role != "system")
        self.nonsys += new - old
        self.shares[target] = (node, new)
        if any(n is node for n in self.systems):
            self.head = SystemHead()
            for n in self.systems:
                for m in self._messages(n):
                    if m.role == "system":
                        self._add_to_head(m)

    @property
    def tokens(self) -> int:
        return self.usage + self.trailing if self.usage else self.head.tokens + self.nonsys


def context_curve(
    tree: SessionTree, leaf: Node | None, cancelled: Callable[[], bool] | None = None
) -> list[CurvePoint]:
    """`build_context(tree, n).size.tokens` for every `n` on root → leaf, in one pass (O(path) plus the kept
    range of each compaction). `cancelled`, asked every CHECK_EVERY entries, stops it early (a partial curve)."""
    path = tree.branch(leaf if leaf is not None else tree.leaf)
    position: dict[str, int] = {}
    state = _State()
    points = []
    for i, node in enumerate(path):
        if cancelled is not None and not i % CHECK_EVERY and cancelled():
            break
        position.setdefault(node.id, i)
        if node.type == "compaction":
            state = _restart(path, i, node, position)
        elif node.type == "context_edit":
            state.edit(node)
        else:
            state.take(node)
        points.append(CurvePoint(node, state.tokens, node.type == "compaction"))
    return points


def _restart(path: list[Node], cut: int, compaction: Node, position: dict[str, int]) -> _State:
    """The state right after `compaction`: itself, then its kept range without system messages."""
    state = _State()
    first_kept = compaction.meta.get("firstKeptEntryId") if compaction.meta else None
    start = position.get(first_kept) if isinstance(first_kept, str) else None
    kept = [] if start is None or start >= cut else path[start:cut]
    kept = [n for n in kept if not (n.type == "message" and n.role == "system")]
    for node in kept:  # edits first: Pi maps every selected edit before projecting
        if node.type == "context_edit" and node.meta is not None and isinstance(node.meta.get("targetId"), str):
            state.edits[node.meta["targetId"]] = node
    state.take(compaction)
    for node in kept:
        state.take(node, contributes=node.type != "compaction")
    state.usage = state.trailing = 0  # everything kept comes before the compaction
    return state
