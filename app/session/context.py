"""What the model is sent at a leaf: Pi 1.6's `buildSessionProjection` over the compact nodes, and the context
size by its `estimateProjectedContextTokens` (SPEC-pi1 A3, A4).

Walk root -> leaf; model = last model_change or assistant provider/model; thinking level = last change ("off").
Only the last compaction on the path counts: it comes first (its `systemMessage` checkpoint, then its summary),
then the path entries from its firstKeptEntryId up to it **without system messages** (nothing when that id is
not on the path before it, as in a retain-none compaction), then everything after it. An older compaction in
that range contributes nothing. Context edits: the last `context_edit` per target among the selected entries
applies: `null` omits the entry, else the content of its user/assistant/toolResult/custom message is replaced.
Each message keeps its source entry and the edit that changed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pitree.session.context_omp import omp_context
from pitree.session.dialect_omp import OMP
from pitree.session.entries import NO_CONTEXT_USAGE, Node
from pitree.session.estimate import SystemFacts, SystemHead
from pitree.session.text import js_string
from pitree.session.tree import SessionTree

REPLACEABLE = frozenset({"user", "assistant", "toolResult", "custom"})  # roles whose content an edit replaces


@dataclass(frozen=True, slots=True)
class ContextMessage:
    """One message of the context and the entry it comes from."""

    role: str
    node: Node
    tokens: int  # Pi's chars/4 estimate of the message as projected (after its edit)
    edit: Node | None = None  # the context_edit whose replacement this message carries
    checkpoint: bool = False  # the compaction's `systemMessage` (node is the compaction)

    @property
    def excluded(self) -> bool:
        """A `!!cmd` bash execution: in Pi's context list, dropped by convertToLlm before sending."""
        return bool(self.node.meta and self.node.meta.get("excludeFromContext"))

    @property
    def facts(self) -> SystemFacts | None:
        """The system message's facts for the collapsed head; None for other roles."""
        if self.role != "system" or self.node.meta is None:
            return None
        if self.checkpoint:
            return self.node.meta["checkpoint"][2]  # type: ignore[no-any-return]
        return self.node.meta.get("system")


@dataclass(frozen=True, slots=True)
class ContextSize:
    """Pi's `estimateProjectedContextTokens`: the last valid assistant usage plus the estimates of the messages
    after it, when that reply comes after the last context_edit or compaction on the branch; else the collapsed
    system head plus every non-system message. `targets`: ids that a context edit names (for `grown_size`)."""

    tokens: int
    usage_tokens: int = 0
    trailing_tokens: int = 0
    usage_node: Node | None = None
    targets: frozenset[str] = frozenset()

    def as_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "usageTokens": self.usage_tokens,
            "trailingTokens": self.trailing_tokens,
            "usageEntryId": self.usage_node.id if self.usage_node is not None else None,
        }


@dataclass(slots=True)
class Projected:
    """Pi's projection entry: a selected entry, its messages, and the edit that applies to it (if any)."""

    node: Node
    messages: list[ContextMessage]
    edit: Node | None


@dataclass
class SessionContext:
    leaf: Node | None
    path: list[Node]
    messages: list[ContextMessage] = field(default_factory=list)
    model: dict[str, Any] | None = None
    thinking_level: Any = "off"
    compaction: Node | None = None
    kept_from: Node | None = None  # the compaction's first kept entry, when found on the path
    entries: list[Projected] = field(default_factory=list)
    dropped_system: list[Node] = field(default_factory=list)  # kept-range system messages the compaction drops
    head: SystemHead = field(default_factory=SystemHead)  # the collapsed system head (sources: ContextMessages)
    size: ContextSize = field(default_factory=lambda: ContextSize(0))
    dialect: str = "pi"  # whose rules built it: "pi", or "omp" (oh-my-pi's, `context_omp`)
    notes: list[str] = field(default_factory=list)  # what those rules left out, where they differ from Pi's

    @property
    def tokens(self) -> int:
        """What is sent, by Pi's estimate: the collapsed system head plus every other message (a `!!` bash
        execution is not sent and not counted)."""
        return self.head.tokens + sum(m.tokens for m in self.messages if m.role != "system" and not m.excluded)

    @property
    def omitted(self) -> list[Projected]:
        """Selected entries that an edit with a null replacement omits."""
        return [p for p in self.entries if p.edit is not None and _omits(p.edit)]

    @property
    def retain_none(self) -> bool:
        """The compaction kept nothing on purpose (Pi's `appendCompaction(…, null)`: firstKeptEntryId = own id)."""
        c = self.compaction
        return c is not None and c.meta is not None and c.meta.get("firstKeptEntryId") == c.id


def _omits(edit: Node) -> bool:
    return bool(edit.meta and edit.meta.get("omit"))


def project(node: Node, edit: Node | None) -> list[ContextMessage]:
    """Pi's projectContextEntry: the messages an entry gives, with its edit applied."""
    if edit is not None and _omits(edit):
        return []
    ntype = node.type
    if ntype == "message":
        msg = ContextMessage(node.role or "unknown", node, node.est)
    elif ntype == "custom_message":
        msg = ContextMessage("custom", node, node.est)
    elif ntype == "branch_summary" and node.meta and node.meta.get("hasSummary"):
        return [ContextMessage("branchSummary", node, node.est)]
    elif ntype == "compaction":
        summary = ContextMessage("compactionSummary", node, node.est)
        checkpoint = node.meta.get("checkpoint") if node.meta else None
        if checkpoint is None:
            return [summary]
        return [ContextMessage(checkpoint[0], node, checkpoint[1], checkpoint=True), summary]
    else:
        return []
    if edit is not None and msg.role in REPLACEABLE and edit.meta is not None:
        est = edit.meta["est"]
        return [ContextMessage(msg.role, node, est[1] if msg.role == "assistant" else est[0], edit=edit)]
    return [msg]


def usage_tokens(node: Node) -> int:
    """Pi's calculateContextTokens of an assistant reply that may size the context (0: it may not):
    `totalTokens`, else the sum of the four parts; aborted and errored replies never count."""
    usage = node.usage
    if usage is None or node.flags & NO_CONTEXT_USAGE or node.role != "assistant":
        return 0
    tokens = usage.total_tokens or usage.tokens
    return _int(tokens) if tokens > 0 else 0


def _int(value: float) -> int:
    return int(value) if value == value and abs(value) < 2**63 else 0


def select(path: list[Node]) -> tuple[list[Node], Node | None, Node | None, list[Node]]:
    """Pi's buildContextEntries: (the selected entries, the last compaction, its first kept entry, the system
    messages of the kept range that it drops)."""
    # Both searches walk back from the leaf and stop: no id repeats on a path (a repeated id's later line replaces
    # the earlier one in the tree), so the nearest first kept entry is Pi's, the first from the root.
    cut = len(path) - 1
    while cut >= 0 and path[cut].type != "compaction":
        cut -= 1
    if cut < 0:
        return path, None, None, []
    compaction = path[cut]
    first_kept = compaction.meta.get("firstKeptEntryId") if compaction.meta else None
    start = cut - 1
    while start >= 0 and path[start].id != first_kept:
        start -= 1
    selected, dropped = [compaction], []
    for node in path[start:cut] if start >= 0 else ():
        if node.type == "message" and node.role == "system":
            dropped.append(node)
        else:
            selected.append(node)
    selected.extend(path[cut + 1 :])
    return selected, compaction, path[start] if start >= 0 else None, dropped


def edits_of(selected: list[Node]) -> dict[str, Node]:
    """The last context_edit per target id among the selected entries."""
    edits: dict[str, Node] = {}
    for node in selected:
        if node.type == "context_edit" and node.meta is not None:
            target = node.meta.get("targetId")
            if isinstance(target, str):
                edits[target] = node
    return edits


def build_context(tree: SessionTree, leaf: Node | None) -> SessionContext:
    """Pi's buildSessionProjection(entries, leafId) and its context size. `leaf=None`: the file's leaf."""
    if leaf is None:
        leaf = tree.leaf
    path = tree.branch(leaf)
    ctx = SessionContext(leaf=leaf, path=path)
    if tree.dialect == OMP:
        return _omp(ctx)
    return _project(ctx, path)


def tokens_after(tree: SessionTree, compaction: Node) -> int:
    """What is sent right after `compaction` by Pi's estimate (its checkpoint, summary and kept range):
    `build_context(tree, compaction).tokens`, reading only the kept range above it (see `select`; by oh-my-pi's
    rules, the whole build). A tree row per compaction shows it: a walk to the root each was a second at 1M."""
    if tree.dialect == OMP:
        return build_context(tree, compaction).tokens
    path = kept_range(compaction, compaction.meta.get("firstKeptEntryId") if compaction.meta else None) or []
    path.reverse()
    path.append(compaction)
    return project_path(SessionContext(leaf=compaction, path=path), path).tokens  # the tokens: no settings walk


def kept_range(compaction: Node, first_kept: Any) -> list[Node] | None:
    """The entries above `compaction` from its parent up to its first kept entry, the one with id `first_kept`
    (newest first, that entry last); None when it is not above it (nothing kept). Walking up, the first entry
    with that id is the one (see `select`)."""
    if not isinstance(first_kept, str):
        return None
    kept: list[Node] = []
    node = compaction.parent
    while node is not None:
        kept.append(node)
        if node.id == first_kept:
            return kept
        node = node.parent
    return None


def _project(ctx: SessionContext, path: list[Node]) -> SessionContext:
    settings(ctx, path)
    return project_path(ctx, path)


def project_path(ctx: SessionContext, path: list[Node]) -> SessionContext:
    """Fill `ctx` (its settings found already) with what Pi selects and projects from `path`, which ends at the
    leaf and may start anywhere above its last compaction's first kept entry (`context_near.near_path`)."""
    selected, ctx.compaction, ctx.kept_from, ctx.dropped_system = select(path)
    edits = edits_of(selected)
    messages = ctx.messages
    for i, node in enumerate(selected):
        edit = edits.get(node.id)
        projected = [] if node.type == "compaction" and i > 0 else project(node, edit)
        ctx.entries.append(Projected(node, projected, edit))
        messages.extend(projected)
    for m in messages:
        facts = m.facts
        if facts is not None:
            ctx.head.add(facts, m)
    ctx.size = _size(ctx, path, frozenset(edits))
    return ctx


def settings(ctx: SessionContext, path: list[Node]) -> None:
    """Pi's walk root -> leaf keeps the last thinking level change and the last model (a model change, or an
    assistant's provider/model): walking back from the leaf (`path`'s last entry), the first of each."""
    if path:
        Settings().find(ctx, path[-1])


# (thinking level found, it, model found, it): what `settings` finds walking back from an entry
_Found = tuple[bool, Any, bool, Any]


class Settings:
    """`settings` walking up from a leaf without reading the rest of the path; with the settings found at the
    leaves of earlier calls kept by entry, so that a walk up that meets one of them stops there (the audits of
    many compactions, `context_near`)."""

    def __init__(self) -> None:
        self.at: dict[int, tuple[Node, _Found]] = {}  # by id(): entries are compared by identity

    def find(self, ctx: SessionContext, leaf: Node) -> None:
        """Set `ctx.model` and `ctx.thinking_level` as found over root -> `leaf`."""
        thinking = model = False
        level: Any = "off"
        chosen: Any = None
        node: Node | None = leaf
        while node is not None and not (thinking and model):
            known = self.at.get(id(node))
            if known is not None and known[0] is node:
                found = known[1]
                if not thinking:
                    thinking, level = found[0], found[1]
                if not model:
                    model, chosen = found[2], found[3]
                break
            ntype = node.type
            if ntype == "thinking_level_change":
                meta = node.meta
                if not thinking and meta is not None:
                    level, thinking = meta.get("thinkingLevel"), True
            elif model:
                pass
            elif ntype == "model_change":
                meta = node.meta
                if meta is not None:
                    chosen, model = {"provider": meta.get("provider"), "modelId": meta.get("modelId")}, True
            elif ntype == "message" and node.role == "assistant":
                provider, model_id = node.model or (None, None)
                chosen, model = {"provider": provider, "modelId": model_id}, True
            node = node.parent
        self.at[id(leaf)] = (leaf, (thinking, level, model, chosen))
        if thinking:
            ctx.thinking_level = level
        if model:
            ctx.model = chosen


def _omp(ctx: SessionContext) -> SessionContext:
    """oh-my-pi's context (`context_omp`); its size is the messages' estimates (omp has no system messages
    or context edits, and sizes its context with a tokenizer of its own)."""
    omp = omp_context(ctx.path)
    ctx.messages = [ContextMessage(role, node, node.est) for role, node in omp.messages]
    for m in ctx.messages:
        ctx.entries.append(Projected(m.node, [m], None))
    ctx.model, ctx.thinking_level = omp.model, omp.thinking_level
    ctx.compaction, ctx.kept_from = omp.compaction, omp.kept_from
    ctx.dialect, ctx.notes = OMP, omp.notes
    tokens = sum(m.tokens for m in ctx.messages if not m.excluded)
    ctx.size = ContextSize(tokens, 0, tokens)
    return ctx


def _size(ctx: SessionContext, path: list[Node], targets: frozenset[str]) -> ContextSize:
    messages = ctx.messages
    for i in range(len(messages) - 1, -1, -1):
        used = usage_tokens(messages[i].node) if messages[i].role == "assistant" else 0
        if not used:
            continue
        source = messages[i].node
        invalidating = -1
        for j in range(len(path) - 1, -1, -1):
            if path[j].type == "context_edit" or path[j].type == "compaction":
                invalidating = j
                break
        if path.index(source) > invalidating:
            trailing = sum(m.tokens for m in messages[i + 1 :])
            return ContextSize(used + trailing, used, trailing, source, targets)
        break
    tokens = ctx.head.tokens + sum(m.tokens for m in messages if m.role != "system")
    return ContextSize(tokens, 0, tokens, None, targets)


def estimate_reason(ctx: SessionContext) -> str:
    """Why Pi's context size is an estimate here (no reply's usage sizes it), in words."""
    replies = [m.node for m in ctx.messages if m.role == "assistant"]
    valid = [n for n in replies if usage_tokens(n)]
    if valid:
        return f"the last valid usage ({valid[-1].id}) comes before the last context edit or compaction"
    if not replies:
        return "no reply in the context"
    why = [
        (sum(1 for n in replies if n.usage is None), "without usage"),
        (sum(1 for n in replies if n.usage is not None and n.flags & NO_CONTEXT_USAGE), "aborted or errored"),
    ]
    zero = len(replies) - why[0][0] - why[1][0]
    why.append((zero, "with zero usage"))
    shown = ", ".join(f"{n:,} {what}" for n, what in why if n)
    return f"no valid usage: {len(replies):,} {'reply' if len(replies) == 1 else 'replies'} ({shown})"


def grown_size(size: ContextSize, added: list[Node]) -> ContextSize | None:
    """The context size after `added` extended the leaf in a chain, from the size before; None when it must be
    computed again (`build_context`): a compaction or context edit, a system message that changes the head, or
    an entry that an earlier edit names."""
    for node in added:
        if node.type == "compaction" or node.type == "context_edit" or node.id in size.targets:
            return None
        messages = project(node, None)
        used = usage_tokens(node) if node.type == "message" and node.role == "assistant" else 0
        if used:
            size = ContextSize(used, used, 0, node, size.targets)
            continue
        if size.usage_node is None and any(m.role == "system" for m in messages):
            return None  # the head changes, and not by a sum
        more = sum(m.tokens for m in messages)
        size = ContextSize(
            size.tokens + more, size.usage_tokens, size.trailing_tokens + more, size.usage_node, size.targets
        )
    return size


def model_label(model: dict[str, Any] | None) -> str:
    if not model:
        return "unknown"
    return f"{js_string(model.get('provider'))}/{js_string(model.get('modelId'))}"
