"""The export's description of a path, shared by the Markdown and HTML renderers: sections of plain, untrusted
text parts (each renderer escapes every string as it writes it), the readers that turn content into parts, and
`ExportError`, the one error every export format raises."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from pitree.ops.errors import OpError
from pitree.session.text import as_str, js_string
from pitree.store.blobs import blob_text, is_blob_ref


class ExportError(OpError):
    """An export was refused or failed; the message is one line for the user. Nothing was written."""


class ExportCancelled(ExportError):
    """The user stopped the export (its progress callback raised this); nothing was written."""

    def __init__(self, message: str = "export cancelled; nothing was written") -> None:
        super().__init__(message)


@dataclass
class Part:
    """A piece of a section. `kind`: prose (running text, kept literal), markdown (a model's own Markdown:
    assistant text, thinking and summaries), code (verbatim block), note (a short remark of pitree's about the
    entry), fold (collapsed: `text` is its one-line summary, `parts` its body), or image (`text` its placeholder,
    `lang` its MIME type, `src` its data: only HTML embeds it)."""

    kind: str
    text: str = ""
    lang: str = ""
    parts: list[Part] = field(default_factory=list)
    src: str = ""  # an image part's data: base64, or an oh-my-pi blob reference (resolved when embedded)


@dataclass
class Section:
    """One entry of the path. `compact` entries (settings, labels, names) are shown as a single line."""

    kind: str  # a CSS-class-safe word: user, assistant, toolResult, bash, compaction, setting, ...
    title: str
    entry_id: str = ""
    time: str | None = None
    model: str | None = None
    label: str | None = None
    parts: list[Part] = field(default_factory=list)
    compact: bool = False


@dataclass
class Document:
    title: str
    meta: list[tuple[str, str]]
    sections: Iterable[Section]  # made as they are iterated (build.py): read them once


# ---- content as parts (any field may be missing or of the wrong type) --------------------------------------


def image_placeholder(block: dict[str, Any]) -> str:
    """`[image: image/png, 12.3 KB]`: what every format says of an image (HTML may also embed it)."""
    mime = block.get("mimeType")
    data = block.get("data")
    mime_s = js_string(mime) if mime is not None else "unknown type"
    if isinstance(data, str) and is_blob_ref(data):
        return f"[image: {mime_s}, {blob_text(data)}]"
    if isinstance(data, str):
        size = max(0, len(data) * 3 // 4 - data[-2:].count("="))
        shown = (
            f"{size} bytes"
            if size < 1024
            else f"{size / 1024:.1f} KB"
            if size < 1 << 20
            else f"{size / (1 << 20):.1f} MB"
        )
    else:
        shown = "no data"
    return f"[image: {mime_s}, {shown}]"


def image_part(block: dict[str, Any]) -> Part:
    """An image block: its placeholder, with the data for a format that embeds it."""
    data, mime = block.get("data"), block.get("mimeType")
    mime_s = mime if isinstance(mime, str) else ""
    return Part("image", image_placeholder(block), mime_s, src=data if isinstance(data, str) else "")


def markdown_parts(summary: Any) -> list[Part]:
    """A compaction or branch summary: Markdown the model wrote (a wrong type is shown as such)."""
    if isinstance(summary, str):
        return [Part("markdown", summary)] if summary else []
    return content_parts(summary)


def content_parts(content: Any, as_code: bool = False) -> list[Part]:
    """A message's `content` (string or block list) as parts; images become placeholders."""
    kind = "code" if as_code else "prose"
    if isinstance(content, str):
        return [Part(kind, content)] if content else []
    if content is None:
        return []
    if not isinstance(content, list):
        return [Part("note", f"content is {describe(content)}:"), Part("code", json_pretty(content), "json")]
    parts: list[Part] = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(Part("code", json_pretty(block), "json"))
            continue
        btype = block.get("type")
        if btype == "text":
            text = as_str(block.get("text"))
            if text:
                parts.append(Part(kind, text))
        elif btype == "image":
            parts.append(image_part(block))
        else:
            parts.append(Part("note", f"[{js_string(btype)} block]"))
            parts.append(Part("code", json_pretty(block), "json"))
    if as_code:  # a tool's output reads best as one block
        merged: list[Part] = []
        for part in parts:
            if part.kind == "code" and merged and merged[-1].kind == "code" and not part.lang and not merged[-1].lang:
                merged[-1] = Part("code", merged[-1].text + "\n" + part.text)
            else:
                merged.append(part)
        parts = merged
    return parts


def json_pretty(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        return as_str(value)


def describe(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"
