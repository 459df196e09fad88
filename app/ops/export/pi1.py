"""What Pi 1.x added, in the Markdown and HTML exports (SPEC-pi1 A2): system messages (prompt text folded, each
section by name, tools added and removed), `context_edit` and `usage` entries, a compaction's checkpoint and
retain-none, and the note on an entry that an edit on the exported path omits or replaces. Plain parts only:
the renderers escape (doc.py)."""

from __future__ import annotations

from typing import Any

from pitree.ops.export.doc import Part, Section, content_parts, describe, json_pretty
from pitree.session.edits import Edit, PathEdits, edit_effect
from pitree.session.entries import Node
from pitree.session.estimate import estimate_message_tokens
from pitree.session.system_prompt import js_entries, system_message_text
from pitree.session.text import as_str, count, js_string

LIST_MAX = 500  # sections or tools listed; the rest are counted


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def usage_text(usage: Any) -> str:
    """One call's usage on a line: the four parts, their sum (Pi 1.x's total) and the cost."""
    if not isinstance(usage, dict):
        return f"usage is {describe(usage)}"
    names = (("input", "input"), ("output", "output"), ("cacheRead", "cache read"), ("cacheWrite", "cache write"))
    values = [_num(usage.get(key)) for key, _ in names]
    shown = [f"{name} {int(v):,}" if v is not None else f"{name} ?" for v, (_, name) in zip(values, names, strict=True)]
    if all(v is not None for v in values):
        shown.append(f"total {int(sum(v for v in values if v is not None)):,}")
    cost = usage.get("cost")
    total = _num(cost.get("total") if isinstance(cost, dict) else cost)
    return " · ".join(shown) + " tokens" + (f" · cost ${total:.4f}" if total is not None else "")


def system_parts(msg: dict[str, Any]) -> list[Part]:
    """A system message: a summary with Pi's estimate, its prompt text (folded), sections, tools."""
    raw = msg.get("sections")
    sections = js_entries(raw) if isinstance(raw, dict) else []
    added, removed = msg.get("toolsAdded"), msg.get("toolsRemoved")
    set_count = sum(1 for _, v in sections if v is not None)
    summary = f"{count(set_count, 'section')} set"
    if len(sections) > set_count:
        summary += f", {len(sections) - set_count:,} removed"
    if isinstance(added, list):
        summary += f" · {count(len(added), 'tool')} added"
    if isinstance(removed, list):
        summary += f" · {len(removed):,} removed"
    tokens = estimate_message_tokens("system", msg)
    out = [Part("note", f"{summary} · ~{tokens:,} tokens (Pi's estimate: content, sections and the tools' JSON)")]
    content = msg.get("content")
    if content is not None and not isinstance(content, str | list):
        out += content_parts(content)
    elif isinstance(content, list):  # text blocks are in the prompt text; show what else there is
        out += content_parts([b for b in content if not (isinstance(b, dict) and b.get("type") == "text")])
    prompt = system_message_text(msg)
    if prompt:
        out.append(Part("fold", f"prompt text ({len(prompt):,} characters)", parts=[Part("code", prompt)]))
    else:
        out.append(Part("note", "prompt text: (empty)"))
    for name, value in sections[:LIST_MAX]:
        if value is None:
            out.append(Part("note", f"section {js_string(name)}: removed"))
        elif isinstance(value, str):
            out.append(Part("fold", f"section {js_string(name)}", parts=[Part("code", value)]))
        else:
            body = [Part("code", json_pretty(value), "json")]
            out.append(Part("fold", f"section {js_string(name)} ({describe(value)}, not text)", parts=body))
    if isinstance(added, list):
        out += [_tool_fold(tool) for tool in added[:LIST_MAX]]
    elif added is not None:
        out.append(Part("note", f"toolsAdded is {describe(added)}"))
    if isinstance(removed, list) and removed:
        out.append(Part("note", "tools removed: " + ", ".join(js_string(r) for r in removed[:LIST_MAX])))
    if len(sections) > LIST_MAX or (isinstance(added, list) and len(added) > LIST_MAX):
        out.append(Part("note", f"only the first {LIST_MAX} sections and tools are listed"))
    return out


def _tool_fold(tool: Any) -> Part:
    if not isinstance(tool, dict):
        return Part("fold", f"tool ({describe(tool)})", parts=[Part("code", json_pretty(tool), "json")])
    description = as_str(tool.get("description")) if tool.get("description") is not None else ""
    first = description.split("\n", 1)[0][:90]
    body = [Part("prose", description)] if description else []
    body.append(Part("code", json_pretty(tool.get("parameters")), "json"))
    return Part("fold", f"tool {js_string(tool.get('name'))}" + (f": {first}" if first else ""), parts=body)


def system_section(msg: dict[str, Any]) -> Section:
    return Section("system", "system prompt", parts=system_parts(msg))


def usage_section(entry: dict[str, Any]) -> Section:
    """A `usage` entry: the cost of a call outside the conversation; it adds nothing to the context."""
    kind = entry.get("kind")
    model = None
    if entry.get("provider") is not None or entry.get("model") is not None:
        model = f"{js_string(entry.get('provider'))}/{js_string(entry.get('model'))}"
    parts = [Part("note", usage_text(entry.get("usage")))]
    if entry.get("note") is not None:
        parts.append(Part("prose", as_str(entry.get("note"))))
    title = f"usage: {js_string(kind)}" if kind is not None else "usage"
    return Section("usage", title, model=model, parts=parts, compact=True)


_STATUS = {
    "effect": "in effect on this path",
    "superseded": "superseded on this path by edit {}",
    "no-target": "no effect on this path: its target is not in the context here",
    "unselected": "no effect: before the kept range of compaction {}",
}


def context_edit_section(entry: dict[str, Any], edits: PathEdits) -> Section:
    """A `context_edit`: what it does to which entry, whether it is in effect at the exported leaf, and the
    replacement content."""
    edit = Edit(as_str(entry.get("id")), entry.get("targetId"), entry.get("replacement", ...))
    kind = edit.kind
    target = js_string(edit.target)
    title = {"omit": f"context edit: omits {target}", "replace": f"context edit: replaces {target}"}.get(
        kind, f"context edit (invalid) of {target}"
    )
    status = edits.status.get(edit.id)
    parts = []
    if status is not None:
        parts.append(Part("note", _STATUS[status[0]].format(js_string(status[1]))))
    replacement = entry.get("replacement")
    if kind == "replace" and isinstance(replacement, dict):
        parts.append(Part("note", "the model sees instead:"))
        parts += content_parts(replacement.get("content")) or [Part("note", "(no content)")]
    elif "replacement" not in entry:
        parts.append(Part("note", "replacement is missing: Pi fails when it builds the context with this edit"))
    elif kind == "invalid":
        parts.append(Part("note", f"replacement is {describe(replacement)}, neither null nor an object"))
    return Section("contextEdit", title, parts=parts)


def edited_note(node: Node, edits: PathEdits, edit_entries: dict[str, dict[str, Any]]) -> list[Part]:
    """For an entry an edit on the path omits or replaces: say so, with what the model sees instead."""
    hit = edits.target_edit(node.id)
    if hit is None or not hit.selected:
        return []
    note = Part("note", f"{edit_effect(hit.edit, node)} {js_string(hit.edit.id)} (at the exported leaf)")
    if hit.edit.kind != "replace":
        return [note]
    replacement = edit_entries.get(hit.edit.id, {}).get("replacement")
    content = replacement.get("content") if isinstance(replacement, dict) else None
    body = content_parts(content) or [Part("note", "(no content)")]
    return [note, Part("fold", "what the model sees instead", parts=body)]


def compaction_parts(entry: dict[str, Any]) -> list[Part]:
    """Pi 1.x's compaction fields: retain-none, the summary call's usage, and the system checkpoint."""
    out: list[Part] = []
    if isinstance(entry.get("id"), str) and entry.get("firstKeptEntryId") == entry.get("id"):
        out.append(Part("note", "retain-none: nothing before this compaction is kept, on purpose"))
    if "usage" in entry:
        out.append(Part("note", "usage of the summary call: " + usage_text(entry.get("usage"))))
    msg = entry.get("systemMessage")
    if isinstance(msg, dict):
        body = system_parts(msg)
        out.append(Part("fold", "checkpoint (systemMessage): the system prompt and tools from here on", parts=body))
    elif msg is not None:
        out.append(Part("note", f"systemMessage is {describe(msg)}"))
    return out
