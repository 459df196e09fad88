"""The entry pane's header for one entry, from its compact `Node` alone (no file read): type and role, ids,
line, time (ISO and how long ago), label, leaf and duplicate notes, model and stop reason, token counts.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from typing import Any

from pitree.session.entries import FROM_HOOK, SYNTHETIC_ID, Node
from pitree.session.text import as_str, make_safe
from pitree.session.tree import SessionTree
from pitree.widgets.render.parts import safe_text
from rich.text import Text


def relative_time(seconds: float) -> str:
    """How long ago `seconds` was, in words: "just now", "3 min ago", "2 days ago", "in 5 min"."""
    ago = abs(seconds)
    if ago < 5:
        return "just now"
    for unit, size in (
        ("year", 365.25 * 86400),
        ("month", 30.44 * 86400),
        ("day", 86400),
        ("h", 3600),
        ("min", 60),
        ("s", 1),
    ):
        if ago >= size:
            n = int(ago // size)
            name = f"{unit}s" if n != 1 and unit in ("year", "month", "day") else unit
            return f"{n} {name} ago" if seconds >= 0 else f"in {n} {name}"
    return "just now"


def when(ts: float, now: float | None = None) -> str:
    """ISO time (UTC, ms) and how long ago, for a timestamp in ms since the epoch."""
    if not math.isfinite(ts):
        return "no valid timestamp"
    try:
        iso = datetime.fromtimestamp(ts / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return f"timestamp {ts:g} ms is out of range"
    now = time.time() if now is None else now
    return f"{iso} ({relative_time(now - ts / 1000)})"


def header(
    node: Node, tree: SessionTree, *, stop_reason: Any = None, tokens: int | str | None = None, now: float | None = None
) -> Text:
    """Type/role, ids, line, time, label, model and stop reason, token counts."""
    t = Text()
    t.append(make_safe(node.type or "(no type)", keep_newlines=False), "bold magenta")
    if node.role:
        t.append(" · ")
        t.append(make_safe(node.role, keep_newlines=False), "bold")
    t.append("  id ", "dim")
    t.append(make_safe(node.id, keep_newlines=False), "cyan")
    parent = node.parent.id if node.parent is not None else node.parent_id
    t.append("  parent ", "dim")
    t.append(make_safe(parent, keep_newlines=False) if parent else "none (root)", "cyan" if parent else "dim")
    if node.parent is None and node.parent_id:
        t.append(" (not in this file)", "yellow")
    t.append(f"  line {node.line:,}", "dim")
    t.append("\n")
    t.append(when(node.ts, now), "dim")
    notes = []
    if node is tree.leaf:
        # Pi's appendLabelChange makes the label entry its leaf; the next message hangs under it, same context.
        where = (
            "Pi appends under it; a label adds nothing to the context" if node.type == "label" else "where Pi continues"
        )
        notes.append((f"  ← leaf ({where})", "bold yellow"))
    if tree.is_dropped(node):
        notes.append(("  duplicate id: a later line replaces it", "bold red"))
    if node.flags & SYNTHETIC_ID:
        notes.append(("  id made by pitree", "dim italic"))
    if node.flags & FROM_HOOK:
        notes.append(("  written by an extension", "dim italic"))
    for text, style in notes:
        t.append(text, style)
    entry_label = tree.labels.get(node.id)
    if entry_label:
        t.append("\nlabel ", "dim")
        t.append(make_safe(entry_label, keep_newlines=False), "bold yellow")
    if node.model is not None or stop_reason is not None:
        t.append("\n")
        if node.model is not None:
            provider, model = node.model
            t.append("model ", "dim")
            t.append(make_safe(f"{as_str(provider)}/{as_str(model)}", keep_newlines=False), "green")
            t.append("  ")
        if stop_reason is not None:
            t.append("stop reason ", "dim")
            style = {"error": "bold red", "aborted": "bold red", "deferred": "yellow"}.get(as_str(stop_reason), "")
            t.append_text(safe_text(stop_reason, style, one_line=True))
    t.append(f"\ntokens ~{node.est:,}", "")
    t.append(" (Pi's chars/4)", "dim")
    if isinstance(tokens, int):
        t.append(f"  {tokens:,}")
        t.append(" (tiktoken cl100k)", "dim")
    elif tokens:
        t.append(f"  tiktoken: {tokens}", "dim")
    return t
