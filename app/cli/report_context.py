"""The context and compaction reports (`pitree context`, `pitree compactions`, the context view's counts, the
compaction audit) as JSON-ready dicts. `report` re-exports everything here.

Context messages are counted by tiktoken as the model reads them: after a context edit's replacement, after
Pi's convertToLlm, and a system message as its prompt text plus its tools' JSON. The total counts the
collapsed system head instead of the system messages one by one, as a request without mid-conversation
system messages carries them (pi-ai `collapseSystemMessages`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from pitree.session.context import ContextMessage, SessionContext, Settings, build_context, estimate_reason, kept_range
from pitree.session.context_near import near_context
from pitree.session.entries import Node
from pitree.session.system_prompt import current_system_message, system_message_text
from pitree.session.text import json_compact
from pitree.session.tree import SessionTree
from pitree.store.session_file import EntryReader
from pitree.summary.prepare import convert_to_llm
from pitree.summary.tokens import count_message, count_text


def context_agent_message(entry: dict[str, Any], role: str) -> dict[str, Any]:
    """The agent message a context entry becomes (before convertToLlm), without edits."""
    etype = entry.get("type")
    if etype == "message" and isinstance(entry.get("message"), dict):
        return entry["message"]
    if etype == "custom_message":
        return {"role": "custom", "content": entry.get("content")}
    if etype == "compaction" and role == "system" and isinstance(entry.get("systemMessage"), dict):
        return entry["systemMessage"]  # type: ignore[no-any-return]
    return {"role": role, "summary": entry.get("summary")}


def projected_messages(reader: EntryReader, messages: list[ContextMessage]) -> list[dict[str, Any]]:
    """The messages as Pi's projection holds them: null content tolerated, edits' replacements applied."""
    entries = reader.entries([m.node for m in messages])
    edited = [m.edit for m in messages if m.edit is not None]
    edits = {id(n): e for n, e in zip(edited, reader.entries(edited), strict=True)} if edited else {}
    out = []
    for m, entry in zip(messages, entries, strict=True):
        msg = dict(context_agent_message(entry, m.role))
        if msg.get("content") is None and m.role in ("system", "user", "assistant", "toolResult"):
            msg["content"] = "" if m.role == "system" else []
        if m.edit is not None:
            replacement = edits[id(m.edit)].get("replacement")
            content = replacement.get("content") if isinstance(replacement, dict) else None
            if m.role in ("assistant", "toolResult") and isinstance(content, str):
                content = [{"type": "text", "text": content}]
            msg["content"] = content
        out.append(msg)
    return out


def _count(message: dict[str, Any]) -> int:
    if message.get("role") == "system":
        tools = message.get("toolsAdded")
        return count_text(system_message_text(message)) + (count_text(json_compact(tools)) if tools else 0)
    return sum(count_message(m) for m in convert_to_llm([message]))


COUNT_BATCH = 512  # messages read from the file at a time: the 70,000 of a 1M-entry context held ~250 MB at once


def tiktoken_counts(reader: EntryReader, ctx: SessionContext) -> list[int]:
    """cl100k tokens per context message, as the model reads it (after Pi's convertToLlm)."""
    messages = ctx.messages
    counts: list[int] = []
    for start in range(0, len(messages), COUNT_BATCH):
        counts.extend(_count(m) for m in projected_messages(reader, messages[start : start + COUNT_BATCH]))
    return counts


def system_head(reader: EntryReader, ctx: SessionContext) -> dict[str, Any] | None:
    """The collapsed system head (pi-ai getCurrentSystemMessage) of the context, read from the file."""
    sources = [m for m in ctx.messages if m.role == "system"]
    return current_system_message(projected_messages(reader, sources)) if sources else None


def head_tiktoken(reader: EntryReader, ctx: SessionContext) -> int | None:
    """cl100k tokens of the collapsed system head (its prompt text and its tools' JSON); None without one."""
    head = system_head(reader, ctx)
    return _count(head) if head is not None else None


def context_report(tree: SessionTree, reader: EntryReader | None, leaf: Node | None) -> dict[str, Any]:
    ctx = build_context(tree, leaf)
    counts = tiktoken_counts(reader, ctx) if reader is not None else None
    messages = []
    for i, m in enumerate(ctx.messages):
        item: dict[str, Any] = {
            "role": m.role,
            "entryId": m.node.id,
            "tokens": m.tokens,
            "sourceEntryId": m.node.id,
            "editedBy": m.edit.id if m.edit is not None else None,
        }
        if m.checkpoint:
            item["checkpoint"] = True
        if counts is not None:
            item["tiktoken"] = counts[i]
        if m.excluded:
            item["excludeFromContext"] = True
        messages.append(item)
    system: dict[str, Any] | None = None
    if ctx.head.exists:
        system = {"tokens": ctx.head.tokens, "sourceEntryIds": [m.node.id for m in ctx.head.sources]}
        head = system_head(reader, ctx) if reader is not None else None
        if head is not None:
            system["sections"] = list(head.get("sections", {}))
            system["tools"] = [t.get("name") if isinstance(t, dict) else None for t in head.get("toolsAdded", [])]
            system["tiktoken"] = _count(head) if counts is not None else None
    tiktoken = None
    if counts is not None:
        sent = sum(c for c, m in zip(counts, ctx.messages, strict=True) if m.role != "system" and not m.excluded)
        tiktoken = sent + (system.get("tiktoken") or 0 if system is not None else 0)
    return {
        "leaf": ctx.leaf.id if ctx.leaf else None,
        "path": [n.id for n in ctx.path],
        "model": ctx.model,
        "thinkingLevel": ctx.thinking_level,
        "dialect": ctx.dialect,  # whose rules built the list: "pi", or "omp" (oh-my-pi's)
        "notes": ctx.notes,  # what those rules left out where they differ from Pi's
        "messages": messages,
        "system": system,
        "omitted": [{"entryId": p.node.id, "editedBy": p.edit.id} for p in ctx.omitted if p.edit is not None],
        "droppedSystem": [n.id for n in ctx.dropped_system],
        "compaction": ctx.compaction.id if ctx.compaction is not None else None,
        "retainNone": ctx.retain_none,
        "size": {**ctx.size.as_dict(), "estimateReason": estimate_reason(ctx) if ctx.size.usage_node is None else None},
        "tokens": {"estimate": ctx.tokens, "tiktoken": tiktoken},
    }


@dataclass
class CompactionSplit:
    """The context just before a compaction, split into what the summary replaced and what it kept."""

    before: SessionContext | None  # None: the compaction is a root
    summarized: list[ContextMessage]
    kept: list[ContextMessage]
    first_kept_on_path: bool
    dropped: list[ContextMessage]  # system messages: not kept; the compaction's checkpoint replays them
    after: SessionContext  # the context with the compaction as the leaf (both: `path` only the part Pi reads)
    retain_none: bool  # firstKeptEntryId is the compaction's own id: nothing kept, on purpose


# The tree view's marks and the entry pane's audit ask for the same compaction's split at once, each in a thread
# in a big session: the second waits for the first and takes its result.
_split_lock = threading.Lock()


def compaction_split(tree: SessionTree, node: Node, found: Settings | None = None) -> CompactionSplit:
    """Messages before `firstKeptEntryId` (and an earlier compaction's summary) were summarized; the rest kept,
    except system messages, which the compaction drops (Pi 1.x). The last one made is kept on the tree until it
    changes or `forget_split` (two contexts: the explorer drops it when the cursor leaves the compaction).
    `found`: the settings earlier splits found (`context_near.Settings`), when many compactions are split."""
    with _split_lock:
        last = tree.memo.get("compaction_split")
        if last is not None and last[0] is node and last[1] == tree.generation:
            return last[2]  # type: ignore[no-any-return]
        split = _split(tree, node, found or Settings())
        tree.memo["compaction_split"] = (node, tree.generation, split)
        return split


def forget_split(tree: SessionTree, node: Node | None = None) -> None:
    """Drop the split kept by `compaction_split`, unless it is `node`'s."""
    with _split_lock:
        last = tree.memo.get("compaction_split")
        if last is not None and last[0] is not node:
            del tree.memo["compaction_split"]


def _split(tree: SessionTree, node: Node, found: Settings) -> CompactionSplit:
    meta = node.meta or {}
    first_kept = meta.get("firstKeptEntryId")
    before = near_context(tree, node.parent, found) if node.parent is not None else None
    after = near_context(tree, node, found)
    if after.dialect == "omp" and after.kept_from is not None:  # "" keeps from after providerReplayThroughEntryId
        first_kept = after.kept_from.id
    above = kept_range(node, first_kept)
    kept_ids = {n.id for n in above} if above is not None else None
    summarized, kept, dropped = [], [], []
    if before is not None:
        for m in before.messages:
            if m.role == "system":
                dropped.append(m)
            elif m.role == "compactionSummary" or kept_ids is None or m.node.id not in kept_ids:
                summarized.append(m)
            else:
                kept.append(m)
    return CompactionSplit(before, summarized, kept, kept_ids is not None, dropped, after, first_kept == node.id)


def _on_active_path(tree: SessionTree, node: Node) -> bool:
    """`node.id in tree.active_ids()`, walking up from the leaf without making the set."""
    above = tree.leaf
    while above is not None and above.id != node.id:
        above = above.parent
    return above is not None


def _usage_dict(node: Node) -> dict[str, Any] | None:
    usage = node.usage
    if usage is None:
        return None
    parts = dict(zip(("input", "output", "cacheRead", "cacheWrite"), usage[:4], strict=True))
    return {**parts, "tokens": sum(usage[:4]), "cost": usage[5]}


def _problems(tree: SessionTree, node: Node, split: CompactionSplit) -> list[str]:
    meta = node.meta or {}
    first_kept, tokens_before = meta.get("firstKeptEntryId"), meta.get("tokensBefore")
    if split.after.dialect == "omp" and split.after.kept_from is not None:  # oh-my-pi's effective first kept
        first_kept = split.after.kept_from.id
    before, problems = split.before, []
    if not isinstance(first_kept, str):
        problems.append("firstKeptEntryId is missing")
    elif split.retain_none:
        pass  # Pi 1.x's retain-none compaction: nothing kept, as intended
    elif first_kept not in tree.by_id:
        problems.append(f"first kept entry {first_kept} is not in the file: nothing before the compaction is kept")
    elif not split.first_kept_on_path:
        problems.append(f"first kept entry {first_kept} is not on this compaction's path: nothing is kept")
    if not (meta.get("summary") or "").strip():
        problems.append("summary is empty")
    if not isinstance(tokens_before, int | float) or isinstance(tokens_before, bool):
        problems.append("tokensBefore is not a number")
    elif before is not None and before.size.tokens and tokens_before < (before.size.tokens - node.est) * 0.5:
        problems.append(
            f"tokensBefore ({tokens_before}) is under half of Pi's estimate of the context it replaced "
            f"({before.size.tokens})"
        )
    return problems


def after_parts(audit: dict[str, Any]) -> str:
    """What a compaction audit's tokens after add up: the checkpoint (Pi 1.x systemMessage) when there is one."""
    parts = (["checkpoint"] if audit.get("checkpoint") is not None else []) + ["summary"]
    return " + ".join(parts) + ("; nothing kept (retain-none)" if audit.get("retainNone") else " + kept")


def compaction_audit(
    tree: SessionTree,
    node: Node,
    reader: EntryReader | None,
    exact: bool = True,
    active: set[str] | None = None,
    found: Settings | None = None,
) -> dict[str, Any]:
    """What one compaction summarized, what it kept, what it dropped and replayed (Pi 1.x system messages and
    its checkpoint), what it cost, and the tokens before and after it. Without a `reader` the entry is not read
    (no file lists, no checkpoint names) and nothing is counted by tiktoken; `exact=False` reads it but leaves
    the tiktoken counts out too (None). `active`: the ids on the active path (its compactions' are enough), and
    `found` the settings found so far (`context.Settings`), when many compactions are audited."""
    exact = exact and reader is not None
    meta = node.meta or {}
    split = compaction_split(tree, node, found)
    before, summarized, kept, after = split.before, split.summarized, split.kept, split.after
    summary = meta.get("summary") or ""
    kept_tokens = sum(m.tokens for m in kept if not m.excluded)
    check = meta.get("checkpoint")
    checkpoint: dict[str, Any] | None = None
    if check is not None:
        checkpoint = {"role": check[0], "tokens": check[1], "sections": None, "tools": None, "tiktoken": None}
    result: dict[str, Any] = {
        "id": node.id,
        "line": node.line,
        "tokensBefore": meta.get("tokensBefore"),
        "sizeBefore": before.size.tokens if before is not None else 0,  # Pi's estimateProjectedContextTokens
        "summary": summary,
        "firstKeptEntryId": meta.get("firstKeptEntryId"),
        "firstKeptOnPath": split.first_kept_on_path,
        "retainNone": split.retain_none,
        "summarized": {"entries": len(summarized), "tokens": sum(m.tokens for m in summarized)},
        "kept": {"entries": len(kept), "tokens": kept_tokens},
        "droppedSystem": {
            "entries": len(split.dropped),
            "ids": [m.node.id for m in split.dropped],
            "tokens": sum(m.tokens for m in split.dropped),
        },
        "checkpoint": checkpoint,
        "usage": _usage_dict(node),
        "summaryTokens": {"estimate": node.est, "tiktoken": count_text(summary) if exact else None},
        "tokensAfter": {"estimate": after.tokens},
        "readFiles": [],
        "modifiedFiles": [],
        "onActivePath": node.id in active if active is not None else _on_active_path(tree, node),
        "problems": _problems(tree, node, split),
    }
    if reader is not None:
        entry = reader.entry(node)
        details = entry.get("details")
        if isinstance(details, dict):
            result["readFiles"] = [f for f in details.get("readFiles") or [] if isinstance(f, str)]
            result["modifiedFiles"] = [f for f in details.get("modifiedFiles") or [] if isinstance(f, str)]
        system = entry.get("systemMessage")
        if checkpoint is not None and isinstance(system, dict):
            sections, tools = system.get("sections"), system.get("toolsAdded")
            sections = sections if isinstance(sections, dict) else {}
            checkpoint["sections"] = [k for k, v in sections.items() if v is not None]
            tools = tools if isinstance(tools, list) else []
            checkpoint["tools"] = [t.get("name") for t in tools if isinstance(t, dict)]
            if exact:
                checkpoint["tiktoken"] = _count(system)
    if exact:
        assert reader is not None
        counted = [m for m in after.messages if m.node is not node and not m.excluded and m.role != "system"]
        part = SessionContext(leaf=None, path=[], messages=counted)
        head = system_head(reader, after)
        result["tokensAfter"]["tiktoken"] = (
            result["summaryTokens"]["tiktoken"] + sum(tiktoken_counts(reader, part)) + (_count(head) if head else 0)
        )
    return result


def compactions_report(tree: SessionTree, reader: EntryReader | None) -> dict[str, Any]:
    comps = [n for n in tree.nodes if n.type == "compaction" and not tree.is_dropped(n)]
    # the compactions on the active path (a set of every id on it held ~60 MB at 1M entries)
    active = {n.id for n in tree.active_path() if n.type == "compaction"}
    found = Settings()  # in file order: each settings walk stops at the compaction audited before
    return {"compactions": [compaction_audit(tree, n, reader, active=active, found=found) for n in comps]}
