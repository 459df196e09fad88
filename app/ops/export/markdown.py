"""Markdown rendering of an export `Document` (GitHub-flavoured: folds are `<details>` blocks).

Session text is untrusted: control characters, escapes and bidi overrides are made visible (`make_safe`)
everywhere. A user's text and pitree's own notes are kept literal: every character Markdown or HTML could act
on is backslash-escaped (so `**x**`, `[bold]x[/bold]`, `<script>` or a link definition show as typed). What a
model wrote as Markdown (assistant text, thinking, summaries) stays Markdown, so its code blocks and lists
render, but raw HTML cannot: outside code, `<` and `&` become entities; its headings are demoted below the
export's own; a code block it leaves open is closed, so it cannot swallow the rest of the file. Verbatim blocks
use a backtick fence longer than any backtick run in them; text inside the HTML `<summary>` is HTML-escaped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

from pitree.ops.export.doc import Document, Part, Section
from pitree.session.text import make_safe

# Characters that start inline syntax anywhere in a line (GitHub adds ~ for strikethrough, $ for math).
_INLINE = re.compile(r"([\\`*_\[\]<>&|~$])")
# At the start of a line they would open a heading, list, setext underline or ordered list.
_LINE_START = re.compile(r"^([#+\-=])|^(\d+)([.)])")


def escape_line(line: str) -> str:
    line = _INLINE.sub(r"\\\1", line)
    stripped = line.lstrip(" \t")
    lead = line[: len(line) - len(stripped)]
    stripped = _LINE_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), stripped)
    # Leading blanks would be dropped or turn the line into an indented code block.
    lead = lead.replace("\t", "    ").replace(" ", "&nbsp;")
    return lead + stripped.rstrip()


def prose(text: str) -> str:
    """Running text as literal Markdown: paragraphs stay paragraphs, single line breaks are hard breaks."""
    paragraphs: list[list[str]] = [[]]
    for line in make_safe(text).split("\n"):
        if line.strip():
            paragraphs[-1].append(escape_line(line))
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n\n".join("\\\n".join(p) for p in paragraphs if p)


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+).*?(?<!`)\1(?!`)")
_HEADING = re.compile(r"^( {0,3})(#{1,6})(?=\s|$)")


def _no_html(line: str) -> str:
    """`<` and `&` as entities outside inline code spans: no raw HTML, no entity decoding to hidden characters."""
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(line):
        out.append(line[pos : m.start()].replace("&", "&amp;").replace("<", "&lt;"))
        out.append(m.group(0))
        pos = m.end()
    out.append(line[pos:].replace("&", "&amp;").replace("<", "&lt;"))
    return "".join(out)


def markdown_text(text: str) -> str:
    """A model's own Markdown, kept as Markdown but unable to produce HTML or break the export's structure."""
    out: list[str] = []
    fence: str | None = None  # the fence that opened the code block we are in
    indented_ok = True  # a 4-space line here would be an indented code block (after a blank or another one)
    for line in make_safe(text).split("\n"):
        m = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip(" `~"):
                fence = None
            continue
        if m:
            fence = m.group(1)
            out.append(line)
        elif indented_ok and (line.startswith("    ") or line.startswith("\t")) and line.strip():
            out.append(line)  # code: shown verbatim by any renderer
            continue
        else:
            out.append(_HEADING.sub(lambda h: h.group(1) + "#" * min(6, len(h.group(2)) + 3), _no_html(line)))
        indented_ok = not line.strip()
    if fence is not None:
        out.append(fence)
    return "\n".join(out).strip("\n")


def inline(text: str) -> str:
    """One line of text for a heading or list item."""
    return escape_line(" ".join(make_safe(text, keep_newlines=False).split()))


def fence(text: str, lang: str = "") -> str:
    """A fenced block that nothing in `text` can close."""
    text = make_safe(text)
    runs = re.findall(r"`+", text)
    ticks = "`" * max(3, max((len(r) for r in runs), default=0) + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def summary_html(text: str) -> str:
    return html.escape(" ".join(make_safe(text, keep_newlines=False).split()), quote=True)


def render_part(part: Part) -> str:
    if part.kind == "prose":
        return prose(part.text)
    if part.kind == "markdown":
        return markdown_text(part.text)
    if part.kind == "code":
        return fence(part.text, part.lang)
    if part.kind in ("note", "image"):  # Markdown never embeds an image's data
        return "*" + inline(part.text) + "*"
    body = "\n\n".join(render_part(p) for p in part.parts)
    # The blank lines end the HTML block, so the body is read as Markdown again (as GitHub does).
    return f"<details><summary>{summary_html(part.text)}</summary>\n\n{body}\n\n</details>"


def render_section(section: Section) -> str:
    bits = [section.title]
    if section.time:
        bits.append(section.time)
    if section.model:
        bits.append(section.model)
    if section.label:
        bits.append(f"label: {section.label}")
    bits.append(section.entry_id)
    head = " · ".join(inline(b) for b in bits)
    if section.compact:
        line = f"- *{head}*"
        if section.parts:
            line += "\n\n" + "\n\n".join(render_part(p) for p in section.parts)
        return line
    out = [f"### {head}"]
    out.extend(render_part(p) for p in section.parts)
    return "\n\n".join(out)


def markdown_chunks(doc: Document) -> Iterator[str]:
    """The file a section at a time (the sections are made as they are read: see build.py)."""
    yield f"# {inline(doc.title)}\n\n"
    yield "\n".join(f"- **{inline(k)}:** {inline(v)}" for k, v in doc.meta) + "\n\n---"
    for section in doc.sections:
        yield "\n\n" + render_section(section)
    yield "\n"


def render_markdown(doc: Document) -> str:
    return "".join(markdown_chunks(doc))
