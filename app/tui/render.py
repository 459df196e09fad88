"""Turning one entry (its full JSON, re-read from the file) into Rich renderables for the detail pane.

`entry_parts` gives a list of parts: Rich renderables, and `Fold`s that the view shows collapsed.
Session text is never markup: strings become `Text` after `make_safe`; assistant and summary text is
Markdown built from its source, with hyperlinks off and every parsed token made safe again (entities such
as `&#x202e;` decode to real characters only after parsing). Every part is bounded: a field keeps at most
`MAX_CHARS` characters, and what is shown unfolded is a few thousand, so the render that Textual does on the
main thread stays short even for a 50 MB tool result. Highlighting is done here (pygments, in the caller's
worker thread) and handed over as styled `Text`, never as a `Syntax` that would lex again while painting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import orjson
from pitree.session.dialect_omp import OMP_ROLES, is_truncated
from pitree.session.entries import parse_timestamp
from pitree.session.text import as_str, make_safe
from pitree.session.tree import SessionTree
from pitree.store.blobs import blob_text, is_blob_ref
from pitree.summary.tokens import llm_text
from rich.console import RenderableType
from rich.text import Text

from .lexers import call_path, lexer_for_path, lexer_for_text

MAX_CHARS = 200_000  # of one field; the rest is counted, not shown
HEAD_LINES = 40  # shown unfolded; the rest of a long output goes into a Fold
HEAD_CHARS = 8_000  # ... and at most this much, for outputs made of a few enormous lines
HIGHLIGHT_MAX = 20_000  # a longer fold body is shown as plain text (a dense highlight renders slowly)
MARKDOWN_MAX = 20_000  # assistant text beyond this is shown as plain text in a Fold
THEME = "ansi_dark"  # ANSI colours follow the terminal's own palette


@dataclass(frozen=True, slots=True)
class Fold:
    """A part shown collapsed under `title` (a plain string: no session text goes into a title)."""

    title: str
    body: tuple[RenderableType, ...]
    collapsed: bool = True


Part = RenderableType | Fold


# ---- small pieces -----------------------------------------------------------------------------------------


def safe_text(value: Any, style: str = "", *, one_line: bool = False) -> Text:
    """Any JSON value as literal Text with control characters visible."""
    return Text(make_safe(as_str(value), keep_newlines=not one_line), style=style)


def label(name: str, value: Any, style: str = "") -> Text:
    """`name: value` on one line, the value literal (JSON null shown as `null`)."""
    if value is None:
        return Text(f"{name}: ", "dim") + Text("null", "dim italic")
    return Text(f"{name}: ", "dim") + safe_text(value, style, one_line=True)


def cut(text: str, limit: int = MAX_CHARS) -> tuple[str, int]:
    """The first `limit` characters and how many were left out."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def _note(left_out: int, unit: str = "characters") -> Text | None:
    return Text(f"… {left_out:,} more {unit} not shown", "dim italic") if left_out else None


def highlighted(code: str, lexer: str | None, style: str = "") -> Text:
    """`code` (already safe) as wrapping Text, highlighted by pygments when a lexer is given."""
    if not lexer:
        return Text(code, style)
    from rich.syntax import Syntax  # on first use, as Markdown (pygments comes with it)

    text = Syntax(code, lexer, theme=THEME, word_wrap=True).highlight(code)
    text.no_wrap = False
    text.rstrip()
    return text


def _split_head(text: str, lines: int, chars: int) -> tuple[str, str]:
    pos = -1
    for _ in range(lines):
        pos = text.find("\n", pos + 1, chars + 1)
        if pos < 0:
            break
    if pos >= 0:
        return text[:pos], text[pos + 1 :]
    if len(text) <= chars:
        return text, ""
    return text[:chars], text[chars:]


def folded(title: str, value: Any, lexer: str | None = None, style: str = "") -> Fold:
    """All of `value` (up to MAX_CHARS) in a Fold, highlighted unless it is long."""
    kept, left_out = cut(as_str(value))
    return _fold(title, make_safe(kept), _note(left_out), lexer, style)


def _fold(title: str, safe: str, note: Text | None, lexer: str | None, style: str = "") -> Fold:
    body: list[RenderableType] = [highlighted(safe, lexer if len(safe) <= HIGHLIGHT_MAX else None, style)]
    if note is not None:
        body.append(note)
    return Fold(title, tuple(body))


def fold_text(
    value: Any,
    lexer: str | None = None,
    *,
    style: str = "",
    head_lines: int = HEAD_LINES,
    head_chars: int = HEAD_CHARS,
) -> list[Part]:
    """Long output: its first lines shown, the rest (up to MAX_CHARS) in a Fold titled "… N more lines"."""
    kept, left_out = cut(as_str(value))
    parts = _head_and_fold(make_safe(kept), _note(left_out), lexer, style, head_lines, head_chars)
    if is_truncated(value):  # the end of the text is gone from the file itself
        parts.append(Text("cut by oh-my-pi when it saved the session (it keeps 500,000 characters)", "yellow"))
    return parts


def _head_and_fold(
    safe: str,
    note: Text | None,
    lexer: str | None,
    style: str = "",
    head_lines: int = HEAD_LINES,
    head_chars: int = HEAD_CHARS,
) -> list[Part]:
    head, rest = _split_head(safe, head_lines, head_chars)
    parts: list[Part] = [highlighted(head, lexer, style)]
    if rest:
        lines = rest.count("\n") + (0 if rest.endswith("\n") else 1)
        parts.append(_fold(f"… {lines:,} more line{'s' if lines != 1 else ''}", rest, note, lexer, style))
    elif note is not None:
        parts.append(note)
    return parts


def markdown(value: Any) -> list[Part]:
    """Markdown from its source; beyond MARKDOWN_MAX the rest is plain text in a Fold (`render_markdown`,
    imported on first use: markdown-it and Rich's Markdown cost ~50 ms of the explorer's start)."""
    from .render_markdown import markdown as render

    return render(value)


def json_text(value: Any, limit: int = MAX_CHARS) -> tuple[str, int]:
    """`value` as indented JSON, cut at `limit` bytes (never decoding more), and how many bytes were cut."""
    try:
        data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:
        data = as_str(value).encode("utf-8", "replace")
    if len(data) <= limit:
        return data.decode("utf-8", "replace"), 0
    return data[:limit].decode("utf-8", "ignore"), len(data) - limit


def json_view(value: Any, *, head_lines: int = HEAD_LINES, head_chars: int = HEAD_CHARS) -> list[Part]:
    """A JSON value pretty-printed and highlighted, folded when long."""
    text, left_out = json_text(value)
    return _head_and_fold(make_safe(text), _note(left_out, "bytes"), "json", "", head_lines, head_chars)


# ---- blocks and messages ----------------------------------------------------------------------------------


def image_placeholder(block: dict[str, Any]) -> Text:
    """`[image: image/png, 12.3 KB]`, the size decoded from the base64 length; never the data."""
    data = block.get("data")
    mime = make_safe(as_str(block.get("mimeType")) or "unknown type", keep_newlines=False)
    if not isinstance(data, str):
        return Text(f"[image: {mime}, no data]", "bold blue")
    if is_blob_ref(data):  # oh-my-pi stored the bytes in its blob folder
        return Text(f"[image: {mime}, {blob_text(data)}]", "bold blue")
    size = len(data) * 3 // 4 - (2 if data.endswith("==") else 1 if data.endswith("=") else 0)
    shown = f"{size / 1024:.1f} KB" if size < 1024 * 1024 else f"{size / 1024 / 1024:.1f} MB"
    return Text(f"[image: {mime}, {shown}]", "bold blue")


def _other_block(block: Any) -> list[Part]:
    kind = block.get("type") if isinstance(block, dict) else None
    head = Text("block ", "dim") + (
        safe_text(kind, "bold", one_line=True) if kind is not None else Text(f"({type(block).__name__})", "dim")
    )
    return [head, *json_view(block)]


def content_parts(content: Any, lexer: str | None = None) -> list[Part]:
    """User, tool-result and custom content shown literally: strings, text blocks, image placeholders."""
    if isinstance(content, str):
        return fold_text(content, lexer)
    if content is None:
        return [Text("(no content)", "dim italic")]
    if not isinstance(content, list):
        return [Text(f"content is a {type(content).__name__}: ", "red"), *json_view(content)]
    out: list[Part] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            out.extend(fold_text(block.get("text"), lexer))
        elif isinstance(block, dict) and block.get("type") == "image":
            out.append(image_placeholder(block))
        else:
            out.extend(_other_block(block))
    return out or [Text("(empty content)", "dim italic")]


def _num(value: Any, cost: bool = False) -> Text:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return safe_text(value, "red" if value is not None else "dim", one_line=True)
    if cost:
        return Text(f"${value:,.4f}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return Text(f"{value:,}" if isinstance(value, int) else f"{value:,.2f}")


def usage_table(usage: Any) -> RenderableType:
    """input, output, cacheRead, cacheWrite, totalTokens and cost of one assistant turn."""
    if not isinstance(usage, dict):
        return label("usage", usage, "red")
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="dim", padding=(0, 2, 0, 0))
    cols = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
    for name in (*cols, "cost"):
        table.add_column(Text(name), justify="right")
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else cost
    table.add_row(*(_num(usage.get(c)) for c in cols), _num(total, cost=True))
    return table


_ASSISTANT_KNOWN = {"role", "content", "provider", "model", "api", "usage", "stopReason", "errorMessage", "timestamp"}


def assistant_parts(msg: dict[str, Any]) -> list[Part]:
    out: list[Part] = []
    content = msg.get("content")
    blocks = content if isinstance(content, list) else []
    if isinstance(content, str):
        out.extend(markdown(content))
    elif content is not None and not isinstance(content, list):
        out += [Text(f"content is a {type(content).__name__}: ", "red"), *json_view(content)]
    for block in blocks:
        btype = block.get("type") if isinstance(block, dict) else None
        if not isinstance(block, dict) or btype not in ("text", "thinking", "toolCall", "image"):
            out.extend(_other_block(block))
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
    if content is None or content == []:
        out.append(Text("(no content)" if content is None else "(empty content)", "dim italic"))
    error = msg.get("errorMessage")
    if error:
        out.append(Text("error: ", "bold red") + safe_text(error, "red"))
    if "usage" in msg:
        out.append(usage_table(msg.get("usage")))
    if msg.get("api") is not None:
        out.append(label("api", msg.get("api")))
    return out + extra_fields(msg, _ASSISTANT_KNOWN)


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


def _ref(tree: SessionTree | None, entry_id: Any) -> Text:
    """An entry id and where it is (line), or that it is not in this session."""
    t = safe_text(entry_id, "cyan", one_line=True) if entry_id is not None else Text("(none)", "dim")
    if tree is not None and isinstance(entry_id, str):
        target = tree.get(entry_id)
        if target is not None:
            t.append(f"  (line {target.line:,})", "dim")
        else:
            t.append("  (not in this session)", "yellow")
    return t


def _tool_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                return block["text"]  # type: ignore[no-any-return]
    return ""


# ---- entries ----------------------------------------------------------------------------------------------

_COMMON = {"type", "id", "parentId", "timestamp"}


def field_parts(key: Any, value: Any) -> list[Part]:
    """One field, shown generically: scalars on one line, text and JSON below the key (folded when long)."""
    name = make_safe(as_str(key), keep_newlines=False)
    if isinstance(value, str) and "\n" not in value and len(value) <= 200:
        return [label(name, value)]
    if value is None or isinstance(value, bool | int | float):
        return [label(name, value, "" if value is not None else "dim")]
    if isinstance(value, str):
        return [Text(f"{name}:", "dim"), *fold_text(value)]
    compact = as_str(value)
    if len(compact) <= 100:
        return [Text(f"{name}: ", "dim") + highlighted(make_safe(compact), "json")]
    return [Text(f"{name}:", "dim"), *json_view(value)]


def extra_fields(obj: dict[str, Any], known: set[str]) -> list[Part]:
    """Every field of `obj` not in `known`, generically (unknown fields are shown, never dropped)."""
    out: list[Part] = []
    for key, value in obj.items():
        if key not in known:
            out.extend(field_parts(key, value))
    return out


def _message_parts(msg: Any, tree: SessionTree | None) -> list[Part]:
    if not isinstance(msg, dict):
        if msg is None:
            return [Text("this message entry has no message", "red")]
        return [Text(f"message is a {type(msg).__name__}, not an object:", "red"), *json_view(msg)]
    role = msg.get("role")
    if role == "assistant":
        return assistant_parts(msg)
    if role == "user":
        return content_parts(msg.get("content")) + extra_fields(msg, {"role", "content", "timestamp"})
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
        parts.extend(content_parts(content, lexer))
        details = msg.get("details")
        if isinstance(details, dict) and isinstance(details.get("diff"), str):
            parts.append(Text("diff:", "dim"))
            parts.extend(fold_text(details["diff"], "diff"))
            details = {k: v for k, v in details.items() if k != "diff"}
        if details:
            text, left_out = json_text(details)
            parts.append(_fold("details (JSON)", make_safe(text), _note(left_out, "bytes"), "json"))
        known = {"role", "toolName", "isError", "toolCallId", "content", "details", "timestamp"}
        return parts + extra_fields(msg, known)
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
        return [head, *fold_text(msg.get("output")), *extra_fields(msg, known)]
    if role in ("branchSummary", "compactionSummary"):
        return [*markdown(msg.get("summary")), *extra_fields(msg, {"role", "summary", "timestamp"})]
    if role == "custom":
        parts = [label("customType", msg.get("customType"), "bold")]
    elif isinstance(role, str) and role in OMP_ROLES:  # oh-my-pi's own roles: their fields follow
        parts = [Text(f"{role} (oh-my-pi)", "bold")]
    else:
        parts = [Text("role not known to pitree: ", "yellow") + safe_text(role, "bold", one_line=True)]
    if "content" in msg:
        parts.extend(content_parts(msg.get("content")))
    return parts + extra_fields(msg, {"role", "content", "customType", "timestamp"})


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


def entry_parts(entry: Any, tree: SessionTree | None = None) -> list[Part]:
    """Everything about one entry, as parts for the view. Never raises, whatever the field types."""
    if not isinstance(entry, dict):
        return [Text(f"this entry is a {type(entry).__name__}, not an object:", "red"), *json_view(entry)]
    return _group(_entry_parts(entry, tree) + _common_fields(entry))


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


def _entry_parts(entry: dict[str, Any], tree: SessionTree | None) -> list[Part]:
    etype = entry.get("type")
    parts: list[Part]
    if etype == "message":
        return _message_parts(entry.get("message"), tree) + extra_fields(entry, _COMMON | {"message"})
    if etype == "compaction":
        parts = [
            label("tokensBefore", entry.get("tokensBefore"), "bold"),
            Text("firstKeptEntryId: ", "dim") + _ref(tree, entry.get("firstKeptEntryId")),
        ]
        if entry.get("fromHook"):
            parts.append(Text("written by an extension (fromHook)", "dim italic"))
        parts += [*markdown(entry.get("summary")), *file_lists(entry.get("details"))]
        known = {"tokensBefore", "firstKeptEntryId", "fromHook", "summary", "details"}
        return parts + extra_fields(entry, _COMMON | known)
    if etype == "branch_summary":
        parts = [Text("fromId: ", "dim") + _ref(tree, entry.get("fromId"))]
        if entry.get("fromHook"):
            parts.append(Text("written by an extension (fromHook)", "dim italic"))
        parts += [*markdown(entry.get("summary")), *file_lists(entry.get("details"))]
        return parts + extra_fields(entry, _COMMON | {"fromId", "fromHook", "summary", "details"})
    if etype == "custom_message":
        parts = [label("customType", entry.get("customType"), "bold")]
        if "display" in entry:
            parts.append(label("display", entry.get("display")))
        parts.extend(content_parts(entry.get("content")))
        return parts + extra_fields(entry, _COMMON | {"customType", "display", "content"})
    if etype == "label":
        value = entry.get("label")
        parts = [
            Text("targetId: ", "dim") + _ref(tree, entry.get("targetId")),
            label("label", value, "bold yellow") if value else Text("label: (cleared)", "dim"),
        ]
        return parts + extra_fields(entry, _COMMON | {"targetId", "label"})
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
        return llm_text(msg)
    if etype in ("compaction", "branch_summary"):
        return as_str(entry.get("summary"))
    if etype == "custom_message":
        return llm_text({"content": entry.get("content")})
    return None
