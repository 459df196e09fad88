"""Export of one path (root -> leaf): Markdown, one self-contained HTML file, or a new Pi session (Pi's fork).

`export_chunks` renders a piece at a time, `export_path` writes those pieces atomically (what the CLI and the
TUI call), `export_bytes` joins them (for stdout and tests). Markdown and HTML share one description of the path
(`build_document`): sections with plain, untrusted text parts, made a batch of entries at a time (build.py), so
that exporting a million-entry path holds one batch, not the path; each renderer escapes every string at the
moment it writes it (markdown.py, html.py). A `progress` callback hears (entries done, entries on the path)
after each batch and may raise (`ExportCancelled`) to stop: nothing is written then.

Decisions: tool calls are folded together with their result (a result whose call is not on the path is
folded on its own); thinking is left out unless asked for; images are a placeholder with the MIME type and
the decoded size, which HTML also embeds when the data is a real PNG, JPEG, GIF or WebP of at most
`html.EMBED_MAX` bytes (oh-my-pi blob references resolved); Markdown never carries a session's payloads;
timestamps are shown in UTC.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pitree import __version__
from pitree.ops.export.build import Builder, Progress, format_time, model_of
from pitree.ops.export.doc import (
    Document,
    ExportCancelled,
    ExportError,
    Part,
    Section,
    content_parts,
    image_placeholder,
    json_pretty,
)
from pitree.session.context import model_label
from pitree.session.context_size import ContextHeader, context_header
from pitree.session.entries import Node
from pitree.session.text import count, js_string
from pitree.session.tree import SessionTree
from pitree.session.usage import Usage
from pitree.store.session_file import EntryReader, SessionFileError

__all__ = [
    "Document",
    "ExportCancelled",
    "ExportError",
    "Part",
    "Progress",
    "Section",
    "content_parts",
    "format_time",
    "image_placeholder",
    "json_pretty",
]

FORMATS = ("md", "html", "jsonl")
CHUNK_BYTES = 1 << 20  # rendered text handed to the writer at a time


# ---- the document -----------------------------------------------------------------------------------------


def _usage_line(path: list[Node]) -> str:
    total = Usage()  # tokens as Pi 1.x sums them: the four parts, never a stored totalTokens
    for node in path:
        if node.usage is not None:
            total.add(node.usage)
    names = ("input", "output", "cache read", "cache write", "total")
    shown = " · ".join(f"{name} {int(v):,}" for name, v in zip(names, total.values, strict=False))
    return f"{shown} tokens · cost ${total.values[5]:.4f}"


def _context_line(ctx: ContextHeader) -> str:
    """The size the status bar and `pitree context` give: Pi's estimateProjectedContextTokens."""
    size = ctx.size
    how = (
        f"reply {size.usage_node.id}'s usage plus estimates of any messages after it"
        if size.usage_node is not None
        else "estimated from the messages: no usable reply usage"
    )
    return f"{count(ctx.messages, 'message')}; Pi's context size {size.tokens:,} tokens ({how})"


def build_document(
    tree: SessionTree, reader: EntryReader, leaf: Node | None, thinking: bool = False, progress: Progress | None = None
) -> Document:
    """The path root -> `leaf` (the file's leaf when None) for the Markdown and HTML renderers; its sections are
    made as they are iterated (once), reading the file a batch at a time."""
    leaf = leaf if leaf is not None else tree.leaf
    header = tree.header or {}
    path = tree.branch(leaf)
    ctx = context_header(tree, leaf, path)
    models: list[str] = []
    for node in path:
        name = model_of(node)
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
    try:
        builder = Builder(tree, reader, path, thinking, progress)
    except SessionFileError as exc:
        raise ExportError(str(exc)) from None
    return Document(title, meta, builder.sections())


# ---- rendering and writing --------------------------------------------------------------------------------


def _pieces(texts: Iterable[str]) -> Iterator[bytes]:
    """`texts` encoded, joined into pieces of about CHUNK_BYTES: few writes, little held."""
    held: list[str] = []
    size = 0
    for text in texts:
        held.append(text)
        size += len(text)
        if size >= CHUNK_BYTES:
            yield "".join(held).encode()
            held.clear()
            size = 0
    if held:
        yield "".join(held).encode()


def _line_pieces(lines: Iterable[bytes]) -> Iterator[bytes]:
    """Lines (without newlines) as pieces of about CHUNK_BYTES, each line ended."""
    held: list[bytes] = []
    size = 0
    for line in lines:
        held.append(line)
        size += len(line) + 1
        if size >= CHUNK_BYTES:
            yield b"\n".join(held) + b"\n"
            held.clear()
            size = 0
    if held:
        yield b"\n".join(held) + b"\n"


def export_chunks(
    tree: SessionTree,
    reader: EntryReader,
    leaf: Node | None,
    fmt: str,
    thinking: bool = False,
    progress: Progress | None = None,
    **fork_options: Any,
) -> Iterator[bytes]:
    """The exported file's bytes, a piece at a time. `fork_options` (jsonl only) go to `fork.iter_fork_lines`
    (session_id, timestamp). Raises ExportError (also when the file changed under it), or what `progress`
    raises."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r} (choose from {', '.join(FORMATS)})")
    try:
        if fmt == "jsonl":
            from pitree.ops.export.fork import iter_fork_lines

            header = tree.header or {}
            cwd = header.get("cwd")
            options: dict[str, Any] = {
                "parent_session": os.path.abspath(reader.path),
                "cwd": cwd if cwd is not None else os.getcwd(),  # Pi: header.cwd ?? process.cwd()
                **fork_options,
            }
            with reader.raw_reader() as raw:
                lines = iter_fork_lines(tree, raw, leaf, progress=progress, **options)
                yield from _line_pieces(lines)
            return
        doc = build_document(tree, reader, leaf, thinking, progress)
        if fmt == "md":
            from pitree.ops.export.markdown import markdown_chunks

            yield from _pieces(markdown_chunks(doc))
        else:
            from pitree.ops.export.html import html_chunks

            yield from _pieces(html_chunks(doc))
    except SessionFileError as exc:
        raise ExportError(str(exc)) from None


def export_bytes(
    tree: SessionTree,
    reader: EntryReader,
    leaf: Node | None,
    fmt: str,
    thinking: bool = False,
    **fork_options: Any,
) -> bytes:
    """The whole exported file (see `export_chunks`): for stdout and tests; files are written a piece at a time."""
    return b"".join(export_chunks(tree, reader, leaf, fmt, thinking, **fork_options))


def export_path(
    tree: SessionTree,
    reader: EntryReader,
    leaf: Node | None,
    fmt: str,
    out: Path | str,
    thinking: bool = False,
    force: bool = False,
    progress: Progress | None = None,
) -> Path:
    """Export root -> `leaf` of the session `reader` reads to the file `out` (atomically); returns `out`.

    Refuses (ExportError) an existing `out` without `force`, and always `out` equal to the source file. If the
    export fails or `progress` raises, the half-written temporary file is removed and `out` is left as it was."""
    from pitree.store.export_file import ExportFileError, check_target, write_export

    out = Path(out)
    try:
        check_target(out, force=force, source=reader.path)
        chunks = export_chunks(tree, reader, leaf, fmt, thinking, progress)
        return write_export(out, chunks, force=force, source=reader.path)
    except ExportFileError as exc:
        raise ExportError(str(exc)) from None
