"""A Pi 1.x system message in the entry pane: a summary with Pi's token estimate, each prompt section by name
(set or removed), the tools added (parameters folded) and removed, and the prompt text as Pi renders it
(pi-ai `getSystemMessageText`; the coding agent's `estimateTokens`, both checked against Pi in tests/pi).
"""

from __future__ import annotations

from typing import Any

from pitree.session.content import each_block, text_of
from pitree.session.estimate import estimate_message_tokens
from pitree.session.text import as_str, make_safe
from pitree.widgets.render.parts import (
    Fold,
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
    name_text,
    other_block,
)
from rich.console import RenderableType
from rich.text import Text

LIST_MAX = 500  # sections, tools or nested calls listed; the rest are counted


def _js_truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") or isinstance(value, list | dict)


def _array_index(key: str) -> int | None:
    """The key as an array index when JavaScript would order it first (a canonical integer < 2^32 - 1)."""
    if key.isascii() and key.isdigit() and (key == "0" or not key.startswith("0")):  # `²` and `١` are digits too
        n = int(key)
        if n < 2**32 - 1:
            return n
    return None


def js_items(obj: dict[str, Any]) -> list[tuple[str, Any]]:
    """`Object.entries` order: integer-like keys ascending first, then the others as written."""
    indexed = sorted((n, k) for k in obj if (n := _array_index(k)) is not None)
    first = {k for _, k in indexed}
    return [(k, obj[k]) for _, k in indexed] + [(k, v) for k, v in obj.items() if k not in first]


def _sections(msg: dict[str, Any]) -> list[tuple[str, Any]]:
    sections = msg.get("sections")
    return js_items(sections) if isinstance(sections, dict) else []


def system_text(msg: dict[str, Any]) -> str:
    """pi-ai `getSystemMessageText`: the content, then every non-null section, empty parts skipped, joined
    by blank lines."""
    parts = [text_of(msg.get("content"))]
    parts += [v for _, v in _sections(msg) if isinstance(v, str)]  # Pi drops a number (no length); shown as wrong
    return "\n\n".join(p for p in parts if p)


def system_estimate(msg: dict[str, Any]) -> int:
    """Pi's `estimateTokens` of a system message (the model's own estimate, one rule for pane and context)."""
    return estimate_message_tokens("system", msg)


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


def count_note(total: int, what: str) -> Text | None:
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
        for btype, block in each_block(content):  # text blocks are in the prompt text below; show the rest
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
    if (note := count_note(len(sections), "sections")) is not None:
        out.append(note)
    if isinstance(added, list):
        out.append(Text(f"tools added ({len(added)}):", "bold"))
        out += [_tool_fold(tool) for tool in added[:LIST_MAX]]
        if (note := count_note(len(added), "tools")) is not None:
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
