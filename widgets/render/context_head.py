"""The context view's head (`context_head`): where the context is taken, its model and window, its size by Pi's
rules and by tiktoken, the compaction it starts after and the entries edits omit. Ids and names come from the
file: made safe, never markup."""

from __future__ import annotations

from pitree.session.context import SessionContext, estimate_reason, model_label
from pitree.session.text import count as count_of
from pitree.session.text import make_safe
from rich.text import Text


def context_head(
    ctx: SessionContext, window: int | None, estimate: int, omitted: int, counted: int, tiktoken: int | None
) -> Text:
    """`estimate`: Pi's chars/4 of what is sent; `omitted`: entries edits omit; `counted`: messages tiktoken has
    counted so far, `tiktoken` their total once all are (None before)."""
    head = Text(no_wrap=False)
    head.append("Context at ", "bold")
    head.append(make_safe(ctx.leaf.id, keep_newlines=False) if ctx.leaf else "(empty session)", "bold cyan")
    head.append(f"  ·  model {make_safe(model_label(ctx.model), keep_newlines=False)}")
    head.append(f"  ·  thinking {make_safe(str(ctx.thinking_level), keep_newlines=False)}")
    head.append(f"  ·  window {window:,}" if window else "  ·  window unknown (not in Pi's registry)")
    head.append(f"\n{count_of(len(ctx.messages), 'message')} · ~{estimate:,} tokens (Pi's chars/4)")
    size = ctx.size
    head.append(f" · context size {size.tokens:,} (Pi: ")
    if size.usage_node is not None:
        usage_id = make_safe(size.usage_node.id, keep_newlines=False)
        head.append(f"usage of {usage_id} {size.usage_tokens:,} + {size.trailing_tokens:,} after)")
    else:
        head.append(f"estimate: {make_safe(estimate_reason(ctx), keep_newlines=False)})")
    if tiktoken is not None:
        head.append(f" · {tiktoken:,} tokens (tiktoken cl100k)")
        if window:
            head.append(f" · {tiktoken / window:.1%} of the window")
    else:
        head.append(f" · tiktoken: counting {counted}/{len(ctx.messages)} …", "dim")
    if ctx.compaction is not None:
        first = "its checkpoint and summary come" if ctx.compaction.meta and ctx.compaction.meta.get(
            "checkpoint") else "its summary comes"
        comp_id = make_safe(ctx.compaction.id, keep_newlines=False)
        head.append(f"\nafter compaction {comp_id}: {first} first", "magenta")
        if ctx.retain_none:
            head.append(", nothing kept (retain-none)", "magenta")
        else:
            kept = make_safe(ctx.kept_from.id, keep_newlines=False) if ctx.kept_from else ""
            head.append(f", then the kept entries from {kept}" if kept else ", nothing kept")
        if ctx.dropped_system:
            dropped = count_of(len(ctx.dropped_system), "system message")
            head.append(f"; {dropped} of the kept range dropped", "magenta")
    if omitted:
        edits = "edit" if omitted == 1 else "edits"
        head.append(f"\n{count_of(omitted, 'entry', 'entries')} omitted by context {edits}", "yellow")
    if ctx.dialect == "omp":  # an oh-my-pi session: its buildSessionContext, not Pi's
        head.append("\nrules: oh-my-pi's (the file is in its dialect)", "yellow")
        for note in ctx.notes[:6]:
            head.append(f"\n  {make_safe(note, keep_newlines=False)}", "dim")
        if len(ctx.notes) > 6:
            head.append(f"\n  … {len(ctx.notes) - 6} more left out", "dim")
    return head
