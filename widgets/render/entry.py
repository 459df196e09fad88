"""Turning one entry (its full JSON, re-read from the file) into parts for the detail pane.

`entry_parts` gives a list of parts: Rich renderables, `Fold`s that the view shows collapsed and `GoTo`
links to other entries (`parts`). Pi 1.x's entries and fields are drawn by `render_pi1` and
`render_system`. Session text is
never markup; every part is bounded (see `parts`).
"""

from __future__ import annotations

import math
from typing import Any

import orjson
from pitree.session.content import blocks, each_block
from pitree.session.dialect_omp import OMP_ROLES
from pitree.session.edits import PathEdits
from pitree.session.entries import parse_timestamp
from pitree.session.text import as_str, json_compact, make_safe
from pitree.session.tree import SessionTree
from pitree.summary.tokens import llm_text
from pitree.widgets.render.lexers import call_path, lexer_for_path, lexer_for_text
from pitree.widgets.render.markdown import markdown
from pitree.widgets.render.parts import (
    HEAD_CHARS,
    HEAD_LINES,
    MAX_CHARS,
    Fold,
    GoTo,
    Part,
    content_parts,
    extra_fields,
    fold_safe,
    fold_text,
    folded,
    image_placeholder,
    json_text,
    json_view,
    label,
    left_out_note,
    other_block,
    ref,
    safe_text,
    usage_table,
)
from pitree.widgets.render.pi1 import (
    assistant_pi1_parts,
    compaction_parts,
    context_edit_parts,
    null_content_note,
    retain_none,
    tool_result_pi1_parts,
    usage_entry_parts,
)
from pitree.widgets.render.system import system_parts, system_text
from rich.text import Text

__all__ = [  # what other modules and the tests take from here
    "HEAD_CHARS",
    "HEAD_LINES",
    "MAX_CHARS",
    "Fold",
    "GoTo",
    "Part",
    "entry_parts",
    "fold_text",
    "image_placeholder",
    "json_view",
    "markdown",
    "raw_parts",
    "safe_text",
    "token_text",
    "usage_table",
]

_ASSISTANT_KNOWN = {
    *("role", "content", "provider", "model", "api", "usage", "stopReason", "errorMessage", "timestamp"),
    *("responseModel", "thinkingLevel", "durationMs"),
}


def assistant_parts(msg: dict[str, Any]) -> list[Part]:
    out: list[Part] = []
    content = msg.get("content")
    if isinstance(content, str):
        out.extend(markdown(content))
    elif content is not None and not isinstance(content, list):
        out += [Text(f"content is a {type(content).__name__}: ", "red"), *json_view(content)]
    for btype, block in each_block(content):
        if btype not in ("text", "thinking", "toolCall", "image"):
            out.extend(other_block(block))
        elif btype == "text":
            out.extend(markdown(block.get("text")))
        elif btype == "thinking":
            thinking = as_str(block.get("thinking"))
            fold = folded(f"thinking ({len(thinking):,} chars)", thinking, style="italic")
            if block.get("redacted"):
                fold = Fold(fold.title, (Text("(redacted by the provider)", "dim"), *fold.body))
            out.append(fold)
        elif btype == "toolCall":
            title = Text("tool call ", "bold") + safe_text(block.get("name"), "bold cyan", one_line=True)
            title.append("  ")
            title.append_text(safe_text(block.get("id"), "dim", one_line=True))
            out.append(title)
            out.extend(json_view(block.get("arguments")))
        else:
            out.append(image_placeholder(block))
    if content is None and "content" in msg:
        out.append(null_content_note("assistant"))
    elif content is None or content == []:
        out.append(Text("(no content)" if content is None else "(empty content)", "dim italic"))
    error = msg.get("errorMessage")
    if error:
        out.append(Text("error: ", "bold red") + safe_text(error, "red"))
    if "usage" in msg:
        out.append(usage_table(msg.get("usage")))
    if msg.get("api") is not None:
        out.append(label("api", msg.get("api")))
    return out + assistant_pi1_parts(msg) + extra_fields(msg, _ASSISTANT_KNOWN)


def file_lists(details: Any) -> list[Part]:
    """readFiles / modifiedFiles of a compaction or branch summary."""
    if not isinstance(details, dict):
        return [] if details is None else [Text("details: ", "dim"), *json_view(details)]
    out: list[Part] = []
    for key in ("readFiles", "modifiedFiles"):
        files = details.get(key)
        if files is None:
            continue
        if not isinstance(files, list):
            out.append(label(key, files, "red"))
            continue
        t = Text(f"{key} ({len(files)}):", "bold")
        for f in files[:1000]:
            t.append("\n  ")
            t.append_text(safe_text(f, one_line=True))
        if len(files) > 1000:
            t.append(f"\n  … {len(files) - 1000:,} more", "dim italic")
        out.append(t)
    others = {k: v for k, v in details.items() if k not in ("readFiles", "modifiedFiles")}
    if others:
        out.extend([Text("details: ", "dim"), *json_view(others)])
    return out


def _tool_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return next((b["text"] for t, b in blocks(content) if t == "text" and isinstance(b.get("text"), str)), "")


# ---- entries ----------------------------------------------------------------------------------------------

_COMMON = {"type", "id", "parentId", "timestamp"}


def _message_parts(msg: Any, tree: SessionTree | None) -> list[Part]:
    if not isinstance(msg, dict):
        if msg is None:
            return [Text("this message entry has no message", "red")]
        return [Text(f"message is a {type(msg).__name__}, not an object:", "red"), *json_view(msg)]
    role = msg.get("role")
    if role == "assistant":
        return assistant_parts(msg)
    if role == "system":
        return system_parts(msg)
    if role == "user":
        return _content(msg) + extra_fields(msg, {"role", "content", "timestamp"})
    if role == "toolResult":
        head = Text("tool result ", "bold") + safe_text(msg.get("toolName"), "bold cyan", one_line=True)
        if msg.get("isError") is True:
            head.append("  ")
            head.append(" ERROR ", "bold white on red")
        call_id = msg.get("toolCallId")
        call = tree.call_text(call_id) if tree is not None else None
        parts: list[Part] = [head]
        if call is not None:
            parts.append(label("call", call))
        if "toolCallId" in msg:
            parts.append(label("toolCallId", call_id, "dim"))
        content = msg.get("content")
        lexer = lexer_for_path(call_path(call)) or lexer_for_text(_tool_text(content))
        parts.extend(_content(msg, lexer))
        details = msg.get("details")
        if isinstance(details, dict) and isinstance(details.get("diff"), str):
            parts.append(Text("diff:", "dim"))
            parts.extend(fold_text(details["diff"], "diff"))
            details = {k: v for k, v in details.items() if k != "diff"}
        if details:
            text, left_out = json_text(details)
            parts.append(fold_safe("details (JSON)", make_safe(text), left_out_note(left_out, "bytes"), "json"))
        parts += tool_result_pi1_parts(msg)
        known = {"role", "toolName", "isError", "toolCallId", "content", "details", "timestamp"}
        return parts + extra_fields(msg, known | {"usage", "nestedCalls", "durationMs"})
    if role == "bashExecution":
        head = Text("$ ", "bold") + safe_text(msg.get("command"), "bold")
        code = msg.get("exitCode")
        ok = code == 0 and not isinstance(code, bool)
        head.append("\nexit code ", "dim")
        head.append_text(
            safe_text(code if code is not None else "(none)", "green" if ok else "bold red", one_line=True)
        )
        for flag, text in (
            ("cancelled", "cancelled"),
            ("truncated", "output truncated by Pi"),
            ("excludeFromContext", "excluded from the context"),
        ):
            if msg.get(flag):
                head.append(f"  {text}", "yellow")
        known = {"role", "command", "exitCode", "output", "cancelled", "truncated", "excludeFromContext", "timestamp"}
        tail: list[Part] = []
        if "fullOutputPath" in msg:
            tail.append(label("full output", msg.get("fullOutputPath"), "bold"))
        return [head, *fold_text(msg.get("output")), *tail, *extra_fields(msg, known | {"fullOutputPath"})]
    if role in ("branchSummary", "compactionSummary"):
        return [*markdown(msg.get("summary")), *extra_fields(msg, {"role", "summary", "timestamp"})]
    if role == "custom":
        parts = [label("customType", msg.get("customType"), "bold")]
    elif isinstance(role, str) and role in OMP_ROLES:  # oh-my-pi's own roles: their fields follow
        parts = [Text(f"{role} (oh-my-pi)", "bold")]
    else:
        parts = [Text("role not known to pitree: ", "yellow") + safe_text(role, "bold", one_line=True)]
    if "content" in msg:
        parts.extend(_content(msg))
    return parts + extra_fields(msg, {"role", "content", "customType", "timestamp"})


def _content(msg: dict[str, Any], lexer: str | None = None) -> list[Part]:
    if "content" in msg and msg["content"] is None:
        return [null_content_note(as_str(msg.get("role")))]
    return content_parts(msg.get("content"), lexer)


def _common_fields(entry: dict[str, Any]) -> list[Part]:
    """id, parentId and timestamp when missing or wrong (when they are fine, the header shows them)."""
    out: list[Part] = []
    for key, ok in (
        ("id", isinstance(entry.get("id"), str)),
        ("parentId", entry.get("parentId") is None or isinstance(entry.get("parentId"), str)),
        ("timestamp", math.isfinite(parse_timestamp(entry.get("timestamp")))),
    ):
        if not ok:
            value = entry.get(key)
            out.append(label(key, value, "bold red") if key in entry else Text(f"{key}: (missing)", "red"))
    return out


def entry_parts(entry: Any, tree: SessionTree | None = None, edits: PathEdits | None = None) -> list[Part]:
    """Everything about one entry, as parts for the view. Never raises, whatever the field types.
    `edits`: the active path's context edits (`session.edits.path_edits`), for a context_edit's status."""
    if not isinstance(entry, dict):
        return [Text(f"this entry is a {type(entry).__name__}, not an object:", "red"), *json_view(entry)]
    return _group(_entry_parts(entry, tree, edits) + _common_fields(entry))


def _group(parts: list[Part]) -> list[Part]:
    """Runs of one-line Texts (ids, flags, short fields) become one Text, so the view keeps them together."""
    out: list[Part] = []
    run: Text | None = None
    for part in parts:
        if isinstance(part, Text) and "\n" not in part.plain:
            if run is None:
                run = part.copy()
                out.append(run)
            else:
                run.append("\n")
                run.append_text(part)
            continue
        run = None
        out.append(part)
    return out


def _entry_parts(entry: dict[str, Any], tree: SessionTree | None, edits: PathEdits | None) -> list[Part]:
    etype = entry.get("type")
    parts: list[Part]
    if etype == "message":
        return _message_parts(entry.get("message"), tree) + extra_fields(entry, _COMMON | {"message"})
    if etype == "compaction":
        parts = [
            label("tokensBefore", entry.get("tokensBefore"), "bold"),
            Text("firstKeptEntryId: ", "dim") + ref(tree, entry.get("firstKeptEntryId")),
            *retain_none(entry),
        ]
        if entry.get("fromHook"):
            parts.append(Text("written by an extension (fromHook)", "dim italic"))
        parts += [*markdown(entry.get("summary")), *file_lists(entry.get("details")), *compaction_parts(entry)]
        known = {"tokensBefore", "firstKeptEntryId", "fromHook", "summary", "details", "usage", "systemMessage"}
        return parts + extra_fields(entry, _COMMON | known)
    if etype == "branch_summary":
        from_id = entry.get("fromId")
        if from_id == "root" and (tree is None or tree.get("root") is None):
            parts = [
                Text("fromId: ", "dim") + Text("root", "cyan") + Text("  (there was no leaf: Pi writes root)", "dim")
            ]
        else:
            parts = [Text("fromId: ", "dim") + ref(tree, from_id)]
        if entry.get("fromHook"):
            parts.append(Text("written by an extension (fromHook)", "dim italic"))
        if "usage" in entry:
            parts += [Text("usage of the summary call:", "dim"), usage_table(entry.get("usage"))]
        parts += [*markdown(entry.get("summary")), *file_lists(entry.get("details"))]
        return parts + extra_fields(entry, _COMMON | {"fromId", "fromHook", "summary", "details", "usage"})
    if etype == "custom_message":
        parts = [label("customType", entry.get("customType"), "bold")]
        if "display" in entry:
            parts.append(label("display", entry.get("display")))
        parts.extend(_content(entry))
        return parts + extra_fields(entry, _COMMON | {"customType", "display", "content"})
    if etype == "label":
        value = entry.get("label")
        parts = [
            Text("targetId: ", "dim") + ref(tree, entry.get("targetId")),
            label("label", value, "bold yellow") if value else Text("label: (cleared)", "dim"),
        ]
        return parts + extra_fields(entry, _COMMON | {"targetId", "label"})
    if etype == "usage":
        return usage_entry_parts(entry)
    if etype == "context_edit":
        return context_edit_parts(entry, tree, edits)
    return extra_fields(entry, _COMMON) or [Text("(no fields)", "dim italic")]


def raw_parts(raw: bytes) -> list[Part]:
    """The line as stored, pretty-printed; or its text and the parse error when it no longer parses."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        text = raw[: MAX_CHARS * 4].decode("utf-8", "replace")
        why = make_safe(str(exc), keep_newlines=False)
        return [
            Text(f"this line does not parse as JSON: {why}", "bold red"),
            *fold_text(text, head_lines=200, head_chars=20_000),
        ]
    return [
        Text(f"the stored line ({len(raw):,} bytes), indented", "dim italic"),
        *json_view(value, head_lines=200, head_chars=12_000),
    ]


def token_text(entry: Any) -> str | None:
    """The text of an entry that a model reads, for a tiktoken count; None for entries without any."""
    if not isinstance(entry, dict):
        return None
    msg = entry.get("message")
    etype = entry.get("type")
    if etype == "message" and isinstance(msg, dict):
        role = msg.get("role")
        if role == "bashExecution":
            return f"{as_str(msg.get('command'))}\n{as_str(msg.get('output'))}"
        if role in ("branchSummary", "compactionSummary"):
            return as_str(msg.get("summary"))
        if role == "system":  # the prompt text, and the tools' definitions the model also reads
            tools = msg.get("toolsAdded")
            return system_text(msg) + (f"\n{json_compact(tools)}" if tools else "")
        return llm_text(msg)
    if etype in ("compaction", "branch_summary"):
        return as_str(entry.get("summary"))
    if etype == "custom_message":
        return llm_text({"content": entry.get("content")})
    return None
