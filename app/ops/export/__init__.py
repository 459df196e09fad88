"""Export of one path (root -> leaf): Markdown, one self-contained HTML file, or a new Pi session (Pi's fork).

`export_bytes` renders, `export_path` renders and writes atomically (what the CLI and the TUI call).
Markdown and HTML share one description of the path built here (`build_document`): sections with plain,
untrusted text parts; each renderer escapes every string at the moment it writes it (markdown.py, html.py).

Decisions: tool calls are folded together with their result (a result whose call is not on the path is
folded on its own); thinking is left out unless asked for; images are a placeholder with the MIME type and
the decoded size, which HTML also embeds when the data is a real PNG, JPEG, GIF or WebP of at most
`html.EMBED_MAX` bytes (oh-my-pi blob references resolved); Markdown never carries a session's payloads;
timestamps are shown in UTC.
"""

from __future__ import annotations

import math
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pitree import __version__
from pitree.ops.export import pi1
from pitree.ops.export.doc import (
    Document,
    ExportError,
    Part,
    Section,
    content_parts,
    image_part,
    image_placeholder,
    json_pretty,
    markdown_parts,
)
from pitree.ops.export.doc import describe as _describe
from pitree.session.content import tool_calls
from pitree.session.context import SessionContext, build_context, model_label
from pitree.session.edits import path_edits
from pitree.session.entries import Node
from pitree.session.text import as_str, count, cut_huge, format_tool_call, js_string
from pitree.session.tree import SessionTree
from pitree.session.usage import Usage
from pitree.store.session_file import EntryReader, SessionFileError

__all__ = ["Document", "ExportError", "Part", "Section", "content_parts", "image_placeholder", "json_pretty"]

FORMATS = ("md", "html", "jsonl")


# ---- small readers of the entry JSON (any field may be missing or of the wrong type) ----------------------


def format_time(node: Node) -> str | None:
    ts = node.ts
    if ts != ts or math.isinf(ts):
        return None
    try:
        return datetime.fromtimestamp(ts / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return None


def _model_of(node: Node) -> str | None:
    if node.model is None:
        return None
    provider, model = node.model
    return f"{js_string(provider)}/{js_string(model)}"


# ---- the document -----------------------------------------------------------------------------------------


class _Builder:
    def __init__(self, tree: SessionTree, path: list[Node], entries: list[dict[str, Any]], thinking: bool) -> None:
        self.tree = tree
        self.thinking = thinking
        self.path = path
        self.entries = entries
        # Tool results on the path, by the call they answer: folded under that call, not shown again.
        self.results: dict[str, tuple[Node, dict[str, Any]]] = {}
        self.paired: set[int] = set()
        by_node = {id(n): e for n, e in zip(path, entries, strict=True)}
        self.edits = path_edits(path, lambda nodes: [by_node[id(n)] for n in nodes])  # as at the exported leaf
        self.edit_entries = {n.id: e for n, e in zip(path, entries, strict=True) if n.type == "context_edit"}
        calls_seen: set[str] = set()
        for node, entry in zip(path, entries, strict=True):
            msg = entry.get("message")
            if entry.get("type") != "message" or not isinstance(msg, dict):
                continue
            if msg.get("role") == "assistant":
                calls_seen.update(b["id"] for b in tool_calls(msg.get("content")) if isinstance(b.get("id"), str))
            elif msg.get("role") == "toolResult":
                call_id = msg.get("toolCallId")
                if isinstance(call_id, str) and call_id in calls_seen and call_id not in self.results:
                    self.results[call_id] = (node, msg)
                    self.paired.add(id(node))

    def sections(self) -> list[Section]:
        out = []
        for node, entry in zip(self.path, self.entries, strict=True):
            if id(node) in self.paired:
                continue
            section = self.section(node, entry)
            section.parts[:0] = pi1.edited_note(node, self.edits, self.edit_entries)
            section.entry_id, section.time = node.id, format_time(node)
            section.label = self.tree.labels.get(node.id)
            out.append(section)
        return out

    def section(self, node: Node, entry: dict[str, Any]) -> Section:
        etype = entry.get("type")
        if etype == "message":
            msg = entry.get("message")
            if not isinstance(msg, dict):
                return Section("unknown", "message", parts=[Part("note", f"message is {_describe(msg)}")])
            return self.message(node, msg)
        if etype == "compaction":
            details = entry.get("details")
            parts = [
                Part(
                    "note",
                    f"tokens before: {js_string(entry.get('tokensBefore'))} · first kept entry: "
                    f"{js_string(entry.get('firstKeptEntryId'))}"
                    + (" · from an extension" if entry.get("fromHook") else ""),
                ),
                *markdown_parts(entry.get("summary")),
            ]
            parts.extend(self.file_lists(details))
            parts.extend(pi1.compaction_parts(entry))
            return Section("compaction", "compaction summary", parts=parts)
        if etype == "branch_summary":
            parts = [Part("note", f"summary of an abandoned branch (from {js_string(entry.get('fromId'))})")]
            parts.extend(markdown_parts(entry.get("summary")))
            parts.extend(self.file_lists(entry.get("details")))
            return Section("branchSummary", "branch summary", parts=parts)
        if etype == "custom_message":
            parts = content_parts(entry.get("content"))
            if entry.get("display") is False:
                parts.insert(0, Part("note", "not displayed in Pi (display: false); sent to the model"))
            title = f"custom message: {js_string(entry.get('customType'))}"
            return Section("custom", title, parts=parts)
        if etype == "model_change":
            if "modelId" not in entry and "model" in entry:  # oh-my-pi: {model: "provider/id", role}
                role = entry.get("role")
                shown = f" ({js_string(role)})" if role not in (None, "default") else ""
                return Section("setting", f"model → {js_string(entry.get('model'))}{shown}", compact=True)
            title = f"model → {js_string(entry.get('provider'))}/{js_string(entry.get('modelId'))}"
            return Section("setting", title, compact=True)
        if etype == "thinking_level_change":
            return Section("setting", f"thinking level → {js_string(entry.get('thinkingLevel'))}", compact=True)
        if etype == "label":
            label, target = entry.get("label"), js_string(entry.get("targetId"))
            title = f"label on {target}: {js_string(label)}" if label else f"label cleared on {target}"
            return Section("setting", title, compact=True)
        if etype == "session_info":
            name = entry.get("name")
            return Section("setting", f"session name: {js_string(name) if name else '(cleared)'}", compact=True)
        if etype == "context_edit":
            return pi1.context_edit_section(entry, self.edits)
        if etype == "usage":
            return pi1.usage_section(entry)
        if etype == "custom":
            parts = [Part("fold", "data", parts=[Part("code", json_pretty(entry.get("data")), "json")])]
            title = f"extension state: {js_string(entry.get('customType'))}"
            return Section("setting", title, parts=parts, compact=True)
        return Section(
            "unknown",
            f"unknown entry type: {js_string(etype)}",
            parts=[Part("fold", "entry JSON", parts=[Part("code", json_pretty(entry), "json")])],
        )

    def file_lists(self, details: Any) -> list[Part]:
        if not isinstance(details, dict):
            return []
        lines = []
        for key, name in (("readFiles", "read"), ("modifiedFiles", "modified")):
            files = details.get(key)
            if isinstance(files, list) and files:
                lines.append(f"{name}:")
                lines.extend("  " + as_str(f) for f in files)
        return [Part("fold", "files", parts=[Part("code", "\n".join(lines))])] if lines else []

    def message(self, node: Node, msg: dict[str, Any]) -> Section:
        role = msg.get("role")
        if role == "user":
            return Section("user", "user", parts=content_parts(msg.get("content")))
        if role == "assistant":
            return Section("assistant", "assistant", model=_model_of(node), parts=self.assistant(msg))
        if role == "toolResult":
            name = js_string(msg.get("toolName") or "tool")
            fold = Part("fold", f"[{name}] result" + self.error_mark(msg), parts=self.result_parts(msg))
            return Section("toolResult", f"tool result: {name}", parts=[fold])
        if role == "bashExecution":
            return Section("bash", "bash (run by the user)", parts=self.bash(msg))
        if role == "custom":
            parts = content_parts(msg.get("content"))
            if msg.get("display") is False:
                parts.insert(0, Part("note", "not displayed in Pi (display: false)"))
            return Section("custom", f"custom: {js_string(msg.get('customType'))}", parts=parts)
        if role == "system":
            return pi1.system_section(msg)
        if role in ("branchSummary", "compactionSummary"):
            return Section("branchSummary", js_string(role), parts=content_parts(as_str(msg.get("summary"))))
        parts = content_parts(msg.get("content")) if "content" in msg else []
        parts.append(Part("fold", "message JSON", parts=[Part("code", json_pretty(msg), "json")]))
        return Section("unknown", f"role: {js_string(role)}", parts=parts)

    @staticmethod
    def error_mark(msg: dict[str, Any]) -> str:
        return " (error)" if msg.get("isError") is True else ""

    def result_parts(self, msg: dict[str, Any]) -> list[Part]:
        parts = content_parts(msg.get("content"), as_code=True)
        return parts or [Part("note", "(no output)")]

    def assistant(self, msg: dict[str, Any]) -> list[Part]:
        parts: list[Part] = []
        content = msg.get("content")
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    parts.append(Part("code", json_pretty(block), "json"))
                    continue
                btype = block.get("type")
                if btype == "text":
                    text = as_str(block.get("text"))
                    if text:
                        parts.append(Part("markdown", text))
                elif btype == "thinking":
                    text = as_str(block.get("thinking"))
                    if self.thinking and text:
                        parts.append(Part("fold", "thinking", parts=[Part("markdown", text)]))
                elif btype == "toolCall":
                    parts.append(self.tool_call(block))
                elif btype == "image":
                    parts.append(image_part(block))
                else:
                    parts.append(Part("note", f"[{js_string(btype)} block]"))
        else:
            parts.extend(content_parts(content))
        stop = msg.get("stopReason")
        if stop in ("error", "aborted", "length") or msg.get("errorMessage"):
            why = f"stopped: {js_string(stop)}"
            if msg.get("errorMessage"):
                why += f" — {as_str(msg.get('errorMessage'))}"
            parts.append(Part("note", why))
        return parts

    def tool_call(self, block: dict[str, Any]) -> Part:
        call_id = block.get("id")
        found = self.results.get(call_id) if isinstance(call_id, str) else None
        summary = format_tool_call(block.get("name"), block.get("arguments"))
        body = [Part("code", json_pretty(block.get("arguments")), "json")]
        if found is None:
            body.append(Part("note", "no result on this path"))
        else:
            summary += self.error_mark(found[1])
            body.append(Part("note", "result:"))
            body.extend(self.result_parts(found[1]))
        return Part("fold", summary, parts=body)

    def bash(self, msg: dict[str, Any]) -> list[Part]:
        parts = [Part("code", "$ " + as_str(msg.get("command")), "sh")]
        notes = [f"exit code {js_string(msg.get('exitCode'))}"]
        if msg.get("cancelled"):
            notes.append("cancelled")
        if msg.get("truncated"):
            notes.append("output truncated")
        if msg.get("excludeFromContext"):
            notes.append("not sent to the model (!!)")
        output = as_str(msg.get("output"))
        parts.append(Part("fold", "output · " + ", ".join(notes), parts=[Part("code", output or "(no output)")]))
        return parts


def _usage_line(path: list[Node]) -> str:
    total = Usage()  # tokens as Pi 1.x sums them: the four parts, never a stored totalTokens
    for node in path:
        if node.usage is not None:
            total.add(node.usage)
    names = ("input", "output", "cache read", "cache write", "total")
    shown = " · ".join(f"{name} {int(v):,}" for name, v in zip(names, total.values, strict=False))
    return f"{shown} tokens · cost ${total.values[5]:.4f}"


def _context_line(ctx: SessionContext) -> str:
    """The size the status bar and `pitree context` give: Pi's estimateProjectedContextTokens."""
    size = ctx.size
    how = (
        f"reply {size.usage_node.id}'s usage plus estimates of any messages after it"
        if size.usage_node is not None
        else "estimated from the messages: no usable reply usage"
    )
    return f"{count(len(ctx.messages), 'message')}; Pi's context size {size.tokens:,} tokens ({how})"


def build_document(tree: SessionTree, reader: EntryReader, leaf: Node | None, thinking: bool = False) -> Document:
    """The path root -> `leaf` (the file's leaf when None) as sections for the Markdown and HTML renderers."""
    leaf = leaf if leaf is not None else tree.leaf
    path = tree.branch(leaf)
    try:
        entries = reader.entries(path, shape=cut_huge)  # a 200 MB tool result is exported cut, with its size
    except SessionFileError as exc:
        raise ExportError(str(exc)) from None
    header = tree.header or {}
    ctx = build_context(tree, leaf)
    models: list[str] = []
    for node in path:
        name = _model_of(node)
        if node.type == "model_change" and node.meta:
            name = f"{js_string(node.meta.get('provider'))}/{js_string(node.meta.get('modelId'))}"
        if name and name not in models:
            models.append(name)
    meta = [
        ("session", js_string(header.get("id")) if header else "(no session header)"),
        ("name", tree.name or "(none)"),
        ("cwd", js_string(header.get("cwd"))),
        ("file version", f"{tree.version:g}"),
    ]
    if header.get("parentSession"):
        meta.append(("forked from", js_string(header.get("parentSession"))))
    meta += [
        ("leaf", leaf.id if leaf else "(empty session)"),
        ("entries on this path", str(len(path))),
        ("models", ", ".join(models) or "(none)"),
        ("model at the leaf", model_label(ctx.model) if ctx.model else "(none)"),
        ("thinking level at the leaf", js_string(ctx.thinking_level)),
        ("usage on this path", _usage_line(path)),
        ("context at the leaf", _context_line(ctx)),
        ("thinking", "shown" if thinking else "omitted"),
        ("exported by", f"pitree {__version__}"),
    ]
    title = tree.name or (f"Pi session {js_string(header.get('id'))}" if header else "Pi session")
    return Document(title, meta, _Builder(tree, path, entries, thinking).sections())


# ---- rendering and writing --------------------------------------------------------------------------------


def export_bytes(
    tree: SessionTree,
    reader: EntryReader,
    leaf: Node | None,
    fmt: str,
    thinking: bool = False,
    **fork_options: Any,
) -> bytes:
    """The exported file's bytes. `fork_options` (jsonl only) go to `fork.fork_lines` (session_id, timestamp)."""
    if fmt == "md":
        from pitree.ops.export.markdown import render_markdown

        return render_markdown(build_document(tree, reader, leaf, thinking)).encode()
    if fmt == "html":
        from pitree.ops.export.html import render_html

        return render_html(build_document(tree, reader, leaf, thinking)).encode()
    if fmt == "jsonl":
        from pitree.ops.export.fork import fork_lines

        header = tree.header or {}
        cwd = header.get("cwd")
        options: dict[str, Any] = {
            "parent_session": os.path.abspath(reader.path),
            "cwd": cwd if cwd is not None else os.getcwd(),  # Pi: header.cwd ?? process.cwd()
            **fork_options,
        }
        try:
            lines = fork_lines(tree, reader.raw, leaf, **options)
        except SessionFileError as exc:
            raise ExportError(str(exc)) from None
        return b"".join(line + b"\n" for line in lines)
    raise ExportError(f"unknown export format {fmt!r} (choose from {', '.join(FORMATS)})")


def export_path(
    tree: SessionTree,
    reader: EntryReader,
    leaf: Node | None,
    fmt: str,
    out: Path | str,
    thinking: bool = False,
    force: bool = False,
) -> Path:
    """Export root -> `leaf` of the session `reader` reads to the file `out` (atomically); returns `out`.

    Refuses (ExportError) an existing `out` without `force`, and always `out` equal to the source file."""
    from pitree.store.export_file import ExportFileError, check_target, write_export

    out = Path(out)
    try:
        check_target(out, force=force, source=reader.path)
        data = export_bytes(tree, reader, leaf, fmt, thinking)
        return write_export(out, data, force=force, source=reader.path)
    except ExportFileError as exc:
        raise ExportError(str(exc)) from None
