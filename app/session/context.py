"""What the model is sent at a leaf: Pi's `buildSessionContext`, over the compact nodes.

Walk root -> leaf; model = last model_change or assistant provider/model; thinking level = last change
("off"); only the last compaction on the path counts: its summary first, then the path entries from its
firstKeptEntryId up to it (nothing if that id is not on the path before it), then everything after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .context_omp import omp_context
from .dialect_omp import OMP
from .entries import Node
from .text import js_string
from .tree import SessionTree


@dataclass(frozen=True, slots=True)
class ContextMessage:
    """One message of the context and the entry it comes from."""

    role: str
    node: Node
    tokens: int  # Pi's chars/4 estimate

    @property
    def excluded(self) -> bool:
        """A `!!cmd` bash execution: in Pi's context list, dropped by convertToLlm before sending."""
        return bool(self.node.meta and self.node.meta.get("excludeFromContext"))


@dataclass
class SessionContext:
    leaf: Node | None
    path: list[Node]
    messages: list[ContextMessage] = field(default_factory=list)
    model: dict[str, Any] | None = None
    thinking_level: Any = "off"
    compaction: Node | None = None
    kept_from: Node | None = None  # the compaction's first kept entry, when found on the path
    dialect: str = "pi"  # whose rules built it: "pi", or "omp" (oh-my-pi's, `context_omp`)
    notes: list[str] = field(default_factory=list)  # what those rules left out, when they differ from Pi's

    @property
    def tokens(self) -> int:
        return sum(m.tokens for m in self.messages if not m.excluded)


def _emit(node: Node) -> ContextMessage | None:
    if node.type == "message":
        return ContextMessage(node.role or "unknown", node, node.est)
    if node.type == "custom_message":
        return ContextMessage("custom", node, node.est)
    if node.type == "branch_summary" and node.meta and node.meta.get("hasSummary"):
        return ContextMessage("branchSummary", node, node.est)
    return None


def build_context(tree: SessionTree, leaf: Node | None) -> SessionContext:
    """Pi's buildSessionContext(entries, leafId). `leaf=None` means the file's leaf (the last entry)."""
    if leaf is None:
        leaf = tree.leaf
    path = tree.branch(leaf)
    ctx = SessionContext(leaf=leaf, path=path)
    if tree.dialect == OMP:
        omp = omp_context(path)
        ctx.messages = [ContextMessage(role, node, node.est) for role, node in omp.messages]
        ctx.model, ctx.thinking_level, ctx.compaction, ctx.kept_from = (
            omp.model,
            omp.thinking_level,
            omp.compaction,
            omp.kept_from,
        )
        ctx.dialect, ctx.notes = OMP, omp.notes
        return ctx
    compaction: Node | None = None
    for node in path:
        meta = node.meta
        if node.type == "thinking_level_change" and meta is not None:
            ctx.thinking_level = meta.get("thinkingLevel")
        elif node.type == "model_change" and meta is not None:
            ctx.model = {"provider": meta.get("provider"), "modelId": meta.get("modelId")}
        elif node.type == "message" and node.role == "assistant":
            provider, model_id = node.model or (None, None)
            ctx.model = {"provider": provider, "modelId": model_id}
        elif node.type == "compaction":
            compaction = node
    messages = ctx.messages
    if compaction is not None:
        ctx.compaction = compaction
        messages.append(ContextMessage("compactionSummary", compaction, compaction.est))
        cut = path.index(compaction)
        first_kept = compaction.meta.get("firstKeptEntryId") if compaction.meta else None
        found = False
        for node in path[:cut]:
            if node.id == first_kept:
                found = True
                ctx.kept_from = node
            if found:
                msg = _emit(node)
                if msg is not None:
                    messages.append(msg)
        for node in path[cut + 1 :]:
            msg = _emit(node)
            if msg is not None:
                messages.append(msg)
    else:
        for node in path:
            msg = _emit(node)
            if msg is not None:
                messages.append(msg)
    return ctx


def model_label(model: dict[str, Any] | None) -> str:
    if not model:
        return "unknown"
    return f"{js_string(model.get('provider'))}/{js_string(model.get('modelId'))}"


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """The context size (Pi's estimate) if the leaf were `node`: one point per entry of a path."""

    node: Node
    tokens: int
    compaction: bool  # `node` is a compaction: the size drops here


def context_curve(tree: SessionTree, leaf: Node | None) -> list[CurvePoint]:
    """`build_context(tree, n).tokens` for every `n` on root → leaf, in one pass (prefix sums, O(path)).

    The size grows by each emitted message; at a compaction it restarts from the summary plus the kept
    entries (firstKeptEntryId up to the compaction), exactly as `build_context` counts them.
    """
    path = tree.branch(leaf if leaf is not None else tree.leaf)
    sums = [0]  # sums[i] = tokens emitted by path[:i] as plain messages
    for node in path:
        msg = _emit(node)
        sums.append(sums[-1] + (msg.tokens if msg is not None and not msg.excluded else 0))
    position: dict[str, int] = {}
    base = 0  # tokens before `start` that the context holds (summary + kept)
    start = 0  # path index from which plain messages count
    points = []
    for i, node in enumerate(path):
        position.setdefault(node.id, i)
        is_compaction = node.type == "compaction"
        if is_compaction:
            first_kept = node.meta.get("firstKeptEntryId") if node.meta else None
            kept = position.get(first_kept) if isinstance(first_kept, str) else None
            base = node.est + (sums[i] - sums[kept] if kept is not None else 0)
            start = i + 1
        points.append(CurvePoint(node, base + sums[i + 1] - sums[start] if i >= start else base, is_compaction))
    return points


def grown_tokens(tokens: int, added: list[Node]) -> int | None:
    """The context size after `added` extended the leaf in a chain, from the size before: None when one of
    them is a compaction (the context restarts: use `build_context`)."""
    for node in added:
        if node.type == "compaction":
            return None
        msg = _emit(node)
        if msg is not None and not msg.excluded:
            tokens += msg.tokens
    return tokens
