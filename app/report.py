"""The data behind the scripting commands (`tree`, `context`, `compactions`, `info`) as JSON-ready dicts.

Shared by the CLI (which prints them) and the TUI (which shows the same numbers), so both always agree.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

import orjson

from .session.context import ContextMessage, SessionContext, build_context
from .session.entries import IS_ERROR, Node
from .session.layout import ActivePath, Layout, Row, RowStream, RowTuple
from .session.tree import SessionTree
from .session.usage import usage_report
from .store.session_file import EntryReader
from .summary.prepare import convert_to_llm
from .summary.tokens import count_message, count_text

_HEADER_KNOWN = {"type", "id", "version", "cwd", "timestamp", "parentSession"}


def session_header(tree: SessionTree) -> dict[str, Any]:
    h = tree.header or {}
    out = {
        "id": h.get("id"),
        "version": h.get("version"),
        "cwd": h.get("cwd"),
        "name": tree.name,
        "parentSession": h.get("parentSession"),
    }
    if tree.dialect != "pi":  # oh-my-pi: say so, with its header's extra fields and the title slot
        out["agent"] = tree.dialect
        out["extras"] = {k: v for k, v in h.items() if k not in _HEADER_KNOWN}
        out["titleSlot"] = tree.title_slot and {k: v for k, v in tree.title_slot.items() if k != "pad"}
    return out


def skipped_list(tree: SessionTree) -> list[dict[str, Any]]:
    return [{"line": s.line, "reason": s.reason} for s in tree.skipped]


def problems_list(tree: SessionTree) -> list[dict[str, Any]]:
    return [{"line": p.line, "message": p.message} for p in tree.problems]


def _rows(tree: SessionTree, rows: Iterable[Row | RowTuple], active: ActivePath) -> list[dict[str, Any]]:
    """The JSON rows. Inlined (`SessionTree.row_text`, `ActivePath`): this runs once per row of the session."""
    row_text, on = tree.row_text, active.mask()
    last = len(on)
    out = []
    for row in rows:
        node = row[0]
        parent = node.parent
        role = node.role
        idx = node.idx
        out.append(
            {
                "id": node.id,
                "parentId": parent.id if parent is not None else None,
                "type": node.type,
                "role": role,
                "text": row_text(node) if role == "toolResult" else node.text,
                "depth": row[1],
                "onActivePath": idx < last and on[idx] == 1,
            }
        )
    return out


def _tree_head(tree: SessionTree, layout: Layout | RowStream) -> dict[str, Any]:
    leaf = tree.leaf
    return {
        "session": session_header(tree),
        "entries": tree.entry_count,
        "skipped": skipped_list(tree),
        "problems": problems_list(tree),
        "leaf": leaf.id if leaf else None,
        "roots": [r.id for r in tree.roots],
        "labels": dict(tree.labels),
        "filter": layout.mode,
        "search": layout.query or None,
    }


def tree_report(tree: SessionTree, layout: Layout) -> dict[str, Any]:
    """`pitree tree --json` as one dict (`rows` in display order)."""
    return {**_tree_head(tree, layout), "rows": _rows(tree, layout.rows, layout.active)}


def tree_report_json(tree: SessionTree, layout: Layout | RowStream, chunk: int = 5000) -> Iterator[bytes]:
    """The same JSON as `tree_report`, in pieces of `chunk` rows, so the output never exists whole in memory
    (and, from a `RowStream`, neither does the row list)."""
    head = orjson.dumps({**_tree_head(tree, layout), "rows": []}, option=orjson.OPT_NON_STR_KEYS)
    assert head.endswith(b"[]}")
    yield head[:-2]
    rows = iter(layout.rows)
    first = True
    while part := _rows(tree, islice(rows, chunk), layout.active):
        yield (b"" if first else b",") + orjson.dumps(part)[1:-1]
        first = False
    yield b"]}\n"


def context_agent_message(entry: dict[str, Any], role: str) -> dict[str, Any]:
    """The agent message a context entry becomes (before convertToLlm)."""
    etype = entry.get("type")
    if etype == "message" and isinstance(entry.get("message"), dict):
        return entry["message"]
    if etype == "custom_message":
        return {"role": "custom", "content": entry.get("content")}
    return {"role": role, "summary": entry.get("summary")}


def tiktoken_counts(reader: EntryReader, ctx: SessionContext) -> list[int]:
    """cl100k tokens per context message, as the model reads it (after Pi's convertToLlm)."""
    entries = reader.entries([m.node for m in ctx.messages])
    counts = []
    for msg, entry in zip(ctx.messages, entries, strict=True):
        llm = convert_to_llm([context_agent_message(entry, msg.role)])
        counts.append(sum(count_message(m) for m in llm))
    return counts


def context_report(tree: SessionTree, reader: EntryReader | None, leaf: Node | None) -> dict[str, Any]:
    ctx = build_context(tree, leaf)
    counts = tiktoken_counts(reader, ctx) if reader is not None else None
    messages = []
    for i, m in enumerate(ctx.messages):
        item: dict[str, Any] = {"role": m.role, "entryId": m.node.id, "tokens": m.tokens}
        if counts is not None:
            item["tiktoken"] = counts[i]
        if m.excluded:
            item["excludeFromContext"] = True
        messages.append(item)
    return {
        "leaf": ctx.leaf.id if ctx.leaf else None,
        "path": [n.id for n in ctx.path],
        "model": ctx.model,
        "thinkingLevel": ctx.thinking_level,
        "dialect": ctx.dialect,  # whose rules built the list: "pi", or "omp" (oh-my-pi's)
        "notes": ctx.notes,  # what those rules left out where they differ from Pi's
        "messages": messages,
        "tokens": {
            "estimate": ctx.tokens,
            "tiktoken": sum(c for c, m in zip(counts, ctx.messages, strict=True) if not m.excluded)
            if counts is not None
            else None,
        },
    }


@dataclass
class CompactionSplit:
    """The context just before a compaction, split into what the summary replaced and what it kept."""

    before: SessionContext | None  # None: the compaction is a root
    summarized: list[ContextMessage]
    kept: list[ContextMessage]
    first_kept_on_path: bool


def compaction_split(tree: SessionTree, node: Node) -> CompactionSplit:
    """Messages before `firstKeptEntryId` (and an earlier compaction's summary) were summarized; the rest kept."""
    meta = node.meta or {}
    first_kept = meta.get("firstKeptEntryId")
    before = build_context(tree, node.parent) if node.parent is not None else None
    path_ids = [n.id for n in tree.branch(node)][:-1]
    on_path = isinstance(first_kept, str) and first_kept in path_ids
    summarized, kept = [], []
    if before is not None:
        position: dict[str, int] = {}
        for i, nid in enumerate(path_ids):
            position.setdefault(nid, i)
        cut = position.get(first_kept, len(path_ids)) if isinstance(first_kept, str) else len(path_ids)
        for m in before.messages:
            if m.role == "compactionSummary" or position.get(m.node.id, -1) < cut:
                summarized.append(m)
            else:
                kept.append(m)
    return CompactionSplit(before, summarized, kept, on_path)


def compaction_audit(tree: SessionTree, node: Node, reader: EntryReader | None, exact: bool = True) -> dict[str, Any]:
    """What one compaction summarized, what it kept, and the tokens before and after it. Without a `reader`
    the entry is not read (no file lists) and nothing is counted by tiktoken; `exact=False` reads it but
    leaves the tiktoken counts out too (None)."""
    exact = exact and reader is not None
    meta = node.meta or {}
    first_kept = meta.get("firstKeptEntryId")
    split = compaction_split(tree, node)
    before, summarized, kept, on_path = split.before, split.summarized, split.kept, split.first_kept_on_path
    summary = meta.get("summary") or ""
    summary_tokens = node.est
    kept_tokens = sum(m.tokens for m in kept if not m.excluded)
    tokens_before = meta.get("tokensBefore")
    problems = []
    if not isinstance(first_kept, str):
        problems.append("firstKeptEntryId is missing")
    elif first_kept not in tree.by_id:
        problems.append(f"first kept entry {first_kept} is not in the file: nothing before the compaction is kept")
    elif not on_path:
        problems.append(f"first kept entry {first_kept} is not on this compaction's path: nothing is kept")
    if not summary.strip():
        problems.append("summary is empty")
    if not isinstance(tokens_before, int | float) or isinstance(tokens_before, bool):
        problems.append("tokensBefore is not a number")
    elif before is not None and before.tokens and tokens_before < (before.tokens - summary_tokens) * 0.5:
        problems.append(
            f"tokensBefore ({tokens_before}) is under half of Pi's estimate of the context it replaced "
            f"({before.tokens})"
        )
    result: dict[str, Any] = {
        "id": node.id,
        "line": node.line,
        "tokensBefore": tokens_before,
        "summary": summary,
        "firstKeptEntryId": first_kept,
        "firstKeptOnPath": on_path,
        "summarized": {"entries": len(summarized), "tokens": sum(m.tokens for m in summarized)},
        "kept": {"entries": len(kept), "tokens": kept_tokens},
        "summaryTokens": {"estimate": summary_tokens, "tiktoken": count_text(summary) if exact else None},
        "tokensAfter": {"estimate": summary_tokens + kept_tokens},
        "readFiles": [],
        "modifiedFiles": [],
        "onActivePath": node.id in tree.active_ids(),
        "problems": problems,
    }
    if reader is not None:
        entry = reader.entry(node)
        details = entry.get("details")
        if isinstance(details, dict):
            result["readFiles"] = [f for f in details.get("readFiles") or [] if isinstance(f, str)]
            result["modifiedFiles"] = [f for f in details.get("modifiedFiles") or [] if isinstance(f, str)]
    if exact:
        assert reader is not None
        if kept:
            kept_ctx = SessionContext(leaf=None, path=[], messages=kept)
            kept_tiktoken = sum(tiktoken_counts(reader, kept_ctx))
        else:
            kept_tiktoken = 0
        result["tokensAfter"]["tiktoken"] = result["summaryTokens"]["tiktoken"] + kept_tiktoken
    return result


def compactions_report(tree: SessionTree, reader: EntryReader | None) -> dict[str, Any]:
    comps = [n for n in tree.nodes if n.type == "compaction" and not tree.is_dropped(n)]
    return {"compactions": [compaction_audit(tree, n, reader) for n in comps]}


def info_report(tree: SessionTree, size: int | None = None) -> dict[str, Any]:
    types: Counter[str] = Counter()
    roles: Counter[str] = Counter()
    errors = 0
    first_ts = last_ts = math.nan
    for node in tree.nodes:
        types[node.type] += 1
        if node.type == "message":
            roles[node.role or "unknown"] += 1
        if node.flags & IS_ERROR:
            errors += 1
        ts = node.ts
        if ts == ts:
            first_ts = ts if first_ts != first_ts else min(first_ts, ts)
            last_ts = ts if last_ts != last_ts else max(last_ts, ts)
    leaves = tree.leaves()
    leaf = tree.leaf
    usage = usage_report(tree)
    return {
        "session": session_header(tree),
        "header": tree.header,
        "bytes": size,
        "entries": tree.entry_count,
        "lines": tree.entry_count + len(tree.skipped) + (1 if tree.header is not None else 0),
        "skipped": len(tree.skipped),
        "problems": len(tree.problems),
        "types": dict(sorted(types.items())),
        "roles": dict(sorted(roles.items())),
        "errors": errors,
        "branches": len(leaves),
        "leaves": [n.id for n in leaves],
        "leaf": leaf.id if leaf else None,
        "labels": len(tree.labels),
        "compactions": types.get("compaction", 0),
        "usage": {k: v for k, v in usage["total"].items() if k != "messages"},
        "models": {
            k: {f: v[f] for f in ("messages", "input", "output", "totalTokens", "cost")}
            for k, v in usage["models"].items()
        },
        "firstTimestamp": None if first_ts != first_ts else first_ts,
        "lastTimestamp": None if last_ts != last_ts else last_ts,
    }
