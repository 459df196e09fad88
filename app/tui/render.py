"""Turning one entry (its full JSON, re-read from the file) into Rich renderables for the detail pane.

Session text is never markup: plain strings become `Text` with control characters made visible;
assistant and summary text is rendered as Markdown from its source with hyperlinks disabled.
Huge fields are cut (`MAX_CHARS`) with a note of what was left out, so opening one never stalls.
"""

from __future__ import annotations

import math
import time
from typing import Any

import orjson
from pitree.session.entries import Node
from pitree.session.text import as_str, make_safe
from pitree.session.tree import SessionTree
from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

MAX_CHARS = 200_000
FOLD_LINES = 40


def safe_text(value: Any, style: str = "") -> Text:
    return Text(make_safe(as_str(value)), style=style)


def _cut(text: str, limit: int = MAX_CHARS) -> tuple[str, str]:
    if len(text) <= limit:
        return text, ""
    return text[:limit], f"… {len(text) - limit:,} more characters not shown (press r for the raw line)"


def markdown(text: Any) -> RenderableType:
    source, note = _cut(make_safe(as_str(text)))
    md = Markdown(source, hyperlinks=False, code_theme="ansi_dark")
    return Group(md, Text(note, "dim italic")) if note else md


def when(ts: float, now: float | None = None) -> str:
    if ts != ts or math.isinf(ts):
        return "no timestamp"
    seconds = (now if now is not None else time.time()) - ts / 1000
    iso = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts / 1000)) + f".{int(ts % 1000):03d}Z"
    for unit, size in (("day", 86400), ("hour", 3600), ("min", 60)):
        if abs(seconds) >= size:
            n = int(seconds // size)
            return f"{iso} ({n} {unit}{'s' if n != 1 and unit != 'min' else ''} ago)"
    return f"{iso} ({int(seconds)} s ago)"


def header(node: Node, tree: SessionTree, tiktoken: int | None) -> Text:
    t = Text()
    t.append(node.type or "?", "bold magenta")
    if node.role:
        t.append(f" · {make_safe(node.role, keep_newlines=False)}", "bold")
    t.append(f"  id {node.id}", "cyan")
    t.append(f"  parent {node.parent.id if node.parent else (node.parent_id or 'none (root)')}", "dim")
    t.append(f"  line {node.line}\n", "dim")
    t.append(when(node.ts), "dim")
    label = tree.labels.get(node.id)
    if label:
        t.append("  label ", "dim")
        t.append(make_safe(label, keep_newlines=False), "bold yellow")
    if node is tree.leaf:
        t.append("  ← leaf", "bold yellow")
    t.append(f"\ntokens: ~{node.est:,} (Pi's estimate)")
    if tiktoken is not None:
        t.append(f", {tiktoken:,} (cl100k)")
    if node.model:
        t.append("\nmodel: ")
        t.append(make_safe(f"{as_str(node.model[0])}/{as_str(node.model[1])}", keep_newlines=False), "green")
    return t


def _image(block: dict[str, Any]) -> Text:
    data = block.get("data")
    size = len(data) * 3 // 4 if isinstance(data, str) else 0
    mime = make_safe(as_str(block.get("mimeType") or "unknown type"), keep_newlines=False)
    return Text(f"[image: {mime}, {size / 1024:.1f} KB]", "bold blue")


def folded_output(text: Any, lexer: str | None = None) -> RenderableType:
    """Long output shows its first FOLD_LINES lines and a count of the rest."""
    source, note = _cut(make_safe(as_str(text)))
    lines = source.split("\n")
    shown = "\n".join(lines[:FOLD_LINES])
    parts: list[RenderableType] = []
    if lexer:
        parts.append(Syntax(shown, lexer, theme="ansi_dark", word_wrap=True))
    else:
        parts.append(Text(shown))
    if len(lines) > FOLD_LINES:
        parts.append(Text(f"… {len(lines) - FOLD_LINES:,} more lines (press r for the raw line)", "dim italic"))
    if note:
        parts.append(Text(note, "dim italic"))
    return Group(*parts)


_LEXERS = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".json": "json",
    ".md": "markdown",
    ".sh": "bash",
    ".rs": "rust",
    ".go": "go",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".html": "html",
    ".css": "css",
    ".tsx": "tsx",
    ".c": "c",
    ".java": "java",
}


def guess_lexer(path: str | None) -> str | None:
    if not path:
        return None
    for ext, lexer in _LEXERS.items():
        if path.endswith(ext):
            return lexer
    return None


def content_blocks(content: Any, lexer: str | None = None) -> list[RenderableType]:
    """User / tool-result content: strings, text blocks, image placeholders, anything else as JSON."""
    if isinstance(content, str):
        return [folded_output(content, lexer)]
    if not isinstance(content, list):
        return [Text(f"(content is {type(content).__name__}: ", "red") + safe_text(content) + Text(")", "red")]
    out: list[RenderableType] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            out.append(folded_output(block.get("text"), lexer))
        elif isinstance(block, dict) and block.get("type") == "image":
            out.append(_image(block))
        else:
            out.append(Text("(block) ", "dim") + safe_text(block))
    return out


def json_view(value: Any) -> RenderableType:
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        text = as_str(value)
    source, note = _cut(make_safe(text))
    syntax = Syntax(source, "json", theme="ansi_dark", word_wrap=True)
    return Group(syntax, Text(note, "dim italic")) if note else syntax


def usage_table(usage: Any) -> RenderableType:
    if not isinstance(usage, dict):
        return Text("usage: ", "dim") + safe_text(usage)
    table = Table(box=None, show_header=True, pad_edge=False, header_style="dim")
    cols = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
    for c in (*cols, "cost"):
        table.add_column(c, justify="right")
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else cost
    table.add_row(*(make_safe(as_str(usage.get(c))) for c in cols), make_safe(as_str(total)))
    return table


def assistant_parts(msg: dict[str, Any]) -> list[RenderableType]:
    out: list[RenderableType] = []
    content = msg.get("content")
    blocks = content if isinstance(content, list) else [content]
    for block in blocks:
        if not isinstance(block, dict):
            out.append(safe_text(block))
            continue
        btype = block.get("type")
        if btype == "text":
            out.append(markdown(block.get("text")))
        elif btype == "thinking":
            thinking = as_str(block.get("thinking"))
            out.append(("thinking", thinking))  # type: ignore[arg-type]  # the view makes it collapsible
        elif btype == "toolCall":
            title = Text("tool call ", "bold") + safe_text(block.get("name"), "bold cyan")
            title.append(f"  {make_safe(as_str(block.get('id')), keep_newlines=False)}", "dim")
            out.append(Panel(json_view(block.get("arguments")), title=title, title_align="left", border_style="cyan"))
        else:
            out.append(Text("(block) ", "dim") + safe_text(block))
    if msg.get("errorMessage"):
        out.append(Text("error: ", "bold red") + safe_text(msg.get("errorMessage"), "red"))
    stop = msg.get("stopReason")
    if stop is not None:
        out.append(Text("stop reason: ", "dim") + safe_text(stop, "red" if stop in ("error", "aborted") else ""))
    if "usage" in msg:
        out.append(usage_table(msg.get("usage")))
    return out


def file_lists(details: Any) -> list[RenderableType]:
    if not isinstance(details, dict):
        return []
    out: list[RenderableType] = []
    for key in ("readFiles", "modifiedFiles"):
        files = details.get(key)
        if isinstance(files, list) and files:
            t = Text(f"{key}:\n", "bold")
            for f in files:
                t.append("  ")
                t.append_text(safe_text(f))
                t.append("\n")
            out.append(t)
    return out


def entry_parts(entry: dict[str, Any], tool_path: str | None = None) -> list[RenderableType]:
    """Everything about one entry, as a list of renderables (thinking as ("thinking", text) tuples)."""
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        if not isinstance(msg, dict):
            return [Text("message is not an object: ", "red") + safe_text(msg)]
        role = msg.get("role")
        if role == "assistant":
            return assistant_parts(msg)
        if role == "toolResult":
            head = Text("tool result ", "bold") + safe_text(msg.get("toolName"), "bold cyan")
            if msg.get("isError") is True:
                head.append("  ERROR", "bold white on red")
            return [head, *content_blocks(msg.get("content"), guess_lexer(tool_path))]
        if role == "bashExecution":
            head = Text("$ ", "bold") + safe_text(msg.get("command"), "bold")
            code = msg.get("exitCode")
            head.append(f"   exit {as_str(code)}", "red" if code not in (0, None) else "green")
            if msg.get("cancelled"):
                head.append("  cancelled", "yellow")
            return [head, folded_output(msg.get("output"))]
        parts: list[RenderableType] = []
        if role == "custom":
            parts.append(Text("custom type: ", "dim") + safe_text(msg.get("customType")))
        return [*parts, *content_blocks(msg.get("content"))]
    if etype in ("compaction", "branch_summary"):
        parts = []
        if etype == "compaction":
            parts.append(Text("tokens before: ", "dim") + safe_text(entry.get("tokensBefore"), "bold"))
            parts.append(Text("first kept entry: ", "dim") + safe_text(entry.get("firstKeptEntryId"), "cyan"))
        else:
            parts.append(Text("from: ", "dim") + safe_text(entry.get("fromId"), "cyan"))
        if entry.get("fromHook"):
            parts.append(Text("written by an extension (fromHook)", "dim"))
        parts.append(markdown(entry.get("summary")))
        return parts + file_lists(entry.get("details"))
    if etype == "custom_message":
        return [
            Text("custom type: ", "dim") + safe_text(entry.get("customType")),
            *content_blocks(entry.get("content")),
        ]
    skip = {"type", "id", "parentId", "timestamp"}
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for key, value in entry.items():
        if key not in skip:
            table.add_row(make_safe(str(key), keep_newlines=False), safe_text(value))
    return [table]
