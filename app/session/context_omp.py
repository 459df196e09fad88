"""What oh-my-pi sends the model at a leaf: its `buildSessionContext` (session-context.ts, 18.x), over nodes.

Where it differs from Pi's (`context.build_context` calls this for a tree in omp's dialect):
- model: the `model_change` entries by role; the default role's is the session model, and once an explicit
  default is on the path, assistants no longer set it; thinking `null` is off;
- a `reset_boundary` (`/clear`) after the last compaction: only the entries after it;
- a compaction's kept range starts at `firstKeptEntryId`, or when that is `""` after
  `providerReplayThroughEntryId`; an OpenAI remote compaction (`preserveData.openaiRemoteCompaction`) replaces
  the kept range (only what follows `providerReplayThroughEntryId` is replayed);
- left out: assistants marked `retryRecovery`, empty error turns, prewalk-plan and vibe-mode custom messages;
  then tool calls without a result on the path (a turn left empty goes), then aborted and errored turns with
  their tool results (unless an interrupted-thinking note follows).
Pure: the path comes as nodes; `context.py` wraps the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pitree.session.dialect_omp import INTERRUPTED_THINKING, SKIPPED_CUSTOM, split_model
from pitree.session.entries import Node
from pitree.session.text import count, js_string


@dataclass
class OmpContext:
    messages: list[tuple[str, Node]] = field(default_factory=list)
    model: dict[str, Any] | None = None
    models: dict[str, Any] = field(default_factory=dict)  # role -> "provider/id"
    thinking_level: Any = "off"
    compaction: Node | None = None
    kept_from: Node | None = None
    notes: list[str] = field(default_factory=list)  # what omp's rules left out, for the context view


def _omp(node: Node) -> dict[str, Any]:
    meta = node.meta
    facts = meta.get("omp") if meta else None
    return facts if isinstance(facts, dict) else {}


def _message(node: Node, out: OmpContext) -> None:
    ntype = node.type
    if ntype == "message":
        if node.role == "assistant" and _omp(node).get("drop"):
            out.notes.append(f"{node.id}: retry-recovery or empty error turn left out")
            return
        out.messages.append((node.role or "unknown", node))
    elif ntype == "custom_message":
        custom = node.meta.get("customType") if node.meta else None
        if isinstance(custom, str) and custom in SKIPPED_CUSTOM:
            out.notes.append(f"{node.id}: {custom} message left out")
            return
        out.messages.append(("custom", node))
    elif ntype == "branch_summary" and node.meta and node.meta.get("hasSummary"):
        out.messages.append(("branchSummary", node))


def _settings(path: list[Node], out: OmpContext) -> None:
    explicit_default = False
    for node in path:
        meta = node.meta
        if node.type == "thinking_level_change" and meta is not None:
            level = meta.get("thinkingLevel")
            out.thinking_level = "off" if level is None else level
        elif node.type == "model_change" and meta is not None and meta.get("model"):
            role = meta.get("role") or "default"
            out.models[role if isinstance(role, str) else js_string(role)] = meta.get("model")
            explicit_default = explicit_default or role == "default"
        elif node.type == "message" and node.role == "assistant" and not explicit_default:
            provider, model_id = node.model or (None, None)
            out.models["default"] = f"{provider}/{model_id}"
        elif node.type == "compaction":
            out.compaction = node
    default = out.models.get("default")
    if default is not None:
        provider, model_id = split_model(default)
        out.model = {"provider": provider, "modelId": model_id}


def _emit_compacted(path: list[Node], compaction: Node, out: OmpContext) -> None:
    meta = compaction.meta or {}
    out.messages.append(("compactionSummary", compaction))
    cut = path.index(compaction)
    first_kept, replay = meta.get("firstKeptEntryId"), meta.get("providerReplayThroughEntryId")
    ids = [n.id for n in path[:cut]]
    if meta.get("remote"):
        start = ids.index(replay) + 1 if replay in ids else cut
        out.notes.append("kept range replaced by the OpenAI remote compaction payload")
    elif first_kept in ids:
        start = ids.index(first_kept)
    elif first_kept == "" and replay in ids:
        start = ids.index(replay) + 1
    else:
        start = cut
    if start < cut:
        out.kept_from = path[start]
    for node in path[start:cut]:
        _message(node, out)
    for node in path[cut + 1 :]:
        _message(node, out)


def _strip_unpaired_calls(out: OmpContext) -> None:
    paired = {n.call_id for role, n in out.messages if role == "toolResult" and isinstance(n.call_id, str)}
    kept: list[tuple[str, Node]] = []
    for role, node in out.messages:
        if role == "assistant" and node.calls:
            unpaired = [c for c in node.calls if not (isinstance(c[0], str) and c[0] in paired)]
            if unpaired:
                if not _omp(node).get("others"):
                    out.notes.append(f"{node.id}: only tool calls without results, left out")
                    continue
                out.notes.append(f"{node.id}: {count(len(unpaired), 'tool call')} without a result removed")
        kept.append((role, node))
    out.messages = kept


def _drop_failed_turns(out: OmpContext) -> None:
    msgs = out.messages
    i = len(msgs) - 1
    while i >= 0:
        role, node = msgs[i]
        if role == "assistant" and _omp(node).get("failed"):
            after = msgs[i + 1][1] if i + 1 < len(msgs) else None
            custom = after.meta.get("customType") if after is not None and after.meta else None
            if not (after is not None and after.type == "custom_message" and custom == INTERRUPTED_THINKING):
                calls = {c[0] for c in node.calls or () if isinstance(c[0], str)}
                del msgs[i]
                out.notes.append(f"{node.id}: aborted or errored turn left out")
                if calls:
                    msgs[i:] = [
                        (r, n)
                        for r, n in msgs[i:]
                        if not (r == "toolResult" and isinstance(n.call_id, str) and n.call_id in calls)
                    ]
        i -= 1


def omp_context(path: list[Node]) -> OmpContext:
    """omp's context for the path root -> leaf (the caller walked it; the tree already broke any cycle)."""
    out = OmpContext()
    _settings(path, out)
    compaction = out.compaction
    cut = path.index(compaction) if compaction is not None else -1
    reset = max((i for i, n in enumerate(path) if n.type == "reset_boundary"), default=-1)
    if reset >= 0 and reset > cut:
        out.notes.append(f"started after the reset boundary {path[reset].id} (/clear)")
        for node in path[reset + 1 :]:
            _message(node, out)
    elif compaction is not None:
        _emit_compacted(path, compaction, out)
    else:
        for node in path:
            _message(node, out)
    _strip_unpaired_calls(out)
    _drop_failed_turns(out)
    return out
