"""The entry pane's parts for what Pi 1.x added (SPEC-pi1 A2): system messages (prompt text, sections,
tools, Pi's estimate), `usage` and `context_edit` entries, a compaction's checkpoint, usage and retain-none,
and the new fields of assistant, tool-result and bash messages. Everything from the file goes through
`parts` (literal, bounded); a wrong type is shown, never fatal.
"""

from __future__ import annotations

import math
from typing import Any

from pitree.session.edits import Edit, PathEdits, edit_effect
from pitree.session.entries import Node, js_len
from pitree.session.text import as_str, json_compact, make_safe
from pitree.session.tree import SessionTree
from rich.console import RenderableType
from rich.text import Text

from .parts import (
    Fold,
    GoTo,
    Part,
    content_parts,
    cut,
    extra_fields,
    fold_text,
    folded,
    highlighted,
    json_text,
    label,
    left_out_note,
    markdown,
    name_text,
    other_block,
    safe_text,
    usage_table,
)

LIST_MAX = 500  # sections, tools or nested calls listed; the rest are counted


# ---- system messages (pi-ai getSystemMessageText; coding-agent estimateTokens) ------------------------------


def _js_truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") or isinstance(value, list | dict)


def _array_index(key: str) -> int | None:
    """The key as an array index when JavaScript would order it first (a canonical integer < 2^32 - 1)."""
    if key.isdigit() and (key == "0" or not key.startswith("0")):
        n = int(key)
        if n < 2**32 - 1:
            return n
    return None


def js_items(obj: dict[str, Any]) -> list[tuple[str, Any]]:
    """`Object.entries` order: integer-like keys ascending first, then the others as written."""
    indexed = sorted((n, k) for k in obj if (n := _array_index(k)) is not None)
    first = {k for _, k in indexed}
    return [(k, obj[k]) for _, k in indexed] + [(k, v) for k, v in obj.items() if k not in first]


def content_text(content: Any) -> str:
    """pi-ai `contentText`: a string, or the text blocks joined by newlines (null reads as "", as Pi's
    projection makes it)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(as_str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text")


def _sections(msg: dict[str, Any]) -> list[tuple[str, Any]]:
    sections = msg.get("sections")
    return js_items(sections) if isinstance(sections, dict) else []


def system_text(msg: dict[str, Any]) -> str:
    """pi-ai `getSystemMessageText`: the content, then every non-null section, empty parts skipped, joined
    by blank lines."""
    parts = [content_text(msg.get("content"))]
    parts += [as_str(v) for _, v in _sections(msg) if v is not None]
    return "\n\n".join(p for p in parts if p)


def system_estimate(msg: dict[str, Any]) -> int:
    """Pi's `estimateTokens` of a system message: content (text, 4,800 per image) + every non-empty section
    + `JSON.stringify(toolsAdded)`, in UTF-16 units, / 4 rounded up. toolsRemoved adds nothing."""
    chars = 0
    content = msg.get("content")
    if isinstance(content, str):
        chars += js_len(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and _js_truthy(block.get("text")):
                chars += js_len(as_str(block.get("text")))
            elif isinstance(block, dict) and block.get("type") == "image":
                chars += 4800
    for _, value in _sections(msg):
        if _js_truthy(value):
            chars += js_len(as_str(value))
    tools = msg.get("toolsAdded")
    if _js_truthy(tools):
        chars += js_len(json_compact(tools))
    return math.ceil(chars / 4)


def _tool_fold(tool: Any) -> Part:
    if not isinstance(tool, dict):
        return Text("tool of the wrong type: ", "red") + name_text(tool, limit=500)
    name = name_text(tool.get("name"), "bold cyan")
    description = as_str(tool.get("description")) if tool.get("description") is not None else ""
    first = make_safe(description.split("\n", 1)[0], keep_newlines=False)
    title = name + Text(f"  {first[:90]}{'…' if len(first) > 90 else ''}", "dim")
    body: list[RenderableType] = []
    if description:
        kept, left_out = cut(description)
        body.append(Text(make_safe(kept)))
        if (note := left_out_note(left_out)) is not None:
            body.append(note)
    params, left_out = json_text(tool.get("parameters"))
    body += [Text("parameters:", "dim"), highlighted(make_safe(params), "json" if len(params) < 20_000 else None)]
    if (note := left_out_note(left_out, "bytes")) is not None:
        body.append(note)
    others = {k: v for k, v in tool.items() if k not in ("name", "description", "parameters")}
    if others:
        text, _ = json_text(others, 20_000)
        body += [Text("other fields:", "dim"), highlighted(make_safe(text), "json")]
    return Fold("tool ", tuple(body), label=title)


def _count_note(total: int, what: str) -> Text | None:
    return Text(f"… {total - LIST_MAX:,} more {what} not shown", "dim italic") if total > LIST_MAX else None


def system_parts(msg: dict[str, Any], *, prompt_folded: bool = False) -> list[Part]:
    """A system message: a summary line, its prompt text, each section by name, tools added and removed."""
    sections = _sections(msg)
    added, removed = msg.get("toolsAdded"), msg.get("toolsRemoved")
    set_count = sum(1 for _, v in sections if v is not None)
    summary = Text("system prompt", "bold")
    summary.append(f" · {set_count} section{'s' if set_count != 1 else ''} set")
    if len(sections) > set_count:
        summary.append(f", {len(sections) - set_count} removed")
    if isinstance(added, list):
        summary.append(f" · {len(added)} tool{'s' if len(added) != 1 else ''} added")
    if isinstance(removed, list):
        summary.append(f" · {len(removed)} removed")
    summary.append(f" · ~{system_estimate(msg):,} tokens", "bold")
    summary.append(" (Pi's estimate: content, sections and the tools' JSON, chars/4)", "dim")
    out: list[Part] = [summary]
    content = msg.get("content")
    if content is None:
        out.append(Text('content: null (Pi reads it as "")', "dim italic"))
    elif not isinstance(content, str | list):
        out += [Text(f"content is a {type(content).__name__}: ", "red"), *content_parts(content)]
    elif isinstance(content, list):
        for block in content:  # text blocks are in the prompt text below; show what else there is
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "image":
                out += content_parts([block])
            elif btype != "text":
                out += other_block(block)
    prompt = system_text(msg)
    what = "the content, then each section set here" if sections else "the content"
    if not prompt:
        out.append(Text(f"prompt text: (empty: {what})", "dim italic"))
    elif prompt_folded:
        out.append(folded(f"prompt text ({len(prompt):,} chars: {what})", prompt))
    if "sections" in msg and not isinstance(msg.get("sections"), dict):
        out.append(label("sections", msg.get("sections"), "red"))
    for name, value in sections[:LIST_MAX]:
        key = name_text(name, "bold")
        if value is None:
            out.append(Text("section ", "dim") + key + Text(": removed (null)", "yellow"))
        elif not isinstance(value, str):
            out.append(Text("section ", "dim") + key + Text(": not a string: ", "red") + name_text(value, limit=500))
        else:
            out.append(
                folded(
                    "section ", value, label=key + Text(f"  {len(value):,} char{'s' if len(value) != 1 else ''}", "dim")
                )
            )
    if (note := _count_note(len(sections), "sections")) is not None:
        out.append(note)
    if isinstance(added, list):
        out.append(Text(f"tools added ({len(added)}):", "bold"))
        out += [_tool_fold(tool) for tool in added[:LIST_MAX]]
        if (note := _count_note(len(added), "tools")) is not None:
            out.append(note)
    elif added is not None:
        out.append(label("toolsAdded", added, "red"))
    if isinstance(removed, list):
        names = Text(f"tools removed ({len(removed)}): ", "bold")
        for i, ref_ in enumerate(removed[:LIST_MAX]):
            names.append(", " if i else "")
            names.append_text(name_text(ref_.get("name") if isinstance(ref_, dict) else ref_, "cyan"))
        out.append(names)
    elif removed is not None:
        out.append(label("toolsRemoved", removed, "red"))
    if prompt and not prompt_folded:  # last: sections and tools stay in view above a long prompt
        out += [Text(f"prompt text ({len(prompt):,} chars: {what}):", "bold"), *fold_text(prompt)]
    return out + extra_fields(msg, {"role", "content", "sections", "toolsAdded", "toolsRemoved", "timestamp"})


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
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
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
    if (note := _count_note(len(calls), "calls")) is not None:
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
