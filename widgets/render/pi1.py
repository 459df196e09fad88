"""The entry pane's parts for what Pi 1.x added (SPEC-pi1 A2): `usage` and `context_edit` entries (with the
line under the header of an entry an edit changes), a compaction's checkpoint (`render_system`), usage and
retain-none, and the new fields of assistant and tool-result messages. Everything from the file goes through
`parts` (literal, bounded); a wrong type is shown, never fatal.
"""

from __future__ import annotations

import math
from typing import Any

from pitree.session.content import each_block
from pitree.session.edits import Edit, PathEdits, edit_effect
from pitree.session.entries import Node
from pitree.session.text import as_str, json_compact, make_safe
from pitree.session.tree import SessionTree
from pitree.widgets.render.markdown import markdown
from pitree.widgets.render.parts import (
    GoTo,
    Part,
    content_parts,
    cut,
    extra_fields,
    label,
    name_text,
    safe_text,
    usage_table,
)
from pitree.widgets.render.system import LIST_MAX, count_note, system_parts
from rich.text import Text

# ---- entries and fields new in Pi 1.x -------------------------------------------------------------------------


def usage_entry_parts(entry: dict[str, Any]) -> list[Part]:
    """A `usage` entry: the cost of a call outside the conversation (a cache warm-up, say)."""
    kind = entry.get("kind")
    head = Text("usage · ", "dim") + (name_text(kind, "bold") if kind is not None else Text("null"))
    if entry.get("provider") is not None or entry.get("model") is not None:
        head.append("  model ", "dim")
        model = f"{as_str(entry.get('provider'))}/{as_str(entry.get('model'))}"
        head.append_text(name_text(model, "green"))
    out: list[Part] = [head]
    if "note" in entry:
        out.append(label("note", entry.get("note")))
    out.append(usage_table(entry.get("usage")))
    out.append(Text("counts in the session's totals; adds nothing to the context; never a row in the tree", "dim"))
    return out + extra_fields(
        entry, {"type", "id", "parentId", "timestamp", "kind", "provider", "model", "note", "usage"}
    )


def _target_line(tree: SessionTree | None, target: Any) -> Part:
    node = tree.get(target) if tree is not None and isinstance(target, str) else None
    if node is None:
        why = "not in this session" if isinstance(target, str) else "not an entry id"
        return Text("target ", "dim") + name_text(target, "cyan") + Text(f": {why}", "bold yellow")
    row = Text("→ ", "bold") + name_text(node.id, "cyan")
    row.append(f"  line {node.line:,}  ", "dim")
    row.append_text(safe_text(tree.row_text(node) if tree is not None else "", one_line=True)[:120])
    row.append("   (o or click: go there)", "dim italic")
    return GoTo(node.id, row)


def replacement_parts(content: Any, target: Node | None) -> list[Part]:
    """Replacement content drawn like the target's body: Markdown text for an assistant, literal otherwise."""
    if target is None or target.role != "assistant" or target.type != "message":
        return content_parts(content)
    if isinstance(content, str):
        return markdown(content)
    if not isinstance(content, list):
        return content_parts(content)
    out: list[Part] = []
    for btype, block in each_block(content):
        if btype == "text":
            out += markdown(block.get("text"))
        else:
            out += content_parts([block])
    return out or content_parts(content)


def context_edit_parts(entry: dict[str, Any], tree: SessionTree | None, edits: PathEdits | None) -> list[Part]:
    """A `context_edit`: what it does to which entry, a way to go there, and whether it is in effect."""
    edit = Edit(as_str(entry.get("id")), entry.get("targetId"), entry.get("replacement", ...))  # ...: missing
    kind = edit.kind
    verb = {"omit": "omits", "replace": "replaces"}.get(kind, "edits (invalid)")
    target = tree.get(edit.target) if tree is not None and isinstance(edit.target, str) else None
    head = Text(f"{verb} ", "bold") + name_text(edit.target, "bold cyan")
    head.append(
        " from the model's context" if kind == "omit" else " (the new content is below)" if kind == "replace" else ""
    )
    out: list[Part] = [head, _target_line(tree, edit.target)]
    if edits is not None:
        out += _status_parts(edits.status.get(as_str(entry.get("id"))), tree)
    replacement = entry.get("replacement")
    if isinstance(replacement, dict):
        out.append(Text("with:", "bold"))
        out += replacement_parts(replacement.get("content"), target)
        out += extra_fields(replacement, {"content"})
    elif "replacement" not in entry:
        out.append(Text("replacement is missing: Pi fails when it builds the context with this edit", "bold red"))
    elif kind == "invalid":
        out.append(Text("replacement is neither null nor an object: Pi leaves the target no content", "bold red"))
        out += content_parts(replacement)
    return out + extra_fields(entry, {"type", "id", "parentId", "timestamp", "targetId", "replacement"})


def _status_parts(status: tuple[str, str | None] | None, tree: SessionTree | None) -> list[Part]:
    if status is None:
        return [Text("not on the active path: no effect at the leaf", "dim italic")]
    what, other = status
    if what == "effect":
        return [Text("in effect on the active path (the last edit of this target)", "green")]
    if what == "no-target":
        return [Text("no effect on the active path: its target is not in the context there", "yellow")]
    text = "superseded on the active path by edit " if what == "superseded" else "no effect: before the kept range of "
    line = Text(text, "yellow") + name_text(other, "cyan")
    line.append("   (o or click: go there)", "dim italic")
    return [GoTo(other, line) if other and tree is not None and tree.get(other) else line]


def edit_note(node: Node, edits: PathEdits | None) -> GoTo | None:
    """For the header: what an edit on the active path does to this entry, as a link to that edit."""
    hit = edits.target_edit(node.id) if edits is not None else None
    if hit is None:
        return None
    if hit.selected:
        text = Text(f"{edit_effect(hit.edit, node)} ", "bold yellow")
    else:
        text = Text("targeted by edit ", "yellow")
    text.append_text(name_text(hit.edit.id, "cyan"))
    if not hit.selected:
        text.append(" (no effect: this entry is not in the context, before the last compaction's kept range)", "dim")
    text.append("   (o or click: go to the edit)", "dim italic")
    return GoTo(hit.edit.id, text)


def retain_none(entry: dict[str, Any]) -> list[Part]:
    """A compaction that keeps nothing (`appendCompaction(…, null)`) says so plainly."""
    if entry.get("firstKeptEntryId") == entry.get("id") and isinstance(entry.get("id"), str):
        return [Text("retain-none: firstKeptEntryId is this compaction's own id, so nothing before it is kept", "bold")]
    return []


def compaction_parts(entry: dict[str, Any]) -> list[Part]:
    """Pi 1.x's compaction fields: the summary call's usage and the system checkpoint."""
    out: list[Part] = []
    if "usage" in entry:
        out += [Text("usage of the summary call:", "dim"), usage_table(entry.get("usage"))]
    msg = entry.get("systemMessage")
    if isinstance(msg, dict):
        out.append(Text("checkpoint (systemMessage): the system prompt and tools the model gets from here", "bold"))
        out += system_parts(msg, prompt_folded=True)
    elif "systemMessage" in entry:
        out.append(label("systemMessage", msg, "red" if msg is not None else "dim"))
    return out


def nested_calls_parts(value: Any) -> list[Part]:
    """A tool result's `nestedCalls` {calls, complete}: the calls its tool made to other tools."""
    if not isinstance(value, dict) or not isinstance(value.get("calls"), list):
        return [Text("nestedCalls: ", "dim"), *content_parts(value)] if value is not None else []
    calls = value["calls"]
    head = Text(f"nested calls ({len(calls)})", "bold")
    if value.get("complete") is not True:
        head.append("  incomplete (calls dropped, arguments left out or unfinished)", "yellow")
    lines = Text()
    for i, call in enumerate(calls[:LIST_MAX]):
        if i:
            lines.append("\n")
        if not isinstance(call, dict):
            lines.append_text(name_text(call, "red", 500))
            continue
        status = call.get("status")
        lines.append_text(name_text(status, "green" if status == "ok" else "bold red"))
        lines.append(" ")
        lines.append_text(name_text(call.get("name"), "bold cyan"))
        if "arguments" in call:
            args, _ = cut(json_compact(call.get("arguments")), 300)
            lines.append(" " + make_safe(args, keep_newlines=False))
        elif "argumentsBytes" in call:
            lines.append(f" (arguments left out: {as_str(call.get('argumentsBytes'))} bytes)", "dim")
        if "durationMs" in call:
            lines.append(f"  {as_str(call.get('durationMs'))} ms", "dim")
        if call.get("error") is not None:
            lines.append("  error: ", "red")
            lines.append_text(name_text(call.get("error"), "red", 500))
    out: list[Part] = [head, lines]
    if (note := count_note(len(calls), "calls")) is not None:
        out.append(note)
    others = {k: v for k, v in value.items() if k not in ("calls", "complete")}
    return out + extra_fields(others, set())


def duration(value: Any) -> Text:
    """`durationMs` as seconds, the raw value kept when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return label("durationMs", value, "red")
    return Text("duration ", "dim") + Text(f"{value / 1000:,.2f} s")


ASSISTANT_PI1 = {"responseModel", "thinkingLevel", "durationMs"}


def assistant_pi1_parts(msg: dict[str, Any]) -> list[Part]:
    """responseModel, thinkingLevel, durationMs, and what a `deferred` stop means."""
    out: list[Part] = []
    if msg.get("stopReason") == "deferred":
        out.append(Text("deferred: the provider answers later; this turn holds no answer yet", "yellow"))
    if "responseModel" in msg:
        line = label("response model", msg.get("responseModel"), "green")
        if msg.get("responseModel") != msg.get("model"):
            line.append("  (asked for ", "dim")
            line.append_text(name_text(msg.get("model"), "dim"))
            line.append(")", "dim")
        out.append(line)
    if "thinkingLevel" in msg:
        out.append(label("thinking level", msg.get("thinkingLevel")))
    if "durationMs" in msg:
        out.append(duration(msg.get("durationMs")))
    return out


def tool_result_pi1_parts(msg: dict[str, Any]) -> list[Part]:
    """A tool result's own usage (not part of the context), nested calls and duration."""
    out: list[Part] = []
    if "durationMs" in msg:
        out.append(duration(msg.get("durationMs")))
    if "usage" in msg:
        out += [
            Text("usage of the tool's own model calls (in the totals, not in the context):", "dim"),
            usage_table(msg.get("usage")),
        ]
    return out + nested_calls_parts(msg.get("nestedCalls"))


def null_content_note(role: str) -> Text:
    """Pi's projection reads a null content as empty (`[]`; `""` for a system message)."""
    empty = '""' if role == "system" else "[]"
    return Text(f"(no content: null, which Pi reads as {empty})", "dim italic")
