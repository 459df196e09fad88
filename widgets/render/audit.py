"""The compaction audit as Rich renderables: the table on top of a compaction in the detail pane.

`audit_parts(report.compaction_audit(...))` states what the compaction summarized and kept (entries and
tokens), tokensBefore as Pi stored it against the tokens after (checkpoint + summary + kept, by Pi's chars/4 estimate
and by tiktoken cl100k), for Pi 1.x its checkpoint (the replayed prompt and tools), the system messages it
dropped, retain-none and what the compaction itself cost, and every problem the audit found. Problem texts
quote ids from the file, so they go through `make_safe` like all session text.
"""

from __future__ import annotations

from typing import Any

from pitree.cli.report_context import after_parts
from pitree.session.text import make_safe
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text


def _n(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "?"
    return f"{value:,.0f}"


def _names(names: list[Any] | None) -> str:
    """Section and tool names from the file, made safe, on one line."""
    if not names:
        return "none"
    return make_safe(", ".join(str(n) for n in names), keep_newlines=False)


def audit_parts(audit: dict[str, Any]) -> list[RenderableType]:
    """Heading, numbers table and problems of one compaction audit."""
    head = Text("Compaction audit", "bold magenta")
    head.append("   ▒ summarized and ▌ kept entries are marked in the tree", "dim")
    table = Table(box=None, pad_edge=False, show_header=True, header_style="dim", padding=(0, 2, 0, 0))
    table.add_column("")
    table.add_column("entries", justify="right")
    table.add_column("Pi estimate", justify="right")
    table.add_column("tiktoken", justify="right")
    summarized, kept = audit["summarized"], audit["kept"]
    summary, after = audit["summaryTokens"], audit["tokensAfter"]
    before = audit["tokensBefore"]
    table.add_row("tokensBefore (stored by Pi)", "", _n(before), "")
    table.add_row("Pi's context size at its parent", "", _n(audit.get("sizeBefore")), "")
    table.add_row("summarized (replaced)", _n(summarized["entries"]), _n(summarized["tokens"]), "")
    kept_label = "kept: none (retain-none)" if audit.get("retainNone") else "kept (firstKeptEntryId →)"
    table.add_row(kept_label, _n(kept["entries"]), _n(kept["tokens"]), "")
    dropped = audit.get("droppedSystem")
    if dropped and dropped["entries"]:
        table.add_row("system messages dropped", _n(dropped["entries"]), _n(dropped["tokens"]), "")
    checkpoint = audit.get("checkpoint")
    if checkpoint is not None:
        tik = checkpoint.get("tiktoken")
        table.add_row("checkpoint (systemMessage)", "", _n(checkpoint["tokens"]), _n(tik) if tik is not None else "—")
    counted = summary.get("tiktoken") is not None  # not counted: tiktoken is loaded on request (see EntryView)
    table.add_row("summary", "", _n(summary["estimate"]), _n(summary.get("tiktoken")) if counted else "—")
    table.add_row(
        Text("after = " + after_parts(audit), "bold"),
        "",
        _n(after["estimate"]),
        _n(after.get("tiktoken")) if counted else "—",
        style="bold",
    )
    parts: list[RenderableType] = [head, table]
    if not counted:
        parts.append(Text("tiktoken: press t to count exactly", "dim"))
    if isinstance(before, int | float) and not isinstance(before, bool) and before > 0:
        share = after["estimate"] / before
        change = f"context {_n(before)} → {_n(after['estimate'])} tokens (after is {share:.1%} of before)"
        parts.append(Text(change, "dim"))
    if checkpoint is not None and checkpoint.get("sections") is not None:
        line = Text("checkpoint: ", "dim")
        line.append(f"sections {_names(checkpoint['sections'])}; tools {_names(checkpoint['tools'])}", "dim")
        parts.append(line)
    elif checkpoint is None and audit.get("droppedSystem", {}).get("entries"):
        parts.append(Text("no checkpoint: the dropped system messages are not replayed", "yellow"))
    if audit.get("retainNone"):
        parts.append(Text("retain-none: nothing before the compaction is kept, on purpose", "dim"))
    usage = audit.get("usage")
    if usage is not None:
        parts.append(Text(f"the compaction itself: {_n(usage['tokens'])} tokens, ${usage['cost']:.4f}", "dim"))
    files = Text(f"files read: {len(audit['readFiles'])}, modified: {len(audit['modifiedFiles'])}", "dim")
    parts.append(files)
    problems = audit["problems"]
    if problems:
        warn = Text()
        for i, problem in enumerate(problems):
            warn.append(("\n" if i else "") + "⚠ " + make_safe(problem, keep_newlines=False), "bold red")
        parts.append(warn)
    else:
        kept = "retain-none (nothing kept, on purpose)" if audit.get("retainNone") else "first kept entry on the path"
        ok = Text(f"✓ no problems: {kept}, summary present, tokensBefore plausible", "green")
        # Why the numbers above need not add up, and what "plausible" was checked against.
        ok.append(
            "\ntokensBefore is Pi's estimateProjectedContextTokens: the model's own count (usage) at the last reply"
            " plus chars/4 for what came after it (chars/4 of it all when no usable reply follows the last edit or"
            " compaction); the other rows are chars/4 alone, so they need not add up to it."
            " Checked: tokensBefore is at least half of the chars/4 estimate of the context it replaced.",
            "dim",
        )
        parts.append(ok)
    return parts
