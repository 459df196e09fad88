"""`context_size`: Pi's context size at a leaf (`build_context(tree, leaf).size`) without building the context,
when a reply's usage sizes it — the common case, and what the status bar asks after every jump and at every open.

Pi's `estimateProjectedContextTokens` takes the last valid assistant usage and adds the estimates of the messages
after it, if that reply comes after the last context edit or compaction of the path. Walking back from the leaf,
that reply is the first one met with a usage before any edit or compaction; the messages after it are those of
the entries walked, each under the last edit that targets it among the selected entries (Pi maps them all, even
those written before the reply). Those edits are gathered first, by walking back over the selected entries and
reading only their types. No list of the path, no message objects: building the context at the end of a
1,000,000-entry session held ~20 MB for a moment, and in a thread beside the UI that memory stayed taken.
Otherwise (no such reply, oh-my-pi's rules) it is `build_context`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pitree.session.context import (
    ContextSize,
    SessionContext,
    build_context,
    edits_of,
    kept_range,
    project,
    select,
    settings,
    usage_tokens,
)
from pitree.session.dialect_omp import OMP
from pitree.session.entries import Node
from pitree.session.tree import SessionTree


def context_size(tree: SessionTree, leaf: Node | None) -> ContextSize:
    """`build_context(tree, leaf).size` (None: the file's leaf)."""
    if leaf is None:
        leaf = tree.leaf
    if leaf is None or tree.dialect == OMP:
        return build_context(tree, leaf).size
    edits = _selected_edits(leaf)
    targets = frozenset(edits)
    trailing = 0
    node: Node | None = leaf
    while node is not None:
        ntype = node.type
        if ntype == "context_edit" or ntype == "compaction":
            break  # the last edit or compaction comes after every reply's usage: an estimate
        messages = project(node, edits.get(node.id))
        if messages and node.role == "assistant":
            used = usage_tokens(node)
            if used:
                return ContextSize(used + trailing, used, trailing, node, targets)
        trailing += sum(m.tokens for m in messages)
        node = node.parent
    return build_context(tree, leaf).size


def _selected_edits(leaf: Node) -> dict[str, Node]:
    """The last context edit per target among the entries Pi selects at `leaf` (`context.select`): those after
    the last compaction, it, and its kept range; the whole path when there is no compaction."""
    edits: dict[str, Node] = {}
    node: Node | None = leaf
    while node is not None and node.type != "compaction":
        _take(edits, node)
        node = node.parent
    if node is None:
        return edits
    for above in kept_range(node, node.meta.get("firstKeptEntryId") if node.meta else None) or ():
        _take(edits, above)  # after the edits below the compaction: theirs come later on the path
    return edits


def _take(edits: dict[str, Node], node: Node) -> None:
    """Walking back, the first edit met per target is the last one on the path."""
    if node.type == "context_edit" and node.meta is not None:
        target = node.meta.get("targetId")
        if isinstance(target, str):
            edits.setdefault(target, node)


@dataclass
class ContextHeader:
    """What a one-line description of the context at a leaf says: `build_context`'s message count, model,
    thinking level and size."""

    messages: int
    model: dict[str, Any] | None
    thinking_level: Any
    size: ContextSize


def context_header(tree: SessionTree, leaf: Node | None, path: list[Node]) -> ContextHeader:
    """`build_context(tree, leaf)`'s message count, model, thinking level and size, for `path` (root -> leaf),
    without keeping a message: at the end of a million-entry session the context's ~70,000 messages held ~50 MB
    (an export's header asked it)."""
    if leaf is None or tree.dialect == OMP:
        ctx = build_context(tree, leaf)
        return ContextHeader(len(ctx.messages), ctx.model, ctx.thinking_level, ctx.size)
    head = SessionContext(leaf=leaf, path=path)
    settings(head, path)
    selected = select(path)[0]
    edits = edits_of(selected)
    count = sum(
        len(project(node, edits.get(node.id))) for i, node in enumerate(selected) if node.type != "compaction" or i == 0
    )
    return ContextHeader(count, head.model, head.thinking_level, context_size(tree, leaf))
